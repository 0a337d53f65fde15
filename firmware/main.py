"""The board's entry point: MicroPython runs it at power-on (copied to the board as /main.py).

Boot: build the reference board's HAL (hal/rp2.py), then the firmware, which reads why the
board started (power, watchdog, a RESET command) and the persistent record of where the sets
are; then the main loop runs until a RESET asks for a restart. The table this board drives is
TILES below.
"""

from firmware.app import boot
from firmware.config import BoardConfig

#: the tile sets of this table: 108, 136 or 144
TILES = 136


def main() -> None:
    from firmware.hal.rp2 import Rp2Hal  # the board's own modules (machine) load only here

    boot(Rp2Hal(), BoardConfig(TILES)).run()


if __name__ == "__main__":
    main()
