"""The wheel holds every package and data file, installs with its runtime dependencies only,
and every offline command of `mjtable` works from it, outside the source tree.

Fixtures in tests/packaging/conftest.py: ``built`` (the wheel built from a copy of the files git
knows) and ``installed`` (a fresh environment with the locked runtime dependencies and the
wheel, commands run from an empty directory).
"""

from __future__ import annotations

import collections
import hashlib
import json
import re
import zipfile
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.packaging.conftest import ROOT, Built, Installed, wheel_modules

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]

#: Top-level packages of the tree that are not part of the release, and why.
DEV_ONLY = {
    "tests": "the test suite",
    "bench": "the benchmarks (make bench), run from a checkout",
}
#: Modules of the wheel that run on the board only, under MicroPython: they cannot import under
#: CPython (each test run proves they still fail, and that every other module imports).
BOARD_ONLY = {
    "firmware.hal.rp2": "the reference board's HAL: machine, rp2, time.ticks_ms",
    "firmware.hal.rp2link": "the Pico's link: machine, time.sleep_ms",
    "firmware.hal.rp2crc": "the frames' CRC in the Pico's machine code: micropython.viper",
}
#: What the wheel carries as data files (PREFIX/share/mjtable/udev: mjtable install reads them).
DATA_DIRS = {"udev": "share/mjtable/udev"}


def shipped_packages() -> set[str]:
    """Every top-level package of the tree but the development-only ones."""
    found = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    return found - DEV_ONLY.keys()


# -- the wheel's contents ------------------------------------------------------------------


def test_build_gives_no_warning(built: Built) -> None:
    warnings = sorted(set(re.findall(r"\b[A-Z]\w*Warning\b.*", built.log)))
    assert warnings == [], "\n".join(warnings)


def test_wheel_holds_every_file_of_every_package_and_nothing_else(built: Built) -> None:
    packages = shipped_packages()
    assert {"protocol", "drivers", "controller", "simulator", "rules"} <= packages
    expected = set()
    for name in built.sources:
        top = name.split("/")[0]
        if top in packages:
            expected.add(name)
        elif top in DATA_DIRS:
            expected.add(f"{built.data}/{DATA_DIRS[top]}/{name.removeprefix(top + '/')}")
    shipped = {n for n in built.names if ".dist-info/" not in n}
    assert sorted(expected - shipped) == [], "in the tree, missing from the wheel"
    assert sorted(shipped - expected) == [], "in the wheel, not in the tree"


def test_every_package_says_it_is_typed(built: Built) -> None:
    untyped = sorted(p for p in shipped_packages() if f"{p}/py.typed" not in built.names)
    assert untyped == [], "a typed package ships py.typed (PEP 561)"


def test_metadata(built: Built) -> None:
    (metadata,) = [n for n in built.names if n.endswith(".dist-info/METADATA")]
    (entry_points,) = [n for n in built.names if n.endswith(".dist-info/entry_points.txt")]
    with zipfile.ZipFile(built.wheel) as archive:
        text = archive.read(metadata).decode()
        scripts = archive.read(entry_points).decode()
    assert "License-Expression: LicenseRef-Proprietary" in text
    assert "Requires-Python: >=3.11" in text
    assert "mjtable = cli:main" in scripts


# -- installed, outside the tree -----------------------------------------------------------


def test_every_module_imports_from_the_environment(built: Built, installed: Installed) -> None:
    modules = wheel_modules(built.names)
    result = installed.probe("imports", *modules)
    assert result["outside"] == {}, "imported from elsewhere than the fresh environment"
    failed = result["failed"]
    assert {name: error for name, error in failed.items() if name not in BOARD_ONLY} == {}
    for name in BOARD_ONLY:
        assert failed[name].startswith(("ImportError", "ModuleNotFoundError")), failed.get(name)
    assert result["imported"] + len(BOARD_ONLY) == len(modules)


def test_help_of_every_subcommand(installed: Installed) -> None:
    paths: list[list[str]] = installed.probe("commands")
    assert ["audit", "verify"] in paths and ["config", "check"] in paths
    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(lambda path: installed.mjtable(*path, "--help"), paths))
    for path, result in zip(paths, done, strict=True):
        assert result.returncode == 0, (path, result.stderr)
        assert result.stdout.startswith(" ".join(["usage: mjtable", *path])), result.stdout


def test_python_m_controller_cli(installed: Installed) -> None:
    done = installed.run("python", "-m", "cli", "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage: mjtable"), done.stderr


def test_hand(installed: Installed) -> None:
    done = installed.mjtable(
        "hand", "--variant", "sichuan", "123m 456m 789p 234s 5s", "--win", "5s", "--from", "wall"
    )
    assert done.returncode == 0, done.stderr
    assert "verdict: win (sets and a pair)" in done.stdout


def test_deal_from_a_manifest(installed: Installed) -> None:
    random = installed.mjtable("deal", "--variant", "wenzhou", "--random", "--seed", "7", "--json")
    assert random.returncode == 0, random.stderr
    manifest = {"walls": json.loads(random.stdout)["manifest"]["walls"]}
    path = installed.work / "walls.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    done = installed.mjtable(
        "deal", "--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+6",
        "--manifest", path, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout)
    assert [len(state["hands"][seat]) for seat in "ESWN"] == [17, 16, 16, 16]
    # Every tile of the manifest is dealt, in the colline or in the live wall, exactly once.
    walls = collections.Counter(t for wall in manifest["walls"].values() for s in wall for t in s)
    dealt = collections.Counter(t for hand in state["hands"].values() for t in hand)
    assert dealt + collections.Counter(state["colline"] + state["live_wall"]) == walls
    picture = installed.mjtable(
        "deal", "--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+6", "--manifest", path
    )
    assert picture.returncode == 0 and picture.stdout.strip(), picture.stderr


def test_demo_on_the_embedded_simulator(installed: Installed) -> None:
    done = installed.mjtable("demo", "--json", "--speed", "0", "--cycles", "2", "--seed", "3")
    assert done.returncode == 0, done.stderr
    states = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(states) == 2
    for state in states:
        assert sum(len(hand) for hand in state["hands"].values()) == 17 + 3 * 16


def test_config_check_of_the_shipped_example(installed: Installed) -> None:
    example = installed.prefix / DATA_DIRS["udev"] / "config.example.toml"
    assert example.read_bytes() == (ROOT / "udev" / "config.example.toml").read_bytes()
    done = installed.mjtable("config", "check", example)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{example}: valid")


def test_a_missing_configuration_gets_advice_that_works_from_the_wheel(
    installed: Installed,
) -> None:
    """The advice of `mjtable run` without a configuration, followed from the wheel (no
    checkout's udev/ to copy from), gives a configuration `mjtable config check` takes."""
    missing = installed.work / "config.toml"
    refused = installed.mjtable("run", "--config", missing)
    assert refused.returncode == 2
    assert f"`mjtable config example > {missing}`" in refused.stderr
    example = installed.mjtable("config", "example")
    assert example.returncode == 0, example.stderr
    assert example.stdout == (ROOT / "udev" / "config.example.toml").read_text(encoding="utf-8")
    missing.write_text(example.stdout, encoding="utf-8")
    done = installed.mjtable("config", "check", missing)
    assert done.returncode == 0 and done.stdout.startswith(f"{missing}: valid"), done.stderr


def test_audit_verify_of_a_log_it_wrote(installed: Installed) -> None:
    log = installed.work / "audit" / "audit.jsonl"
    log.parent.mkdir()
    head = installed.probe("audit", str(log))["head"]
    done = installed.mjtable("audit", "verify", log)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"head {head}" in done.stdout
    log.write_bytes(log.read_bytes().replace(b"power_up", b"power_on", 1))
    broken = installed.mjtable("audit", "verify", log)
    assert broken.returncode == 1 and "BREAK at" in broken.stdout


def test_link_demo(installed: Installed) -> None:
    done = installed.mjtable("link-demo")
    assert done.returncode == 0, done.stderr
    assert "link up: board" in done.stdout


def test_install_takes_the_files_the_wheel_carries(installed: Installed) -> None:
    root = installed.work / "root"
    root.mkdir()
    done = installed.mjtable("install", "--prefix", root)
    assert done.returncode == 0, done.stderr
    installed_files = {
        "etc/mjtable/config.toml": "config.example.toml",
        "etc/sysusers.d/mjtable.conf": "mjtable.sysusers",
    }
    for path, source in installed_files.items():
        assert (root / path).read_bytes() == (ROOT / "udev" / source).read_bytes(), path
    unit = (root / "etc/systemd/system/mjtable.service").read_text(encoding="utf-8")
    assert f"ExecStart={installed.bin / 'mjtable'} run" in unit


def test_firmware_build_from_the_installed_files(built: Built, installed: Installed) -> None:
    """The board's files compiled from the installed wheel are those of the tree."""
    manifests = []
    for out, source in (("installed", ()), ("tree", ("--source", built.source))):
        done = installed.mjtable("firmware", "build", "--out", installed.work / out, *source)
        assert done.returncode == 0, done.stdout + done.stderr
        manifests.append(json.loads((installed.work / out / "manifest.json").read_text()))
    from_wheel, from_tree = manifests
    assert from_wheel == from_tree
    paths = [f["path"] for f in from_wheel["files"]]
    assert "main.py" in paths and "firmware/app.mpy" in paths and "protocol/messages.mpy" in paths
    for file in from_wheel["files"]:
        data = (installed.work / "installed" / file["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == file["sha256"], file["path"]


def test_api_schemas_match_the_docs(installed: Installed) -> None:
    done = installed.run("python", "-m", "controller.api", "--check", ROOT / "docs" / "api")
    assert done.returncode == 0, done.stderr
