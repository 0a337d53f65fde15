"""mjtable controller: the deal cycle, the service, its API and audit log, the CLI."""

__version__ = "0.1.0"
