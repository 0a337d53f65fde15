"""The board's entry point: MicroPython runs it at power-on (copied to the board as /main.py).

Boot: build the reference board's HAL (hal/rp2.py: every motor off, the drivers' enable line
down), then wait BOOT_WINDOW_MS with the heartbeat LED flashing fast: a Ctrl-C on the USB REPL
in that window (what ``mjtable firmware flash`` and ``verify`` send, through mpremote) stops
here and leaves the REPL to them, before the watchdog is started. Once started, the RP2040's
watchdog cannot be stopped: a Ctrl-C later stops the firmware (every motor off) and the
watchdog resets the board within 2 s, which brings it back to this window. Then the firmware,
which reads why the board started (power, watchdog, a RESET command) and the persistent record
of where the sets are, runs its loop until a RESET asks for a restart. The table this board
drives is TILES below.
"""

from firmware.app import boot
from firmware.compat import TYPE_CHECKING, const
from firmware.config import BoardConfig
from firmware.hal import LED_HEARTBEAT

if TYPE_CHECKING:
    from collections.abc import Callable

    from firmware.hal import Hal

#: the tile sets of this table: 108, 136 or 144
TILES = 136
#: after each reset, how long a Ctrl-C on the REPL stops the board before its watchdog starts
BOOT_WINDOW_MS = const(3000)
#: the heartbeat LED's half period during the window (fast: "Ctrl-C now")
_WINDOW_BLINK_MS = const(100)


def boot_window(hal: "Hal", sleep_ms: "Callable[[int], None]", ms: int = BOOT_WINDOW_MS) -> bool:
    """Wait ``ms`` with the LED flashing; False when a Ctrl-C (KeyboardInterrupt) came meanwhile:
    the firmware must not start (nor its watchdog)."""
    on = False
    try:
        for _ in range(ms // _WINDOW_BLINK_MS):
            on = not on
            hal.led(LED_HEARTBEAT, on)
            sleep_ms(_WINDOW_BLINK_MS)
    except KeyboardInterrupt:
        hal.led(LED_HEARTBEAT, False)
        print("mjtable: stopped before the watchdog started; the REPL is free (reset to run)")
        return False
    hal.led(LED_HEARTBEAT, False)
    return True


def main() -> None:
    from time import sleep_ms  # type: ignore[attr-defined,unused-ignore]

    from firmware.hal.rp2 import Rp2Hal  # the board's own modules (machine) load only here

    hal = Rp2Hal()
    if boot_window(hal, sleep_ms):
        boot(hal, BoardConfig(TILES)).run()


if __name__ == "__main__":
    main()
