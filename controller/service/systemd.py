"""What the service says to systemd: readiness, status and watchdog lines, the watchdog's
interval, and the journal's log format."""

from __future__ import annotations

import logging
import os
import socket
import sys
from typing import ClassVar

log = logging.getLogger("mjtable.service")


def sd_notify(message: str) -> bool:
    """Send a state line to systemd (Type=notify); False when not under systemd."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(address)
            sock.sendall(message.encode())
        except OSError as exc:
            log.warning("sd_notify failed: %s", exc)
            return False
    return True


def watchdog_interval() -> float | None:
    """The unit's ``WatchdogSec=`` in seconds, when systemd expects ``WATCHDOG=1`` from this
    process (``WATCHDOG_USEC`` set, and ``WATCHDOG_PID``, if set, this process); else None."""
    usec = os.environ.get("WATCHDOG_USEC", "")
    pid = os.environ.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) == 0:
        return None
    if pid and (not pid.isdigit() or int(pid) != os.getpid()):
        return None
    return int(usec) / 1_000_000


class JournalFormatter(logging.Formatter):
    """``<N>`` priority prefixes that journald understands on stderr, plain otherwise."""

    PRIORITY: ClassVar[dict[int, int]] = {
        logging.CRITICAL: 2,
        logging.ERROR: 3,
        logging.WARNING: 4,
        logging.INFO: 6,
        logging.DEBUG: 7,
    }

    def __init__(self, journal: bool) -> None:
        plain = "%(asctime)s %(levelname)s %(name)s: %(message)s"
        super().__init__("%(name)s: %(message)s" if journal else plain)
        self.journal = journal

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if not self.journal:
            return text
        prefix = f"<{self.PRIORITY.get(record.levelno, 6)}>"
        return "\n".join(prefix + line for line in text.splitlines())


def setup_logging(level: str) -> None:
    """Log to stderr: the journal's format under systemd (JOURNAL_STREAM set), plain otherwise."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JournalFormatter(journal=bool(os.environ.get("JOURNAL_STREAM"))))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The state machine library narrates every callback at INFO: keep the journal readable.
    logging.getLogger("transitions").setLevel(logging.WARNING)
