"""The sentences a configuration's problems and warnings are told in, each named once: the
checks of controller/service/config*.py make them with their details (``{key}``, ``{got}``),
and :data:`CONFIG_SENTENCES` lists them, so that `mjtable config check` and the commands that
read a configuration say them in the technician's language (cli/lang.py), matched as the
table's sentences are (station/lang.py). No third-party import here: a command loads this
module to translate, not the configuration's models."""

from __future__ import annotations

# -- a problem: its key, then what is wrong (config_problems.py) --------------------------------
#: every problem: the key, then one of the sentences below (a validator's own among them)
SAID = "{key}: {problem}"
MISSING = "missing; expected {expected}"
UNKNOWN_SECTION = "unknown section; expected one of: {allowed}"
UNKNOWN_KEY = "unknown key; expected one of: {allowed}"
EXPECTED = "expected {expected}, got {got}"
MORE_ONE = "{problem} (1 more problem; `mjtable config check` lists them all)"
MORE = "{problem} ({more} more problems; `mjtable config check` lists them all)"
TOP_LEVEL = "(top level)"
A_VALID_VALUE = "a valid value"
A_TABLE = "a table"
AN_ARRAY = "an array"

# -- the file itself (config.py) ----------------------------------------------------------------
NOT_UTF8 = "not UTF-8 text: {why}"
NOT_TOML = "not valid TOML: {why}"
TOO_DEEP = "not valid TOML: nested too deeply"
UNREADABLE = "cannot read the configuration file: {why}"

# -- the validators' words (config.py, config_api.py, config_fields.py, config_gateway.py,
#    config_station.py) --------------------------------------------------------------------
PORT_EXPECTED = "expected a device path or a pyserial URL, got {got}"
PORT_NO_SCHEME = (
    "expected a device path or a pyserial URL, got {got}: pyserial knows no {scheme}:// URLs "
    "(e.g. socket://, rfc2217://, loop://, spy://, hwgrep://)"
)
PORT_RELATIVE = (
    "expected a device path or a pyserial URL, got {got}: a device path is absolute, e.g. {example}"
)
PROFILE_EXPECTED = "expected one of {profiles} or the path of a profile TOML file, got {got}"
PROFILE_NO_FILE = (
    "expected one of {profiles} or the path of a profile TOML file, got {got} (no such file: "
    "{path})"
)
RETIRED_DEADLINE = (
    "the board keeps the {key} deadline itself and reports it, and the controller derives its "
    "own from that report (docs/controller.md, 'Deadlines'): remove the key"
)
STATUS_BESIDE_TOO_LONG = (
    "{path} (beside api.socket) is longer than {most} bytes: give api.status_socket a shorter path"
)
STATUS_SAME = "expected another path than api.socket, got the same: {got}"
PER_PEER = "expected at most api.max_clients ({most}), got {got}"
MODE = "a file mode such as 0o660 (TOML octal integer) or '0660'"
MODE_EXPECTED = "expected {mode}, got {got}"
MODE_NOT_OCTAL = (
    "expected {mode}, got {got} (that is {octal}; write 0o660, a TOML octal integer, not 660)"
)
MODE_OTHERS_WRITE = "expected a mode without write access for others, got {got}: {why}"
OTHERS_TAKE_STATUS = (
    "anyone on the machine could take the status socket's places (use 0o660 and api.status_group)"
)
OTHERS_COMMAND = "anyone on the machine could command the table (use 0o660 and api.group)"
MODE_OWNER = "expected a mode that lets the service's own user read and write, got {got}"
SOCKET_TOO_LONG = "expected a socket path of at most {most} bytes, got {size} bytes: {got}"
PATH_EMPTY = "expected an absolute path to {what}, got ''"
PATH_NUL = "expected an absolute path to {what}, got a value with a NUL byte"
PATH_RELATIVE = "expected an absolute path to {what}, got {got}"
PATH_TOO_LONG = (
    "expected an absolute path to {what} of at most {most} bytes, each name at most {name}, "
    "got {got} ({size} bytes)"
)
THE_AUDIT_LOG = "the audit log"
THE_SEALING_KEY = "the sealing key"
THE_API_SOCKET = "the API socket"
THE_STATUS_SOCKET = "the status socket"
A_PEM_FILE = "a PEM file"
THE_OUTBOX = "the outbox file"
TOPIC_EXPECTED = "expected {what} without wildcards (+, #) or end slashes, got {got}"
A_TOPIC = "a topic"
A_TOPIC_PREFIX = "a topic prefix"
WEB_MOVED = (
    "[gateway.web] is now [station]: the page is served by `mjtable station`, which needs no "
    "broker (docs/web.md); rename the section"
)
RULES_ON_THE_FLOOR = (
    "the rules layer's topic {topic} is under the floor's {prefix}/: any floor client allowed "
    "to read the floor could read the dealt state"
)
NOT_A_ROLE = "{role}: expected a role, one of {roles}"
NOT_A_HASH = (
    "{role}: expected the hash `mjtable station token` prints (sha256: and 64 hex digits), "
    "never the token itself"
)
SAME_HASH = "expected a token of its own for each role, got the same hash twice"
CERT_AND_KEY = "expected both cert and key (TLS), or neither"
NO_WAY_IN = (
    "expected at least one way in: a token under [station.tokens] (`mjtable station token "
    "--role technician` makes one), or kiosk_user for the table's own display"
)

# -- what this machine lacks (config.py, check_environment), each said of its key (SAID) -----
NO_GROUP = "no group {group} on this machine; the socket will keep the service's own group"
NO_STATUS_GROUP = (
    "no group {group} on this machine; the status socket will keep the service's own group"
)
NO_DIRECTORY = "the directory {path} does not exist"
NO_PORT = "{port} does not exist now ({hint})"
PLUG_IT_IN = "is the board plugged in? see docs/install.md for the udev rule"
UART_OFF = (
    "is the Pi's UART on? enable_uart=1 in /boot/firmware/config.txt, or on a Raspberry Pi 5 "
    "dtparam=uart0=on and /dev/ttyAMA0, then reboot; docs/firmware.md, Wiring"
)
NO_BOARD = "no [board] section; only `mjtable run --sim` can start"

# -- the board's link on this machine (link_checks.py, ports.py) -------------------------------
WIRING = (
    "wire the Pi's GPIO 14 (TX) to the Pico's GP1, GPIO 15 (RX) to GP0, GND to GND "
    "(docs/firmware.md, Wiring)"
)
OLD_BOARD_NAME = (
    "{port} was the name an older udev rule gave the Pico's USB port, MicroPython's REPL, for "
    "flashing only. The board speaks on its UART0: {wiring}, then {use} and run `sudo mjtable "
    "install` again"
)
PICO_USB = (
    "{port} is a Raspberry Pi Pico's USB port (2e8a:0005): MicroPython's REPL, for flashing "
    "only; a 0x03 byte in a frame is Ctrl-C there and stops the firmware. The board speaks on "
    "its UART0: {wiring}, then {use}"
)
PI5_DEBUG = (
    "{port} is {node}, a Raspberry Pi 5's debug connector, not GPIO 14/15 where the board is "
    "wired: on a Pi 5 set dtparam=uart0=on in /boot/firmware/config.txt, reboot, and name the "
    'UART of GPIO 14/15: board.port = "/dev/ttyAMA0"'
)
SERIAL_CONSOLE = (
    "the Pi's serial console is on {port} (console={console} in /{file}): the kernel's messages "
    "and a login prompt would share the board's line; turn it off with `sudo raspi-config "
    "nonint do_serial_cons 1` (or raspi-config: Interface Options, Serial Port, login shell No, "
    "serial port hardware Yes), then reboot"
)
NO_CTS = (
    "true, but /{file} gives the Pi's UART no CTS, so it would wait on the board forever and "
    "never send: wire the Pico's GP3 (RTS) to the Pi's GPIO 16 (pin 36), add gpio=16=a3 to "
    "/{file} (a Raspberry Pi 3 or 4, with dtoverlay=disable-bt; on a Pi 5 "
    "dtoverlay=uart0-pi5,ctsrts), then reboot; or set board.rtscts = false"
)
#: how to name the UART instead: in a configuration, on the command line
SET_PORT = 'set board.port = "{port}"'
GIVE_PORT = "give --port {port}"
#: a port in words (ports.py): its path, its node when the path is a link, its kind (matched
#: as one sentence a kind: :data:`PORT_SENTENCES`)
PORT_IS = "{port}, {kind}"
PORT_NODE_IS = "{port} ({node}), {kind}"
UNIT_FORBIDS = (
    "{port}; the installed unit {unit} (with {dropins}/) does not allow {what}, so the service "
    "would get 'Operation not permitted': run `sudo mjtable install` again (it writes the "
    "drop-in for board.port)"
)
#: the kinds of port (ports.py), each with its article: "the board is on {kind}"
USB_ACM = "a native USB serial port (ttyACM)"
USB_SERIAL = "a USB-serial adapter (ttyUSB)"
PI_UART = "the Pi's UART (ttyAMA / ttyS0)"
NETWORK = "a network address"
OTHER_PORT = "a port of no known kind"
INTERNET_SOCKETS = "Internet sockets"
THIS_DEVICE = "this device"
RULE_FORBIDS = (
    "{port}; the installed udev rule {rules} does not give it to group mjtable, so the service "
    "(user mjtable) would get 'Permission denied': run `sudo mjtable install` again (it writes "
    "the rule for board.port)"
)

#: a port in words, one sentence a form and a kind: a general "{port}, {kind}" would take any
#: sentence with a comma
PORT_SENTENCES: tuple[str, ...] = tuple(
    form.replace("{kind}", kind)
    for form in (PORT_NODE_IS, PORT_IS)
    for kind in (USB_ACM, USB_SERIAL, PI_UART, NETWORK, OTHER_PORT)
)

#: every sentence above but :data:`SAID`, the more particular before the more general ones
#: that could take it whole (:data:`EXPECTED` last); a matcher tries them before the table's
#: (a problem's key is split off first: cli/lang.py)
CONFIG_SENTENCES: tuple[str, ...] = (
    MISSING,
    UNKNOWN_SECTION,
    UNKNOWN_KEY,
    MORE_ONE,
    MORE,
    TOP_LEVEL,
    A_VALID_VALUE,
    A_TABLE,
    AN_ARRAY,
    NOT_UTF8,
    TOO_DEEP,
    NOT_TOML,
    UNREADABLE,
    PORT_NO_SCHEME,
    PORT_RELATIVE,
    PORT_EXPECTED,
    PROFILE_NO_FILE,
    PROFILE_EXPECTED,
    RETIRED_DEADLINE,
    STATUS_BESIDE_TOO_LONG,
    STATUS_SAME,
    PER_PEER,
    MODE,
    MODE_NOT_OCTAL,
    MODE_OTHERS_WRITE,
    OTHERS_TAKE_STATUS,
    OTHERS_COMMAND,
    MODE_OWNER,
    SOCKET_TOO_LONG,
    PATH_EMPTY,
    PATH_NUL,
    PATH_TOO_LONG,
    PATH_RELATIVE,
    THE_AUDIT_LOG,
    THE_SEALING_KEY,
    THE_API_SOCKET,
    THE_STATUS_SOCKET,
    A_PEM_FILE,
    THE_OUTBOX,
    TOPIC_EXPECTED,
    A_TOPIC,
    A_TOPIC_PREFIX,
    WEB_MOVED,
    RULES_ON_THE_FLOOR,
    NOT_A_ROLE,
    NOT_A_HASH,
    SAME_HASH,
    CERT_AND_KEY,
    NO_WAY_IN,
    NO_GROUP,
    NO_STATUS_GROUP,
    NO_DIRECTORY,
    NO_PORT,
    PLUG_IT_IN,
    UART_OFF,
    NO_BOARD,
    WIRING,
    OLD_BOARD_NAME,
    PICO_USB,
    PI5_DEBUG,
    SERIAL_CONSOLE,
    NO_CTS,
    UNIT_FORBIDS,
    RULE_FORBIDS,
    INTERNET_SOCKETS,
    THIS_DEVICE,
    SET_PORT,
    GIVE_PORT,
    USB_ACM,
    USB_SERIAL,
    PI_UART,
    NETWORK,
    OTHER_PORT,
    *PORT_SENTENCES,
    MODE_EXPECTED,
    EXPECTED,
)
