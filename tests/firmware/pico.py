"""The Pico's HAL (firmware/hal/rp2.py and rp2link.py) imported afresh under CPython, over the
stand-in ``machine`` module (fake_machine.py) and a clock the test gives."""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from tests.firmware import fake_machine

#: the modules that import ``machine``: made again over the stand-in for each use
PICO_MODULES = ("firmware.hal.rp2", "firmware.hal.rp2link")


def import_pico(
    mp: pytest.MonkeyPatch, ticks: Callable[[], int], manifest: Path | None = None
) -> ModuleType:
    """firmware.hal.rp2 (and the rp2link it imports) over the stand-in, a fresh board, the
    clock ``ticks``; ``manifest``: where the link reads the build's manifest."""
    mp.setitem(sys.modules, "machine", fake_machine)
    mp.setattr(time, "ticks_ms", ticks, raising=False)
    mp.setattr(time, "ticks_diff", lambda a, b: a - b, raising=False)
    mp.setattr(time, "sleep_ms", lambda ms: None, raising=False)
    forget_pico()
    fake_machine.reset_state()
    module = importlib.import_module("firmware.hal.rp2")
    if manifest is not None:
        mp.setattr(sys.modules["firmware.hal.rp2link"], "MANIFEST", str(manifest))
    return module


def forget_pico() -> None:
    """The Pico's modules gone from sys.modules: the next import makes them again."""
    for name in PICO_MODULES:
        sys.modules.pop(name, None)
