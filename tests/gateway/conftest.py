"""Real parts for the gateway's tests: a mosquitto of their own, a `mjtable run --sim` core,
`mjtable gateway` processes and paho subscribers.

mosquitto (Debian's package) must be installed: on a developer's machine without it these
tests are skipped with the command that installs it; under CI=true a missing mosquitto fails.
The broker's users and ACL are the ones docs/floor.md shows.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.api.client import ApiClient, ClientError
from gateway.floorsim import BrokerAddress, SimTable
from gateway.mosquitto import INSTALL_HINT, Mosquitto, mosquitto_path, passwd_path

ROOT = Path(__file__).resolve().parents[2]
FLOOR_DOC = ROOT / "docs" / "floor.md"

#: The users of the ACL in docs/floor.md, with test passwords.
USERS = {"gateway": "gw-secret", "floor": "floor-secret", "rules": "rules-secret"}


def doc_acl() -> str:
    """The mosquitto ACL shown in docs/floor.md (its one ```acl block)."""
    found = re.findall(r"```acl\n(.*?)```", FLOOR_DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(found) == 1, "docs/floor.md should show exactly one ACL (```acl)"
    return str(found[0])


def need_mosquitto() -> None:
    if mosquitto_path() is not None and passwd_path() is not None:
        return
    message = f"mosquitto is missing: {INSTALL_HINT}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def floor_dir() -> Iterator[Path]:
    """A directory with a short path (Unix socket paths are limited to 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="mjgw-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def broker(floor_dir: Path) -> Iterator[Mosquitto]:
    """mosquitto on loopback with the documented users and ACL; stopped by its pid."""
    need_mosquitto()
    server = Mosquitto(floor_dir / "mosquitto", users=USERS, acl=doc_acl(), persistent=True)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def sim_table(floor_dir: Path, broker: Mosquitto, gateway: str = "", number: int = 7) -> SimTable:
    address = BrokerAddress(broker.host, broker.port, "gateway", USERS["gateway"])
    return SimTable(floor_dir, number, address, seed=21, gateway=gateway)


def wait_link(table: SimTable, timeout: float = 30.0) -> None:
    """Until the table's service answers and its board is up."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with ApiClient(table.socket) as client:
                if client.status().link_up:
                    return
        except ClientError:
            pass
        assert time.monotonic() < deadline, f"the service never came up: {table.tail()}"
        time.sleep(0.05)


@pytest.fixture
def table(floor_dir: Path, broker: Mosquitto) -> Iterator[SimTable]:
    """Table 7: a real `mjtable run --sim` and its `mjtable gateway` on ``broker``."""
    one = sim_table(floor_dir, broker)
    try:
        one.start_service()
        one.wait_service()
        wait_link(one)
        one.start_gateway()
        yield one
    finally:
        one.stop()
