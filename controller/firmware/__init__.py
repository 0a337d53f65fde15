"""The board's firmware from the host's side: build it, copy it onto a board, check what is there.

    build.py     the files the board needs (firmware/ and the protocol/ modules it imports),
                 compiled to .mpy with mpy-cross, and their manifest
    manifest.py  the manifest: firmware version, build hash, each file's path and SHA-256
    image.py     the image a technician flashes: the build frozen into MicroPython, as a UF2
    board.py     a MicroPython board over its USB serial port, through mpremote's library
    flash.py     flash (copy a build, manifest last) and verify (read every file's hash back)

Used by ``mjtable firmware build|image|flash|verify`` (cli/firmware.py); see docs/firmware.md,
"Build, flash, verify". Every failure is a FirmwareError whose text is one line saying what
happened and what to check.
"""


class FirmwareError(Exception):
    """A build, flash or verify that cannot go on: one line, what happened and what to check."""
