"""docs/web.md's configuration example is valid, and shows the section the station reads."""

from __future__ import annotations

import re
from pathlib import Path

from controller.service.config import parse_config

DOC = Path(__file__).resolve().parents[2] / "docs" / "web.md"
BASE = b'[table]\nnumber = 7\n[rules]\nprofile = "wenzhou"\n'


def test_the_documented_sections_are_valid() -> None:
    block, kiosk = re.findall(r"```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    shown = parse_config(BASE + kiosk.encode()).station
    assert shown is not None and shown.kiosk_user == "mjtable-kiosk"
    config = parse_config(BASE + block.encode())
    web = config.station
    assert web is not None
    assert set(web.tokens) == {"viewer", "dealer", "technician"}
    assert web.faces == [] and web.cert is None and web.port == 8080


def test_the_screenshots_the_doc_shows_are_committed() -> None:
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", DOC.read_text(encoding="utf-8"))
    assert images == ["web.png", "dealer.png", "dealer-fr.png"]
    for image in images:
        path = DOC.parent / image
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
