"""The service configuration: examples load, each wrong key is named, the docs match the code."""

from __future__ import annotations

import grp
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from controller.service.config import (
    Config,
    ConfigError,
    check_environment,
    load_config,
    parse_config,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "config.md"


def docs_example() -> str:
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "docs/config.md should hold exactly one TOML example"
    return str(blocks[0])


def example_files() -> list[Path]:
    """The documented example and, once it exists, the installation's example."""
    found = [ROOT / "udev" / "config.example.toml"]
    return [p for p in found if p.is_file()]


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def dump(data: dict[str, dict[str, Any]]) -> bytes:
    lines = []
    for section, keys in data.items():
        lines.append(f"[{section}]")
        lines += [f"{key} = {toml_value(value)}" for key, value in keys.items()]
    return "\n".join(lines).encode() + b"\n"


def base() -> dict[str, dict[str, Any]]:
    return {
        "table": {"number": 7, "name": "Table 7"},
        "board": {"port": "/dev/serial0", "baud": 115200},
        "panel": {"vendor_id": 0x1209, "product_id": 0x4D4A, "debounce_ms": 30},
        "rules": {"profile": "wenzhou"},
        "dice": {"source": "board"},
        "deadlines": {"manifest": 8.0},
        "api": {"socket": "/run/mjtable/api.sock", "mode": "0660", "group": "mjtable"},
        "audit": {"path": "/var/lib/mjtable/audit.jsonl", "rotate_bytes": 1 << 20},
        "logging": {"level": "info"},
    }


def test_documented_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(docs_example(), encoding="utf-8")
    config = load_config(path)
    assert config.table.number == 7 and config.table.display_name == "Table 7"
    assert config.board is not None and config.board.port == "/dev/serial0"
    assert config.panel is not None and config.panel.vendor_id == 0x1209
    assert config.rules.profile == "wenzhou" and config.rules.builtin
    assert config.api.mode == 0o660 and config.api.group == "mjtable"
    assert config.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert config.source == path


def test_installation_examples_load() -> None:
    for path in example_files():
        config = load_config(path)
        assert config.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_minimal_file_takes_the_defaults() -> None:
    config = parse_config(b'[table]\nnumber = 3\n[rules]\nprofile = "sichuan"\n')
    assert config.board is None and config.panel is None
    assert config.table.display_name == "Table 3"
    assert config.dice.source == "board"
    assert config.deadlines.manifest == 10.0 and config.deadlines.dice == 30.0
    assert config.api.socket == "/run/mjtable/api.sock"
    assert config.api.mode == 0o660 and config.api.group is None
    assert config.audit.path == "/var/lib/mjtable/audit.jsonl"
    assert config.logging.level == "INFO"
    # a [board] that names no port: the Pi's UART, wired to the Pico's UART0
    board = parse_config(b'[table]\nnumber = 3\n[rules]\nprofile = "sichuan"\n[board]\n').board
    assert board is not None and board.port == "/dev/serial0" and board.baud == 115200


def test_values_in_their_accepted_forms() -> None:
    data = base()
    data["board"]["port"] = "socket://127.0.0.1:5000"
    data["logging"]["level"] = "debug"
    data["deadlines"]["clear"] = 3  # a whole number of seconds is fine for a float
    config = parse_config(dump(data))
    assert config.board is not None and config.board.port == "socket://127.0.0.1:5000"
    assert config.logging.level == "DEBUG"
    assert config.deadlines.clear == 3.0
    for mode, expected in (("0o640", 0o640), ("0600", 0o600), ("660", 0o660)):
        data["api"]["mode"] = mode
        assert parse_config(dump(data)).api.mode == expected
    octal = dump(base()).replace(b'mode = "0660"', b"mode = 0o640")
    assert parse_config(octal).api.mode == 0o640
    for url in ("loop://", "rfc2217://10.0.0.2:7000", "spy:///dev/ttyACM0"):
        data["board"]["port"] = url
        assert parse_config(dump(data)).board is not None


# (section, key, value or DELETE, the key path named, words expected in the message)
DELETE = object()
BAD: list[tuple[str, str, object, str, str]] = [
    ("table", "number", DELETE, "table.number", "missing; expected a whole number"),
    ("table", "number", 0, "table.number", "expected a whole number from 1 to 9999, got 0"),
    ("table", "number", "7", "table.number", "got '7'"),
    ("table", "name", "", "table.name", "expected a name of 1 to 64 characters"),
    ("table", "colour", "red", "table.colour", "unknown key; expected one of: number, name"),
    ("board", "port", "", "board.port", "expected a device path or a pyserial URL, got ''"),
    ("board", "port", "ttyACM0", "board.port", "a device path is absolute"),
    ("board", "port", "foo://x", "board.port", "pyserial knows no 'foo':// URLs"),
    ("board", "port", 5, "board.port", "got 5"),
    ("board", "baud", 0, "board.baud", "expected a baud rate"),
    ("board", "baud", 115200.0, "board.baud", "expected a baud rate"),
    ("board", "speed", 9600, "board.speed", "unknown key; expected one of: port, baud"),
    ("panel", "vendor_id", DELETE, "panel.vendor_id", "missing; expected a USB vendor id"),
    ("panel", "vendor_id", 0x10000, "panel.vendor_id", "from 0 to 0xFFFF"),
    ("panel", "product_id", -1, "panel.product_id", "expected a USB product id"),
    ("panel", "debounce_ms", 5000, "panel.debounce_ms", "milliseconds from 0 to 1000"),
    ("panel", "enabled", 1, "panel.enabled", "expected true or false, got 1"),
    ("panel", "serial", "", "panel.serial", "the panel's USB serial number"),
    ("rules", "profile", DELETE, "rules.profile", "missing; expected one of wenzhou"),
    ("rules", "profile", "riichi", "rules.profile", "got 'riichi' (no such file"),
    ("dice", "source", "cup", "dice.source", "expected one of board, controller, dealer"),
    ("deadlines", "manifest", 0, "deadlines.manifest", "greater than 0 and at most 3600, got 0"),
    ("deadlines", "clear", "5", "deadlines.clear", "expected seconds"),
    ("deadlines", "deal", 5, "deadlines.deal", "unknown key; expected one of: hello, manifest"),
    # a key of earlier versions: the board keeps that deadline and reports it
    ("deadlines", "shuffle", 90, "deadlines.shuffle", "the board keeps the shuffle deadline"),
    ("deadlines", "lift", 5, "deadlines.lift", "derives its own from that report"),
    ("api", "socket", "api.sock", "api.socket", "expected an absolute path"),
    ("api", "socket", "/" + "s" * 120, "api.socket", "at most 107 bytes"),
    ("api", "mode", 660, "api.mode", "write 0o660, a TOML octal integer, not 660"),
    ("api", "mode", "0666", "api.mode", "without write access for others"),
    ("api", "mode", "0460", "api.mode", "the service's own user read and write"),
    ("api", "mode", "rw-rw----", "api.mode", "expected a file mode"),
    ("api", "mode", True, "api.mode", "expected a file mode"),
    ("api", "group", "", "api.group", "the name of a group"),
    ("audit", "path", "", "audit.path", "expected an absolute path to the audit log, got ''"),
    ("audit", "rotate_bytes", 10, "audit.rotate_bytes", "at least 4096"),
    ("logging", "level", "loud", "logging.level", "one of DEBUG, INFO, WARNING, ERROR, got 'loud'"),
]


@pytest.mark.parametrize(("section", "key", "value", "path", "words"), BAD)
def test_each_wrong_key_is_named(
    section: str, key: str, value: object, path: str, words: str
) -> None:
    data = base()
    if value is DELETE:
        del data[section][key]
    else:
        data[section][key] = value
    with pytest.raises(ConfigError) as caught:
        parse_config(dump(data))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: "), message
    assert words in message, message
    assert caught.value.problems == [message]


def test_wrong_sections() -> None:
    with pytest.raises(ConfigError, match=r"^table: missing; expected a \[table\] section"):
        parse_config(b'[rules]\nprofile = "wsom"\n')
    with pytest.raises(ConfigError, match=r"^board: expected a \[board\] section"):
        parse_config(b'board = "/dev/ttyACM0"\n[table]\nnumber = 1\n[rules]\nprofile = "wsom"\n')
    with pytest.raises(ConfigError, match=r"^boards: unknown section; expected one of: table"):
        parse_config(dump({**base(), "boards": {"port": "/dev/x"}}))


def test_several_problems_one_message_all_listed() -> None:
    data = base()
    data["board"]["port"] = ""
    data["api"]["mode"] = 660
    data["logging"]["level"] = "loud"
    with pytest.raises(ConfigError) as caught:
        parse_config(dump(data))
    assert str(caught.value) == (
        "board.port: expected a device path or a pyserial URL, got '' "
        "(2 more problems; `mjtable config check` lists them all)"
    )
    assert [p.split(":")[0] for p in caught.value.problems] == [
        "board.port",
        "api.mode",
        "logging.level",
    ]


def test_file_level_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match="cannot read the configuration file") as caught:
        load_config(missing)
    assert caught.value.source == missing
    broken = tmp_path / "broken.toml"
    broken.write_text("[table\nnumber = 1\n")
    with pytest.raises(ConfigError, match=r"^not valid TOML: .*line 1"):
        load_config(broken)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe[table]")
    with pytest.raises(ConfigError, match=r"^not UTF-8 text"):
        load_config(binary)


def test_profile_file_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    profile = tmp_path / "profiles" / "house.toml"
    profile.write_text('base = "wenzhou"\nname = "house"\n')  # the whole profile is checked
    config_file = tmp_path / "config.toml"
    config_file.write_text('[table]\nnumber = 1\n[rules]\nprofile = "profiles/house.toml"\n')
    config = load_config(config_file)
    assert not config.rules.builtin
    assert config.rules.path == profile.resolve()
    profile.write_text("name = \n")
    with pytest.raises(ConfigError, match=r"^rules\.profile: .*invalid TOML"):
        load_config(config_file)


def test_hash_is_of_the_exact_bytes() -> None:
    text = b'[table]\nnumber = 1\n[rules]\nprofile = "wsom"\n'
    a = parse_config(text)
    b = parse_config(text + b"# a comment changes the hash\n")
    assert a.sha256 == hashlib.sha256(text).hexdigest()
    assert a.sha256 != b.sha256
    assert a.model_dump() == b.model_dump()


def test_config_is_frozen() -> None:
    config = parse_config(dump(base()))
    with pytest.raises(ValueError, match="frozen"):
        config.table.number = 8


def test_environment_warnings(tmp_path: Path) -> None:
    data = base()
    data["api"]["group"] = "no-such-group-mj"
    data["api"]["socket"] = str(tmp_path / "missing" / "api.sock")
    data["audit"]["path"] = str(tmp_path / "gone" / "audit.jsonl")
    data["board"]["port"] = str(tmp_path / "ttyNOPE")
    warnings = check_environment(parse_config(dump(data)))
    assert [w.split(":")[0] for w in warnings] == [
        "api.group",
        "api.socket",
        "audit.path",
        "board.port",
    ]
    data["api"]["group"] = grp.getgrgid(0).gr_name
    data["api"]["socket"] = str(tmp_path / "api.sock")
    data["audit"]["path"] = str(tmp_path / "audit.jsonl")
    data["board"]["port"] = "socket://127.0.0.1:5000"
    assert check_environment(parse_config(dump(data))) == []
    del data["board"]
    assert check_environment(parse_config(dump(data))) == [
        "board: no [board] section; only `mjtable run --sim` can start"
    ]


# -- docs/config.md's key table matches the models -----------------------------------


def _documented_defaults() -> dict[str, str]:
    rows = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| `([a-z_]+\.[a-z_]+)` \| [^|]+ \| ([^|]+) \|", line)
        if match:
            rows[match.group(1)] = match.group(2).strip()
    return rows


def _render_default(key: str, value: Any) -> str:
    if key in ("api.mode", "api.status_mode"):
        return f"`{value:#o}`"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, float):
        return f"`{value:g}`"
    return f"`{value}`"


def test_docs_list_every_key_with_its_default() -> None:
    documented = _documented_defaults()
    expected: set[str] = set()
    for section, field in Config.model_fields.items():
        model = field.annotation
        models = [a for a in getattr(model, "__args__", (model,)) if isinstance(a, type)]
        section_model = next(m for m in models if issubclass(m, BaseModel))
        for key, sub in section_model.model_fields.items():
            name = f"{section}.{key}"
            expected.add(name)
            assert name in documented, f"docs/config.md does not list {name}"
            shown = documented[name]
            if sub.default is PydanticUndefined:
                assert shown.startswith("required"), (name, shown)
            elif sub.default is None:
                assert shown.startswith("none"), (name, shown)
            else:
                assert shown == _render_default(name, sub.default), (name, shown)
    assert set(documented) == expected


def test_a_profile_file_is_loaded_once_by_the_configuration_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The validator loads the file whole (a profile that cannot work is not a valid
    configuration) and keeps what it loaded: the service's rules are that profile, not the
    file read again (which may have changed since the configuration was checked)."""
    import shutil

    import controller.service.config as config_module
    from rules.profiles import PROFILE_DIR, load_profile

    profile_file = tmp_path / "casino7.toml"
    shutil.copy(PROFILE_DIR / "wenzhou.toml", profile_file)
    loads: list[object] = []

    def counted(name_or_path: str | Path) -> object:
        loads.append(name_or_path)
        return load_profile(name_or_path)

    monkeypatch.setattr(config_module, "load_profile", counted)
    config = config_module.config_from_dict(
        {"table": {"number": 7}, "rules": {"profile": "casino7.toml"}}, base_dir=tmp_path
    )
    assert len(loads) == 1
    profile_file.write_text("not a profile any more")  # changed after the check
    first = config.rules.loaded()
    assert config.rules.loaded() is first and len(loads) == 1
    assert first.layout.tiles() == load_profile(PROFILE_DIR / "wenzhou.toml").layout.tiles()
