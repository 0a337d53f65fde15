"""The board's entry point: MicroPython runs it at power-on (copied to the board as /main.py, or
frozen into the image of ``mjtable firmware image``, which MicroPython runs before a /main.py).

Boot: build the reference board's HAL (hal/rp2.py: every motor off, the drivers' enable line
down), then wait BOOT_WINDOW_MS with the heartbeat LED flashing fast: a Ctrl-C on the USB REPL
in that window (what ``mjtable firmware flash`` and ``verify`` send, through mpremote) stops
here and leaves the REPL to them, before the watchdog is started. Once started, the RP2040's
watchdog cannot be stopped: a Ctrl-C later stops the firmware (every motor off) and the
watchdog resets the board within 2 s, which brings it back to this window. Then the firmware,
which reads why the board started (power, watchdog, a RESET command) and the persistent record
of where the sets are, runs its loop until a RESET asks for a restart. The table this board
drives is TILES below.

What fails at start leaves the board speaking the protocol (firmware/app.py's ``start``): a
part that does not answer is a fault that names it, an exception while the HAL (or its module,
hal/rp2.py) or the firmware is made runs the last resort (FAULT INTERNAL 0xEF and the
exception's line on the link, through hal/rp2link.py alone). Only
when the firmware's own files do not load (a file missing, ``.mpy`` files of another
MicroPython, no memory) can nothing speak: ``cannot_load`` prints why on the console, keeps the
boot window, then lets the watchdog restart the board, which tries again. This file imports
none of the firmware at its top, so that it always runs.
"""

TYPE_CHECKING = False  # as firmware/compat.py's: this file runs even when that one does not load

if TYPE_CHECKING:
    from collections.abc import Callable

    from firmware.hal import Hal

#: the tile sets of this table: 108, 136 or 144
TILES = 136
#: after each reset, how long a Ctrl-C on the REPL stops the board before its watchdog starts
BOOT_WINDOW_MS = 3000
#: the heartbeat LED's half period during the window (fast: "Ctrl-C now")
_WINDOW_BLINK_MS = 100
#: firmware/app.py's WATCHDOG_MS, for when app.py does not load (a test keeps the two equal)
WATCHDOG_MS = 2000


def boot_window(hal: "Hal", sleep_ms: "Callable[[int], None]", ms: int = BOOT_WINDOW_MS) -> bool:
    """Wait ``ms`` with the LED flashing; False when a Ctrl-C (KeyboardInterrupt) came meanwhile:
    the firmware must not start (nor its watchdog)."""
    from firmware.hal import LED_HEARTBEAT

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


def cannot_load(error: BaseException, sleep_ms: "Callable[[int], None]") -> None:
    """The firmware's files do not load (or not even its link starts): nothing can speak the
    protocol. Say why on the console, keep the boot window (a Ctrl-C there leaves the REPL
    free), then start the watchdog and let it restart the board (never returns on a board)."""
    import machine  # type: ignore[import-not-found,unused-ignore]

    print(
        "mjtable: the firmware cannot speak on its link: "
        + type(error).__name__
        + ": "
        + str(error)
    )
    print(
        "mjtable: the watchdog restarts the board; flash it again "
        "(the UF2 of mjtable firmware image, or mjtable firmware flash)"
    )
    try:
        sleep_ms(BOOT_WINDOW_MS)
    except KeyboardInterrupt:
        print("mjtable: stopped before the watchdog started; the REPL is free (reset to run)")
        return
    machine.WDT(timeout=WATCHDOG_MS)
    while True:
        sleep_ms(1000)


def frozen_first(path: "list[str]") -> None:
    """Put the modules frozen into MicroPython's image (``.frozen``) before the file system's
    on ``path`` (sys.path: ``''``, ``.frozen``, ``/lib`` on the Pico). A board flashed with the
    image of ``mjtable firmware image`` runs the firmware it was built with, whatever ``.mpy``
    files an earlier ``mjtable firmware flash`` left on its flash; the stock image freezes no
    module of ours, so its board runs the files on its flash as before."""
    if ".frozen" in path:
        path.remove(".frozen")
        path.insert(0, ".frozen")


def main() -> None:
    import sys
    from time import sleep_ms  # type: ignore[attr-defined,unused-ignore]

    frozen_first(sys.path)
    try:
        from firmware.app import start
        from firmware.config import BoardConfig
        from firmware.hal.rp2link import Rp2Link  # the board's own (machine) load only here
    except Exception as exc:  # a file missing, .mpy of another MicroPython, no memory
        cannot_load(exc, sleep_ms)
        return
    error: BaseException | None = None
    try:
        from firmware.hal.rp2 import Rp2Hal

        hal: Hal = Rp2Hal()
    except Exception as exc:  # the HAL or its module: the last resort speaks through the link
        error = exc
        try:
            hal = Rp2Link()
        except Exception as link_error:  # not even the UART: nothing can speak
            cannot_load(link_error, sleep_ms)
            return
    if boot_window(hal, sleep_ms):
        start(hal, BoardConfig(TILES), error)


if __name__ == "__main__":
    main()
