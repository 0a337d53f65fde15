"""The board's heap on the chip from the `.mpy` files (`python -m bench.chip_heap`, in about a
minute): the firmware imported, made (HAL, board, store, protocol engine) and run 300 passes of
its loop leaves at least 102 KiB free, so that the 100 KiB goal holds once the link is up and
after a deal cycle (`python -m bench.chip`, which takes 25 minutes, finds 1 to 2 KiB less); and
the board loads none of the host's modules (the codes' names and words took 26 KB of its heap)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.chip_heap import measure
from tests.chip.conftest import need_chip

pytestmark = [
    pytest.mark.xdist_group("chip"),
    pytest.mark.once,
    pytest.mark.chip_long,
    pytest.mark.timeout(600),
]

#: the heap free after the firmware is made and has run (no link up): the goal of bench.chip
#: (100 KiB after a deal cycle) and what the link and a cycle take (about 2 KiB)
MPY_HEAP_FLOOR = 102 * 1024


def test_the_mpy_firmware_leaves_102_kib_of_heap_and_loads_no_host_module(
    tmp_path: Path,
) -> None:
    heap = measure(136, need_chip(), tmp_path)
    print(f"\nheap free, the firmware from .mpy made and run: {heap.free} bytes")
    loaded = set(heap.modules)
    assert "protocol.wirecodes" in loaded and "firmware.app" in loaded
    assert not {"protocol.codes", "firmware.diagram", "protocol.examples"} & loaded, loaded
    assert heap.free >= MPY_HEAP_FLOOR, heap.steps
