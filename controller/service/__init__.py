"""The service wing: the table's long-running process (`mjtable run`) and what it is made of.

One job per module:

- ``runner``: the service itself (:class:`~controller.service.runner.Service`): opens the
  audit log, recovers from a restart, builds the controller, connects the board, the
  panel and the API socket, tells systemd it is ready, and stops them all in order;
- ``builder``: the one place that decides what the host talks to (the configured port, a
  pty to the simulated board with ``--sim``, ``socket://``) and makes the board link;
- ``config``: the configuration file, validated (docs/config.md), its sections built from
  ``config_fields`` (the base and the shared checks), with ``config_api`` (the ``[api]``
  section, which makes the API server it describes) and ``config_gateway`` in files of their
  own, and ``config_problems`` saying what is wrong in one line per problem; ``paths``: where
  the service's files are by default;
- ``leds``: the panel's LEDs, written from their own thread;
- ``systemd``: readiness and status lines for systemd, and the journal's log format;
- ``embedded``: the whole table in one process (simulated board, link, controller), for
  ``mjtable demo`` and the tests;
- ``simcontrol``: the control socket of a simulated service (``--sim-control``);
- ``install``: puts the configuration, udev rules, unit and system user in place.

The command line (cli/) uses this wing; nothing here imports the command line.
"""
