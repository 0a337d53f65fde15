"""mjtable controller, in wings: the deal cycle (cycle/), its API (api/), the audit log
(audit/), the service that runs them (service/), and on the top floor the command line
(cli/), which nothing in the project imports."""

__version__ = "0.1.0"
