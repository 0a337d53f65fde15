"""The installer's sentences, each named once: what `mjtable install` did or would do to each
file, why it runs each command, its notes and its refusals (controller/service/install.py,
install_files.py and commands.py make them with their details). :data:`INSTALL_SENTENCES`
lists them, so that the command says them in the technician's language (cli/lang.py), matched
as the table's sentences are (station/lang.py). No third-party import here."""

from __future__ import annotations

# -- what is done to each file (install_files.py), and what a dry run would do --------------
CREATED = "created"
UPDATED = "updated"
UNCHANGED = "unchanged"
KEPT = "kept"
REMOVED = "removed"
CREATE = "create"
UPDATE = "update"
KEEP = "keep"
REMOVE = "remove"
NOT_OVERWRITTEN = "not overwritten"
PREVIOUS_ONE = "the previous one is {name}"

# -- why each command runs, and each drop-in (install.py) -----------------------------------
WHY_USER = "the user and group mjtable"
WHY_CONFIG_GROUP = "the configuration for its readers alone"
WHY_CONFIG_MODE = "no one else reads it (the broker's password)"
WHY_UDEV_RELOAD = "udev reads the new rule"
WHY_UDEV_TRIGGER = "the rule applies to the board and panel plugged in now"
WHY_UDEV_SETTLE = "before the service opens them"
WHY_DAEMON_RELOAD = "systemd reads the new units"
WHY_ENABLE = "started at every boot"
WHY_RESTART = "started now, on this version"
WHY_STATUS_ROLE = "the gateway needs only the status role"
WHY_NOT_NETWORK = "the board is not on the network"
WHY_UART = "the board is on the Pi's UART"

# -- its notes (install.py, install_files.py) -----------------------------------------------
CURRENT_ELSEWHERE = (
    "{link} points at {target}, not at this version's {running}: the service runs the version "
    "`current` points at (docs/install.md, Upgrade and rollback)"
)
CONFIG_UNREADABLE = (
    "{path} could not be read as TOML ({why}): the udev rule keeps the default panel ids and "
    "the board on the Pi's UART; run `mjtable config check` on it"
)
NOT_SEALED = (
    "the audit log is not sealed (no audit.key): once the service has started, run `{make} "
    "/var/lib/mjtable/audit.key`, keep the verification key it prints off the table, set "
    "audit.key and restart the service (docs/audit.md)"
)
NO_KEY_YET = (
    "audit.key names {key}, which does not exist yet: the service refuses to start until "
    "`{make} {key}` makes it (docs/audit.md)"
)
NOT_ENABLED = "{unit} is installed but not enabled: {why}"
NO_KIOSK_WANTED = "--no-kiosk was given"
NO_KIOSK_USER = "the configuration's [station] names no kiosk_user (docs/web.md)"
KIOSK_UNREACHABLE = (
    "the station listens on {host}:{port}, which the display's browser cannot reach on this "
    "machine's loopback: give [station] host 127.0.0.1 or 0.0.0.0 and a port"
)
NO_GATEWAY = "the configuration has no [gateway] section (docs/floor.md)"
NO_STATION = "the configuration has no [station] section (docs/web.md)"
UNKNOWN_PORT = (
    "board.port = {port}: not a kind of port the installation knows (ttyAMA, ttyS0, serial0, "
    "ttyUSB, ttyACM, their /dev/serial links, socket://): the unit allows the Pi's UART only; "
    "add the device with DeviceAllow= in a drop-in"
)
HOST_NOT_ADDRESS = (
    "board.port names the host {host}, not an IP address: the service may reach any address; "
    "give the board's IP address in board.port to restrict it"
)
NO_PROGRAM = "the unit runs {program}, which does not exist (yet)"
STAGED_PROGRAM = (
    "the units run {program}, the program this install runs from: staged for another machine, "
    "give its path there (--exec {default}, the layout of docs/install.md)"
)
STAGED = (
    "the files are under {root}: copy them to the table's root file system, then run the "
    "commands below there"
)

# -- its refusals (install.py, install_files.py, commands.py) -------------------------------
NO_FILES = (
    "the installation files are not beside the program (looked in {looked}): reinstall mjtable "
    "(pip install .), see docs/install.md"
)
PANEL_NOT_INTEGERS = "panel.vendor_id and panel.product_id must be integers such as 0x1209"
PANEL_NOT_USB = "panel ids {vendor}:{product} are not 16-bit USB ids"
NOT_A_DIRECTORY = "the prefix {root} is not a directory"
NOT_A_FILE = "{path} exists and is not a file"
NO_SYSTEMD = (
    "this system is not running systemd (no {path}), which the service needs: nothing was "
    "written; see what it would do with --dry-run, or stage the files for the table with "
    "--prefix DIR"
)
NOT_ROOT = (
    "installing on / writes to /etc and runs systemctl: run it as root (sudo), or see what it "
    "would do with --dry-run, or stage the files with --prefix DIR"
)
STEP_FAILED = "the files are in place, but {why}; still to run after fixing it: {left}"
NOTHING = "nothing"
NO_PROGRAM_TO_RUN = "`{command}`: the program {program} is not on this system"
TOO_LONG = "`{command}` did not finish within {seconds} s"
COULD_NOT_RUN = "`{command}` could not run: {why}"
COMMAND_FAILED = "`{command}` failed (exit status {status}){said}"

#: every sentence above, the more particular first
INSTALL_SENTENCES: tuple[str, ...] = (
    CREATED,
    UPDATED,
    UNCHANGED,
    KEPT,
    REMOVED,
    CREATE,
    UPDATE,
    KEEP,
    REMOVE,
    NOT_OVERWRITTEN,
    PREVIOUS_ONE,
    WHY_USER,
    WHY_CONFIG_GROUP,
    WHY_CONFIG_MODE,
    WHY_UDEV_RELOAD,
    WHY_UDEV_TRIGGER,
    WHY_UDEV_SETTLE,
    WHY_DAEMON_RELOAD,
    WHY_ENABLE,
    WHY_RESTART,
    WHY_STATUS_ROLE,
    WHY_NOT_NETWORK,
    WHY_UART,
    CURRENT_ELSEWHERE,
    CONFIG_UNREADABLE,
    NOT_SEALED,
    NO_KEY_YET,
    NOT_ENABLED,
    NO_KIOSK_WANTED,
    NO_KIOSK_USER,
    KIOSK_UNREACHABLE,
    NO_GATEWAY,
    NO_STATION,
    UNKNOWN_PORT,
    HOST_NOT_ADDRESS,
    NO_PROGRAM,
    STAGED_PROGRAM,
    STAGED,
    NO_FILES,
    PANEL_NOT_INTEGERS,
    PANEL_NOT_USB,
    NOT_A_DIRECTORY,
    NOT_A_FILE,
    NO_SYSTEMD,
    NOT_ROOT,
    STEP_FAILED,
    NOTHING,
    NO_PROGRAM_TO_RUN,
    TOO_LONG,
    COULD_NOT_RUN,
    COMMAND_FAILED,
)
