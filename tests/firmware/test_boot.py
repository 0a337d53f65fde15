"""Boot: the window in which a Ctrl-C on the REPL stops the board before its watchdog starts
(firmware/main.py), the motors cut however the loop ends, and the build hash read from the
manifest the flasher wrote (firmware/buildinfo.py)."""

from __future__ import annotations

import hashlib
import json
import sys
import time
import types
from pathlib import Path

import pytest

import firmware.app
from controller.firmware.manifest import FileEntry
from controller.firmware.manifest import build_hash as controller_build_hash
from firmware import main as firmware_main
from firmware.app import GATHER_MS, boot
from firmware.buildinfo import build_hash, build_id
from firmware.config import BoardConfig
from firmware.hal import LED_HEARTBEAT
from firmware.hal.virtual import VirtualHal
from firmware.status import board_status
from protocol import codes
from protocol import messages as m
from tests.firmware import fake_machine
from tests.firmware.pico import forget_pico, import_pico
from tests.firmware.rig import connected, step_until_moving

# --- the boot window -------------------------------------------------------------------------


class Sleeps:
    """A stand-in for time.sleep_ms: counts the time slept; Ctrl-C after ``interrupt_at`` ms."""

    def __init__(self, interrupt_at: int | None = None) -> None:
        self.slept = 0
        self.interrupt_at = interrupt_at

    def __call__(self, ms: int) -> None:
        if self.interrupt_at is not None and self.slept >= self.interrupt_at:
            raise KeyboardInterrupt
        self.slept += ms


def test_the_boot_window_lasts_its_time_with_the_led_flashing() -> None:
    hal = VirtualHal()
    flashes: list[bool] = []
    hal.led = lambda led, on: flashes.append(on) if led == LED_HEARTBEAT else None  # type: ignore[method-assign]
    sleeps = Sleeps()
    assert firmware_main.boot_window(hal, sleeps) is True
    assert sleeps.slept == firmware_main.BOOT_WINDOW_MS
    assert flashes.count(True) >= 10 and flashes[-1] is False


def test_a_ctrl_c_in_the_window_keeps_the_watchdog_off(capsys: pytest.CaptureFixture[str]) -> None:
    hal = VirtualHal()
    assert firmware_main.boot_window(hal, Sleeps(interrupt_at=1200)) is False
    assert "the REPL is free" in capsys.readouterr().out
    assert not hal.leds[LED_HEARTBEAT]


@pytest.fixture
def pico(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> object:
    """firmware.hal.rp2 over the stand-in machine module, its store and manifest in tmp_path."""
    rp2 = import_pico(monkeypatch, lambda: 1000, tmp_path / "manifest.json")
    original = rp2.Rp2Hal
    monkeypatch.setattr(rp2, "Rp2Hal", lambda: original(store_dir=str(tmp_path)))
    yield rp2
    forget_pico()


def test_main_interrupted_in_the_window_never_starts_the_watchdog(
    pico: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "sleep_ms", Sleeps(interrupt_at=500), raising=False)
    firmware_main.main()  # returns: the REPL is the technician's
    assert fake_machine.wdt == []


def test_main_after_the_window_starts_the_watchdog_and_a_ctrl_c_cuts_the_motors(
    pico: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "sleep_ms", Sleeps(), raising=False)
    hal_made: list[object] = []
    real_boot = boot

    def boot_then_run_a_motor(hal: object, config: BoardConfig) -> object:
        app = real_boot(hal, config)  # type: ignore[arg-type]
        hal_made.append(hal)
        passes = [0]
        inner = app.step

        def step() -> bool:
            passes[0] += 1
            if passes[0] == 3:
                app.hal.motors_enable()
                app.hal.motor(codes.MOTOR_SHUFFLE_DISC, 1, 1000)
            if passes[0] == 5:
                raise KeyboardInterrupt  # mpremote's Ctrl-C, while a motor runs
            return inner()

        app.step = step  # type: ignore[method-assign]
        return app

    monkeypatch.setattr(firmware.app, "boot", boot_then_run_a_motor)
    with pytest.raises(KeyboardInterrupt):
        firmware_main.main()
    assert len(fake_machine.wdt) == 1  # started: it will reset the board within 2 s
    hal = hal_made[0]
    assert hal._enable.value() == 0  # type: ignore[attr-defined]
    assert all(p.duty_u16() == 0 for p in hal._pwm)  # type: ignore[attr-defined]


def test_the_loop_cuts_the_motors_however_it_ends() -> None:
    hal = VirtualHal()
    app = boot(hal, BoardConfig(136))
    hal.motors_enable()
    hal.motor(codes.MOTOR_CHAIN, 1, 1000)

    def interrupted() -> bool:
        raise KeyboardInterrupt

    app.step = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        app.run()
    assert not hal.enabled and hal.speed == [0] * codes.MOTOR_COUNT


# --- the build hash --------------------------------------------------------------------------


def sha256sum_lines(files: dict[str, bytes]) -> str:
    """What `sha256sum | sha256sum` computes over the files, sorted by path (LC_ALL=C)."""
    lines = "".join(
        f"{hashlib.sha256(data).hexdigest()}  {path}\n" for path, data in sorted(files.items())
    )
    return hashlib.sha256(lines.encode()).hexdigest()


def test_one_build_hash_for_the_build_and_the_simulator() -> None:
    files = {"main.py": b"boot()\n", "firmware/app.mpy": b"\x4d\x06", "protocol/codes.mpy": b"x"}
    pairs = [(path, hashlib.sha256(data).hexdigest()) for path, data in files.items()]
    entries = [FileEntry(path, digest, len(files[path])) for path, digest in pairs]
    assert build_hash(pairs) == sha256sum_lines(files) == controller_build_hash(entries)
    assert build_hash(reversed(pairs)) == build_hash(pairs)  # sorted by path, whatever the order


def manifest_text(build: str) -> bytes:
    return json.dumps({"format": 1, "build_hash": build, "files": []}, indent=1).encode()


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        (manifest_text("0123456789abcdef" * 4), "0123456789abcdef"),
        (manifest_text("FEDCBA9876543210" * 4), "fedcba9876543210"),
        (b'{"build_hash":"00ff00ff00ff00ffab"}', "00ff00ff00ff00ff"),
        (None, codes.BUILD_UNKNOWN),
        (b"", codes.BUILD_UNKNOWN),
        (b'{"format": 1}', codes.BUILD_UNKNOWN),
        (manifest_text("not hex at all, no"), codes.BUILD_UNKNOWN),
        (manifest_text("abc"), codes.BUILD_UNKNOWN),
        (b'{"build_hash": ', codes.BUILD_UNKNOWN),
    ],
)
def test_the_build_id_read_from_the_manifest(manifest: bytes | None, expected: str) -> None:
    assert build_id(manifest) == expected


def test_the_board_reports_the_build_of_its_manifest_in_hello_and_status() -> None:
    h = connected()
    assert board_status(h.board).build_hash == codes.BUILD_UNKNOWN  # no manifest: all zeros
    h.hal.manifest_bytes = manifest_text("d00d" * 16)
    h.power_cycle()  # read at boot
    h.connect()
    reply = h.host.peer
    assert isinstance(reply, m.HelloReply) and reply.status.build_hash == "d00dd00dd00dd00d"
    status = [e for e in h.command(m.ReadStatus()) if isinstance(e, m.BoardStatus)]
    assert status[-1].build_hash == "d00dd00dd00dd00d"


def test_the_pico_reads_its_manifest_file(pico: object, tmp_path: Path) -> None:
    hal = pico.Rp2Hal()  # type: ignore[attr-defined]
    assert hal.manifest() is None
    (tmp_path / "manifest.json").write_bytes(manifest_text("ab" * 32))
    assert build_id(hal.manifest()) == "abababababababab"


def test_the_pico_reads_the_build_frozen_into_its_image_before_its_manifest_file(
    pico: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image of `mjtable firmware image` carries its build as the frozen module
    mjtable_image; a /manifest.json an earlier flash left is not what the board runs."""
    (tmp_path / "manifest.json").write_bytes(manifest_text("ab" * 32))
    frozen = types.ModuleType("mjtable_image")
    frozen.MANIFEST = b'{"build_hash": "' + b"cd" * 32 + b'"}'  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mjtable_image", frozen)
    hal = pico.Rp2Hal()  # type: ignore[attr-defined]
    assert build_id(hal.manifest()) == "cdcdcdcdcdcdcdcd"
    monkeypatch.delitem(sys.modules, "mjtable_image")
    assert build_id(hal.manifest()) == "abababababababab"


def test_main_puts_the_frozen_modules_before_the_flash_s() -> None:
    path = ["", ".frozen", "/lib"]  # sys.path on the Pico
    firmware_main.frozen_first(path)
    assert path == [".frozen", "", "/lib"]
    firmware_main.frozen_first(path)
    assert path == [".frozen", "", "/lib"]
    host = ["", "/usr/lib/python3"]  # nothing frozen: unchanged
    firmware_main.frozen_first(host)
    assert host == ["", "/usr/lib/python3"]


# --- the loop's idling -----------------------------------------------------------------------


class _Enough(Exception):
    """The test has seen the passes it wanted."""


def idles_over(app: firmware.app.App, passes: int) -> list[int]:
    """The ms the loop idles between each of its next ``passes`` passes (none for a pass after
    which it went straight on)."""
    idles: list[int] = []
    app.hal.idle = idles.append  # type: ignore[method-assign,assignment]
    inner = app.step
    seen = [0]

    def step() -> bool:
        seen[0] += 1
        if seen[0] > passes:
            raise _Enough
        idles.append(-seen[0])  # a pass, then what the loop did after it
        return inner()

    app.step = step  # type: ignore[method-assign]
    with pytest.raises(_Enough):
        app.run()
    return idles


def test_at_rest_the_loop_gathers_a_busy_lines_bytes() -> None:
    hal = VirtualHal()
    app = boot(hal, BoardConfig(136))
    app.step()  # the boot's own work done
    hal.host_write(b"\x00\x00\x00")  # noise: read, skipped, nothing to answer
    assert idles_over(app, 3) == [-1, GATHER_MS, -2, 1, -3, 1]


def test_a_motions_passes_never_idle() -> None:
    h = connected(seed=6)
    h.send(m.Shuffle(0))
    step_until_moving(h, codes.MOTOR_SHUFFLE_DISC)
    h.hal.host_write(b"\x00\x00\x00")
    assert idles_over(h.app, 3) == [-1, -2, -3]
