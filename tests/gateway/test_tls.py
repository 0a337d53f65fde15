"""TLS to the broker: a CA and the broker's certificate made here with openssl, a TLS
listener on mosquitto, the gateway checking the broker against the CA."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.floorsim import SimTable
from gateway.mosquitto import ListenerTls, Mosquitto
from tests.gateway.conftest import USERS, doc_acl, need_mosquitto, sim_table, wait_link
from tests.gateway.watcher import Watcher


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(directory: Path, name: str) -> tuple[Path, Path, Path]:
    """A CA and a certificate for 127.0.0.1 signed by it: (ca, cert, key)."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test's certificates (Debian: openssl)")
    directory.mkdir(parents=True)
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-subj",
        f"/CN={name} test CA",
        cwd=directory,
    )
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "broker.key",
        "-out",
        "broker.csr",
        "-subj",
        "/CN=127.0.0.1",
        cwd=directory,
    )
    (directory / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", "broker.pem", "-extfile", "san.ext",
            cwd=directory)  # fmt: skip
    return directory / "ca.pem", directory / "broker.pem", directory / "broker.key"


@pytest.fixture
def tls_broker(floor_dir: Path) -> Iterator[tuple[Mosquitto, Path]]:
    need_mosquitto()
    ca, cert, key = make_ca(floor_dir / "pki", "floor")
    server = Mosquitto(
        floor_dir / "mosquitto", users=USERS, acl=doc_acl(), tls=ListenerTls(ca, cert, key)
    )
    server.start()
    try:
        yield server, ca
    finally:
        server.stop()


def gateway_with(floor_dir: Path, broker: Mosquitto, ca: Path) -> SimTable:
    table = sim_table(floor_dir, broker, f'[gateway.tls]\nca = "{ca}"\n')
    table.start_service()
    table.wait_service()
    wait_link(table)
    table.start_gateway()
    return table


def test_a_fault_reaches_the_floor_over_tls(
    tls_broker: tuple[Mosquitto, Path], floor_dir: Path
) -> None:
    broker, ca = tls_broker
    table = gateway_with(floor_dir, broker, ca)
    watcher = Watcher(broker.port, "floor", USERS["floor"], ca=str(ca))
    try:
        watcher.subscribe("mjtable/#")
        watcher.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"online")
        table.control_call(op="board", verb="inject", args=["estop"])
        got = watcher.topic("mjtable/7/events/fault", timeout=10)
        assert got.json()["event"]["code"] == "ESTOP"
        assert "connected to the MQTT broker at mqtts://gateway@127.0.0.1" in table.tail(
            "gateway.log", 40
        )
    finally:
        watcher.close()
        table.stop()


def test_a_broker_signed_by_another_ca_is_refused_in_words(
    tls_broker: tuple[Mosquitto, Path], floor_dir: Path
) -> None:
    broker, _ = tls_broker
    other, _, _ = make_ca(floor_dir / "other", "other")
    table = gateway_with(floor_dir, broker, other)
    try:
        deadline = time.monotonic() + 20
        while "its TLS certificate is not trusted" not in table.tail("gateway.log", 40):
            assert time.monotonic() < deadline, table.tail("gateway.log", 40)
            time.sleep(0.1)
        assert "connected to the MQTT broker" not in table.tail("gateway.log", 40)
    finally:
        table.stop()
