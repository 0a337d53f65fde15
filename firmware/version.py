"""The firmware's version and build, reported to the host (HELLO_REPLY and BOARD_STATUS).

``BUILD_HASH`` is written by the build that produces a board's image (``mjtable firmware
build``, see docs/firmware.md, "Build, flash, verify"): the first 8 bytes of the SHA-256 of the
build's manifest, as 16 lower-case hex digits. A copy that was not built that way keeps
protocol.codes.BUILD_UNKNOWN (all zeros).
"""

from firmware.compat import const

FW_MAJOR = const(1)
FW_MINOR = const(0)
FW_PATCH = const(0)
BUILD_HASH = "0000000000000000"
