"""Where the service's files are on the table's computer, written once.

Kept free of heavy imports: the `mjtable` parser names the API socket in its help, and
building it must not load the configuration's models. The API's socket is the API's own fact
(controller/api/limits.py), named here with the service's other files.
"""

from __future__ import annotations

from controller.api.limits import DEFAULT_SOCKET_PATH

#: The configuration `mjtable run` reads without --config (the shipped unit names it too).
DEFAULT_CONFIG_PATH = "/etc/mjtable/config.toml"
#: The audit log (audit.path).
DEFAULT_AUDIT_PATH = "/var/lib/mjtable/audit.jsonl"
#: The board's port (board.port): the Pi's own UART, wired to the Pico's UART0 (docs/firmware.md).
DEFAULT_BOARD_PORT = "/dev/serial0"

__all__ = ["DEFAULT_AUDIT_PATH", "DEFAULT_BOARD_PORT", "DEFAULT_CONFIG_PATH", "DEFAULT_SOCKET_PATH"]
