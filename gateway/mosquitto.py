"""A mosquitto broker of our own on loopback, for `mjtable floor-sim`, the tests and the bench.

It writes a configuration (a loopback listener, users with a password file made by
``mosquitto_passwd``, an ACL, TLS files when given) into a directory, starts
``/usr/sbin/mosquitto`` (Debian's package ``mosquitto``) and stops it by its pid. Never a
production broker: the floor's is the site's own.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

MOSQUITTO = "/usr/sbin/mosquitto"
INSTALL_HINT = "install the broker: apt-get install -y mosquitto (Debian's package)"
START_TIMEOUT_S = 10.0


class MosquittoMissing(RuntimeError):
    def __init__(self) -> None:
        super().__init__(f"no mosquitto at {MOSQUITTO}: {INSTALL_HINT}")


def mosquitto_path() -> str | None:
    """The broker's program, if installed."""
    if os.access(MOSQUITTO, os.X_OK):
        return MOSQUITTO
    return shutil.which("mosquitto")


def passwd_path() -> str | None:
    return shutil.which("mosquitto_passwd") or (
        "/usr/bin/mosquitto_passwd" if os.access("/usr/bin/mosquitto_passwd", os.X_OK) else None
    )


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class ListenerTls:
    """The broker's side of TLS: its CA, certificate and key (PEM files)."""

    ca: Path
    cert: Path
    key: Path
    require_certificate: bool = False


@dataclass
class Mosquitto:
    directory: Path
    port: int = 0
    users: dict[str, str] = field(default_factory=dict)  # none: anonymous clients allowed
    acl: str | None = None
    tls: ListenerTls | None = None
    host: str = "127.0.0.1"
    persistent: bool = False  # keep sessions and queued messages across a restart
    proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def log_path(self) -> Path:
        return self.directory / "mosquitto.log"

    def write_config(self) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self.port:
            self.port = free_port()
        lines = [
            f"listener {self.port} {self.host}",
            f"allow_anonymous {'false' if self.users else 'true'}",
            f"persistence {'true' if self.persistent else 'false'}",
            f"persistence_location {self.directory}/",
            f"log_dest file {self.log_path}",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "connection_messages true",
            "max_queued_messages 100000",
            "max_inflight_messages 0",
        ]
        if os.geteuid() == 0:
            lines.append("user root")  # keep reading our files, root-owned, mode 600
        if self.users:
            lines.append(f"password_file {self._password_file()}")
        if self.acl is not None:
            acl = self.directory / "acl"
            acl.write_text(self.acl)
            os.chmod(acl, 0o600)
            lines.append(f"acl_file {acl}")
        if self.tls is not None:
            lines += [
                f"cafile {self.tls.ca}",
                f"certfile {self.tls.cert}",
                f"keyfile {self.tls.key}",
                f"require_certificate {'true' if self.tls.require_certificate else 'false'}",
            ]
        path = self.directory / "mosquitto.conf"
        path.write_text("\n".join(lines) + "\n")
        return path

    def _password_file(self) -> Path:
        tool = passwd_path()
        if tool is None:
            raise MosquittoMissing()
        path = self.directory / "passwd"
        path.unlink(missing_ok=True)
        path.touch(mode=0o600)
        for user, password in self.users.items():
            subprocess.run([tool, "-b", str(path), user, password], check=True, capture_output=True)
        return path

    def start(self) -> None:
        program = mosquitto_path()
        if program is None:
            raise MosquittoMissing()
        config = self.write_config()
        self.proc = subprocess.Popen(
            [program, "-c", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"mosquitto exited with status {self.proc.returncode}: {self.log_tail()}"
                )
            with (
                contextlib.suppress(OSError),
                socket.create_connection((self.host, self.port), timeout=0.5),
            ):
                return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mosquitto did not listen on {self.port}: {self.log_tail()}")
            time.sleep(0.05)

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)

    def log_tail(self, lines: int = 20) -> str:
        try:
            return " | ".join(self.log_path.read_text().splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def __enter__(self) -> Mosquitto:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
