"""The firmware's version, reported to the host (HELLO_REPLY and BOARD_STATUS).

The build hash is not here: it covers every file of a build, this one included, so the
firmware reads it at boot from the manifest the flasher wrote on the board (firmware/
buildinfo.py; docs/firmware.md, "Build, flash, verify").
"""

from firmware.compat import const

FW_MAJOR = const(1)
FW_MINOR = const(0)
FW_PATCH = const(0)
