"""The firmware tools' sentences, each named once: what `mjtable firmware` says when the board,
its port, a build or the image's build cannot go on, and the image build's steps (board.py,
flash.py, manifest.py, mpy.py and image.py make them with their details).
:data:`FIRMWARE_SENTENCES` lists them, so that the command says them in the technician's
language (cli/lang.py), matched as the table's sentences are (station/lang.py). No
third-party import here."""

from __future__ import annotations

# -- the board and its port (board.py) ------------------------------------------------------
NO_MPREMOTE = "mpremote, MicroPython's board tool, is not installed: pip install mpremote"
NO_PORT = "no port {port}: is the board plugged in by USB? (ls /dev/ttyACM* lists the ports)"
NO_PERMISSION = (
    "no permission to open {port}: with the udev rule installed (sudo mjtable install), add "
    "your user to the group mjtable (sudo usermod -aG mjtable $USER) and log in again"
)
CANNOT_OPEN = (
    "cannot open {port} ({why}): is another program using it? (`sudo fuser -v {port}` names it)"
)
NOT_MICROPYTHON_YET = (
    "{port} does not answer as a MicroPython board (no raw REPL within {seconds} s): copy "
    "MicroPython's UF2 onto it first (hold BOOTSEL while plugging it in), and check that this "
    "is the board's port"
)
RUNS_ELSE = "{port} runs {name}, not MicroPython"
SOMETHING = "something"
BOARD_RAISED = (
    "the board raised {why}: is this the table's board, with MicroPython's hashlib and os? "
    "(mjtable firmware verify --port PORT)"
)
STOPPED_ANSWERING = (
    "the board stopped answering ({why}): check the USB cable; if it restarted (its watchdog), "
    "run the command again"
)
WRITE_FAILED = (
    "writing {path} on the board failed ({why}): is its flash full? (mjtable firmware verify "
    "shows what it holds)"
)
NO_MPY_SAID = "the board did not say which .mpy files it loads ({answer})"

# -- a build onto the board (flash.py, mpy.py) ----------------------------------------------
RUNS_IMAGE = (
    "the board runs the image of mjtable firmware image ({build}), which runs its frozen "
    "modules whatever files are copied onto it: copy the new image onto it instead, or "
    "MicroPython's own UF2 to flash .mpy files (hold BOOTSEL while plugging it in), then run "
    "this again"
)
IMAGE_BUILD = "firmware {firmware}, build {build}"
UNNAMED_BUILD = "a build it does not name"
LOADS_VERSION = "one that loads .mpy version {version}"
COPY_UF2 = (
    "copy the UF2 of a MicroPython {needs} onto the board (hold BOOTSEL while plugging it in), "
    "then run this again"
)
LOADS_NO_MPY = "the board's MicroPython loads no .mpy files, this build is of them: {todo}"
OTHER_MACHINE_CODE = (
    "this build holds machine code for {arch}, .mpy {build}; the board's MicroPython runs "
    "{board_arch} code of .mpy {board}: copy the UF2 of MicroPython 1.23 or newer for the "
    "Raspberry Pi Pico onto the board (hold BOOTSEL while plugging it in), then run this again"
)
ARCHITECTURE = "architecture {arch}"
OTHER_MPY = (
    "the board's MicroPython loads .mpy version {board}, this build's files are version "
    "{build}: {todo}"
)

# -- a build on this machine (manifest.py, mpy.py) ------------------------------------------
NO_MANIFEST = "no {name} in {folder}: build there first (mjtable firmware build --out {folder})"
NOT_A_MANIFEST = "{path} is not a firmware manifest ({why}): build again"
HASH_DIFFERS = "{path}: its build hash does not match its files: build again"
MISSING_FILE = "{path} is missing from the build: build again"
FILE_DIFFERS = "{path} differs from its manifest: build again"
NOT_MPY = "{path} is not a .mpy file: build again"
OTHER_FORMAT = "{path} is of another .mpy format: build again"
NO_MPY = "{folder} holds no .mpy file: build again"

# -- the image (image.py) -------------------------------------------------------------------
OUT_IS_DIRECTORY = "{out} is a directory: give the UF2 file to write, e.g. {out}/x.uf2"
NO_OUT_DIRECTORY = "no directory {folder} to write {name} in"
NO_SOURCES = (
    "no {name} in {shared}: the image is built from the shared rp2040 folder's MicroPython "
    "sources; give it with --rp2040 DIR or MJTABLE_RP2040_DIR"
)
NO_TOOLCHAIN = (
    "Debian's Arm toolchain is missing ({missing}): install it as root ({command}), then run "
    "this again"
)
NO_WORK_TREE = "cannot make the work tree {work}: {why}"
FREEZING = (
    "freezing firmware {firmware}, build {build} ({count} files, {tiles} tiles) into "
    "MicroPython v1.27.0"
)
INSTALLING_TOOLCHAIN = "installing Debian's Arm toolchain first (about 400 MB): {missing}"
BUILDING = "building MicroPython in {work} (1 to 4 minutes; its log: {log})"
TOO_BIG = (
    "the image takes {size} bytes of flash, more than the {room} before MicroPython's file "
    "system: freeze fewer modules"
)
CANNOT_WRITE = "cannot write {path}: {why}"
WAITING = "waiting for another image build in {work} to finish"
CANNOT_RUN = "cannot run {script}: {why}"
EXIT_STATUS = "exit status {status}"
BUILD_FAILED = (
    "MicroPython's build failed ({why}); the whole log is in {log}: fix what it says, then run "
    "this again"
)

#: every sentence above, the more particular first
FIRMWARE_SENTENCES: tuple[str, ...] = (
    NO_MPREMOTE,
    NO_PORT,
    NO_PERMISSION,
    CANNOT_OPEN,
    NOT_MICROPYTHON_YET,
    RUNS_ELSE,
    SOMETHING,
    BOARD_RAISED,
    STOPPED_ANSWERING,
    WRITE_FAILED,
    NO_MPY_SAID,
    RUNS_IMAGE,
    IMAGE_BUILD,
    UNNAMED_BUILD,
    LOADS_VERSION,
    COPY_UF2,
    LOADS_NO_MPY,
    OTHER_MACHINE_CODE,
    ARCHITECTURE,
    OTHER_MPY,
    NO_MANIFEST,
    NOT_A_MANIFEST,
    HASH_DIFFERS,
    MISSING_FILE,
    FILE_DIFFERS,
    NOT_MPY,
    OTHER_FORMAT,
    NO_MPY,
    OUT_IS_DIRECTORY,
    NO_OUT_DIRECTORY,
    NO_SOURCES,
    NO_TOOLCHAIN,
    NO_WORK_TREE,
    FREEZING,
    INSTALLING_TOOLCHAIN,
    BUILDING,
    TOO_BIG,
    CANNOT_WRITE,
    WAITING,
    CANNOT_RUN,
    EXIT_STATUS,
    BUILD_FAILED,
)
