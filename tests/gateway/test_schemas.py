"""docs/floor/*.json are what the gateway's models generate; the doc's examples fit them."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from controller.api.messages import schema_text
from controller.audit.heads import load_heads
from controller.service.config import ConfigError, parse_config
from gateway import __main__ as cli
from gateway.discovery import discovery_configs
from gateway.payloads import (
    AuditHead,
    DiscoveryConfig,
    FloorEvent,
    Topics,
    check_schemas,
    floor_schemas,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "floor"
DOC = ROOT / "docs" / "floor.md"


def test_committed_schemas_match_the_models() -> None:
    assert check_schemas(DOCS) == [], "run `python -m gateway --write docs/floor`"
    for name, schema in floor_schemas().items():
        assert (DOCS / name).read_text(encoding="utf-8") == schema_text(schema)


def test_check_sees_a_difference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--write", str(tmp_path)]) == 0
    assert cli.main(["--check", str(tmp_path)]) == 0
    (tmp_path / "event.json").write_text("{}\n")
    (tmp_path / "stale.json").write_text("{}\n")
    assert cli.main(["--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "event.json: differs from the models" in err and "stale.json" in err


def doc_json(key: str) -> str:
    """The doc's one JSON example with ``key`` at its top."""
    found = re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    (example,) = [text for text in found if f'"{key}":' in text.split("\n")[0]]
    return str(example)


def test_the_docs_event_example_fits() -> None:
    event = FloorEvent.model_validate_json(doc_json("run"))
    assert event.event.type == "fault"


def test_the_docs_audit_head_example_fits_and_is_a_heads_line(tmp_path: Path) -> None:
    example = doc_json("at")
    head = AuditHead.model_validate_json(example)
    path = tmp_path / "heads.jsonl"
    path.write_text(json.dumps(json.loads(example)) + "\n", encoding="utf-8")
    (floor_head,) = load_heads(path)
    assert (floor_head.table, floor_head.seq, floor_head.hash) == (head.table, head.seq, head.hash)


def test_discovery_configs_fit_their_schema() -> None:
    configs = discovery_configs("homeassistant", Topics("mjtable", "7"), "Table 7")
    assert len(configs) == 5  # state, fault, cycles, the board link, the panel
    for topic, config in configs.items():
        assert topic.startswith("homeassistant/") and topic.endswith("/config")
        DiscoveryConfig.model_validate_json(config.model_dump_json(exclude_none=True))


def minimal(extra: str) -> bytes:
    return ('[table]\nnumber = 7\n[rules]\nprofile = "wenzhou"\n' + extra).encode()


def test_the_docs_gateway_section_loads() -> None:
    (block,) = re.findall(r"```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    config = parse_config(minimal(block))
    assert config.gateway is not None
    assert config.gateway.tls is not None and config.gateway.rules_layer is not None
    assert tomllib.loads(block)["gateway"]["port"] == config.gateway.port


def test_gateway_section_checks() -> None:
    assert parse_config(minimal("")).gateway is None
    defaults = parse_config(minimal('[gateway]\nhost = "b"\n')).gateway
    assert defaults is not None and defaults.port == 1883 and defaults.discovery
    with pytest.raises(ConfigError, match=r"gateway\.host: missing"):
        parse_config(minimal("[gateway]\nport = 1\n"))
    with pytest.raises(ConfigError, match="under the floor's"):
        parse_config(
            minimal(
                '[gateway]\nhost = "b"\n[gateway.rules_layer]\ntopic = "mjtable/7/d"\n'
                'username = "r"\n'
            )
        )
    with pytest.raises(ConfigError, match="wildcards"):
        parse_config(minimal('[gateway]\nhost = "b"\ntopic_prefix = "a/#"\n'))
    with pytest.raises(ConfigError, match=r"gateway\.tls\.ca"):
        parse_config(minimal('[gateway]\nhost = "b"\n[gateway.tls]\nca = "rel.pem"\n'))
