"""The table's own display logs in without a token: the kiosk's browser is known by its user.

The dealer's view runs on the table's touch display in Chromium's kiosk mode, started by the
unit ``mjtable-kiosk.service`` (a kiosk compositor, cage) as a user of its own,
``[station] kiosk_user``. Nobody types a token there: ``GET /kiosk`` opens a dealer's session
for a connection that comes from this machine's loopback **and** whose socket belongs to that
user, which the kernel tells (``/proc/self/net/tcp`` and ``tcp6``: each TCP socket of this
network namespace with its owner's uid, the way identd answers). Any other connection is
refused, a reverse proxy on the same machine included (its sockets are its own user's), so
the kiosk's login grants nothing to the network.
"""

from __future__ import annotations

import ipaddress
import pwd
from pathlib import Path

#: The kernel's tables of TCP sockets, IPv4 and IPv6.
TCP_TABLES = (Path("/proc/self/net/tcp"), Path("/proc/self/net/tcp6"))


def _hex_address(field: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """``0100007F:1F90`` (the kernel's, host byte order by 32-bit word) as (address, port)."""
    address, port = field.split(":")
    raw = bytes.fromhex(address)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.ip_address(words)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped, int(port, 16)
    return ip, int(port, 16)


def socket_owner(local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    """The uid owning the TCP socket whose own end is ``local`` and whose peer is ``remote``
    (the peer's socket, as this machine sees it); None when no such socket is listed."""
    want_local = (ipaddress.ip_address(local[0]), local[1])
    want_remote = (ipaddress.ip_address(remote[0]), remote[1])
    for table in TCP_TABLES:
        try:
            lines = table.read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 8:
                continue
            if (_hex_address(fields[1]), _hex_address(fields[2])) == (want_local, want_remote):
                return int(fields[7])
    return None


def uid_of(user: str) -> int | None:
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return None


def is_kiosk(
    user: str | None, peer: tuple[str, int] | None, server: tuple[str, int] | None
) -> bool:
    """Whether the connection from ``peer`` to ``server`` is the kiosk's browser: ``user``
    configured and existing, the peer on loopback, its socket that user's."""
    if user is None or peer is None or server is None:
        return False
    if not ipaddress.ip_address(peer[0]).is_loopback:
        return False
    uid = uid_of(user)
    return uid is not None and socket_owner(peer, server) == uid
