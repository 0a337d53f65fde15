"""The gateway takes the API's status role unless it forwards dealt states (the page, which
draws them, is the station's, with the full role); the units and `mjtable install` give each
user the matching socket group."""

from __future__ import annotations

from pathlib import Path

from controller.service.config import parse_config
from controller.service.config_gateway import gateway_needs_dealt_states
from controller.service.install import GATEWAY_FULL_ROLE, install

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path("/opt/mjtable/current/bin/mjtable")
HASH = "sha256:" + "0" * 64
GATEWAY = '[gateway]\nhost = "broker.floor"\n'
RULES_LAYER = '[gateway.rules_layer]\ntopic = "mjtable-rules/7/dealt"\nusername = "rules"\n'
WEB = f'[station]\ntokens = {{ technician = "{HASH}" }}\n'


def config_text(*sections: str) -> str:
    example = (ROOT / "udev" / "config.example.toml").read_text(encoding="utf-8")
    return example + "\n" + "".join(sections)


def needs(*sections: str) -> bool:
    config = parse_config(config_text(*sections).encode())
    assert config.gateway is not None
    return gateway_needs_dealt_states(config.gateway)


def test_the_status_role_unless_the_gateway_forwards_dealt_states() -> None:
    assert not needs(GATEWAY)
    assert needs(GATEWAY, RULES_LAYER)
    assert not needs(GATEWAY, WEB)  # the page is the station's


def test_the_unit_joins_the_status_group_and_the_configuration_readers_only() -> None:
    unit = (ROOT / "udev" / "mjtable-gateway.service").read_text(encoding="utf-8")
    groups = [line for line in unit.splitlines() if line.startswith("SupplementaryGroups=")]
    assert groups == ["SupplementaryGroups=mjtable-status mjtable-config"]
    station = (ROOT / "udev" / "mjtable-station.service").read_text(encoding="utf-8")
    groups = [line for line in station.splitlines() if line.startswith("SupplementaryGroups=")]
    assert groups == ["SupplementaryGroups=mjtable mjtable-config"]  # the full role: the picture


def installed(tmp_path: Path, *sections: str) -> Path:
    (tmp_path / "etc" / "mjtable").mkdir(parents=True)
    (tmp_path / "etc" / "mjtable" / "config.toml").write_text(config_text(*sections))
    install(tmp_path, exec_path=PROGRAM, start=False, commands=False)
    return tmp_path / GATEWAY_FULL_ROLE


def test_install_adds_the_full_role_only_when_needed(tmp_path: Path) -> None:
    assert not installed(tmp_path / "plain", GATEWAY).exists()
    assert not installed(tmp_path / "web", GATEWAY, WEB).exists()
    dropin = installed(tmp_path / "rules", GATEWAY, RULES_LAYER)
    assert "SupplementaryGroups=mjtable\n" in dropin.read_text(encoding="utf-8")
