"""The page's support bundle: the technician's download button runs `mjtable support-bundle`
with the station's configuration and hands the archive over; the viewer has no button and
is refused; a forged form is refused; no secret of the configuration is in the archive."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from station.view import TableView
from station.web.auth import hash_token
from station.web.page import TableInfo
from station.web.server import WebServer
from tests.station.client import Client, hidden_csrf
from tests.station.test_server import TECHNICIAN, VIEWER, Settings, status


@pytest.fixture
def server(tmp_path: Path) -> Iterator[WebServer]:
    config = tmp_path / "config.toml"
    tokens = Settings().tokens
    config.write_text(
        '[table]\nnumber = 7\n[rules]\nprofile = "wenzhou"\n'
        f'[api]\nsocket = "{tmp_path / "api.sock"}"\n'
        f'[audit]\npath = "{tmp_path / "audit" / "audit.jsonl"}"\n'
        "[station]\nport = 0\n"
        f'tokens = {{ viewer = "{tokens["viewer"]}", technician = "{tokens["technician"]}" }}\n'
    )
    view = TableView()
    view.set_status(status())
    one = WebServer(
        Settings(),
        view,
        table=TableInfo("7", "Table 7", "0.1.0"),
        socket_path=str(tmp_path / "api.sock"),
        config_path=str(config),
    )
    one.start()
    yield one
    one.stop()


def test_the_technician_downloads_the_bundle_without_a_secret(server: WebServer) -> None:
    assert server.port is not None
    viewer = Client(server.port)
    viewer.login(VIEWER)
    page = viewer.get("/").body
    assert 'id="bundle"' not in page
    assert viewer.post("/bundle", {"csrf": hidden_csrf(page)}).status == 403

    tech = Client(server.port)
    tech.login(TECHNICIAN)
    page = tech.get("/").body
    assert 'id="bundle"' in page and "Download the support bundle" in page
    assert tech.post("/bundle", {"csrf": "forged"}).status == 403
    got = tech.post("/bundle", {"csrf": hidden_csrf(page)}, timeout=150)
    assert got.status == 200, got.body
    assert got.headers["Content-Type"] == "application/gzip"
    disposition = got.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="mjtable-support-table7-')
    assert disposition.endswith('.tar.gz"')
    with tarfile.open(fileobj=io.BytesIO(got.data), mode="r:gz") as archive:
        files = {
            m.name.split("/")[-1]: archive.extractfile(m).read()  # type: ignore[union-attr]
            for m in archive.getmembers()
            if m.isfile()
        }
    manifest = json.loads(files["manifest.json"])
    assert manifest["table"] == "7"
    config = json.loads(files["config.json"])
    assert sorted(config["withheld"]) == ["station.tokens.technician", "station.tokens.viewer"]
    for secret in (hash_token(VIEWER), hash_token(TECHNICIAN)):
        assert not any(secret.encode() in data for data in files.values())
        assert not any(secret.split(":")[1].encode() in data for data in files.values())
