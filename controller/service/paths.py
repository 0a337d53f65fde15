"""Where the service's files are on the table's computer, written once.

Kept free of imports: the `mjtable` parser names the API socket in its help, and
building it must not load the configuration's models.
"""

from __future__ import annotations

#: The configuration `mjtable run` reads without --config (the shipped unit names it too).
DEFAULT_CONFIG_PATH = "/etc/mjtable/config.toml"
#: The local API's Unix socket (api.socket).
DEFAULT_SOCKET_PATH = "/run/mjtable/api.sock"
#: The audit log (audit.path).
DEFAULT_AUDIT_PATH = "/var/lib/mjtable/audit.jsonl"
#: The board's port (board.port): the Pi's own UART, wired to the Pico's UART0 (docs/firmware.md).
DEFAULT_BOARD_PORT = "/dev/serial0"
