"""The table's controller, in wings, each a subpackage with one job:

- ``cycle/``: the deal cycle: the state machine and its table of states, deadlines, the
  controller's own faults, reconciliation with the board's report, what it publishes;
- ``api/``: the local API: its messages and schemas, the server (roles, limits), the client;
- ``audit/``: the audit log: record format, writer, sealing, verification, replay, recovery;
- ``service/``: the long-running service that assembles them: the builder (the one place
  that makes a board link or a simulated board), configuration, systemd, the panel's LEDs;
- ``firmware/``: the board's firmware seen from the host: build, flash, verify.

The command line that drives all this is the top-level ``cli`` package, which nothing
imports; the floor gateway (``gateway``) uses only ``api``. See docs/layout.md.
"""

__version__ = "0.1.0"
