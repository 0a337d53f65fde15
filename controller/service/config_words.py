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

# -- what this machine lacks (config.py, check_environment) ---------------------------------
NO_GROUP = (
    "api.group: no group {group} on this machine; the socket will keep the service's own group"
)
NO_STATUS_GROUP = (
    "api.status_group: no group {group} on this machine; the status socket will keep the "
    "service's own group"
)
NO_SOCKET_DIR = "api.socket: the directory {path} does not exist"
NO_AUDIT_DIR = "audit.path: the directory {path} does not exist"
NO_PORT = "board.port: {port} does not exist now ({hint})"
PLUG_IT_IN = "is the board plugged in? see docs/install.md for the udev rule"
UART_OFF = (
    "is the Pi's UART on? enable_uart=1 in /boot/firmware/config.txt, or on a Raspberry Pi 5 "
    "dtparam=uart0=on and /dev/ttyAMA0, then reboot; docs/firmware.md, Wiring"
)
NO_BOARD = "board: no [board] section; only `mjtable run --sim` can start"

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
    NO_SOCKET_DIR,
    NO_AUDIT_DIR,
    NO_PORT,
    PLUG_IT_IN,
    UART_OFF,
    NO_BOARD,
    MODE_EXPECTED,
    EXPECTED,
)
