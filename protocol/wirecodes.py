"""The protocol's codes as numbers: what travels on the wire, and all the board needs of them.

Every code travels as one unsigned byte (BUILD_UNKNOWN excepted: a build hash's 16 hex digits).
The names, texts and advice of each code (the tables ``FAULTS``, ``STATES``... and their
look-ups) are the host's: ``protocol/codes.py``, which holds these numbers too. The board imports
this module alone, so that those tables (about 30 KB of its heap from a ``.mpy`` file) stay off
it; a test keeps the two modules' codes the same.

MicroPython-compatible: plain integers, no imports.
"""

# --- Tiles -------------------------------------------------------------------------------------

TILE_UNKNOWN = 0xFF  # a board without a tile reader reports positions only


#: the highest rank of each suit (a tile code's high nibble): m, p, s, the winds, the dragons,
#: the flowers
_TOP_RANK = b"\x09\x09\x09\x04\x03\x08"


def is_tile_code(code: int) -> bool:
    """True for a tile code (1m..9m 0x01..0x09, 1p..9p 0x11..0x19, 1s..9s 0x21..0x29, E S W N
    0x31..0x34, C F B 0x41..0x43, 1f..8f 0x51..0x58: codes.TILE_CODES) or 0xFF (unknown)."""
    if code == TILE_UNKNOWN:
        return True
    if code < 0 or code >= 0x60:
        return False
    rank = code & 0x0F
    return 1 <= rank <= _TOP_RANK[code >> 4]


# --- Board states (Heartbeat.state, SensorData.state) ------------------------------------------

STATE_BOOT = 0
STATE_IDLE = 1
STATE_SHUFFLING = 2
STATE_SHUFFLED = 3
STATE_BUILDING = 4
STATE_BUILT = 5
STATE_LIFTING = 6
STATE_UP = 7
STATE_COLLECTING = 8
STATE_ROLLING = 9
STATE_MOTOR_TEST = 10
STATE_FAULT = 11
STATE_ESTOP = 12
STATE_STOPPED = 13
#: the states in which a motion runs: the board's state machine (firmware/board.py) and the
#: controller's view of the board (controller/cycle/places.py) read them here
MOVING_STATES: tuple[int, ...] = (
    STATE_SHUFFLING,
    STATE_BUILDING,
    STATE_LIFTING,
    STATE_COLLECTING,
    STATE_ROLLING,
    STATE_MOTOR_TEST,
)

# --- Phases (Progress.phase, Fault.phase) ------------------------------------------------------

PHASE_NONE = 0
PHASE_SHUFFLE = 1
PHASE_BUILD = 2
PHASE_LIFT = 3
PHASE_DICE = 4
PHASE_COLLECT = 5
PHASE_MANIFEST = 6
PHASE_MOTOR_TEST = 7

# --- Motors (MotorTest.motor, MotorResult.motor, SensorData.currents_ma index) ----------------

MOTOR_SHUFFLE_DISC = 0
MOTOR_STACKER_HEAD = 1
MOTOR_CHAIN = 2
MOTOR_LIFT_E = 3
MOTOR_LIFT_S = 4
MOTOR_LIFT_W = 5
MOTOR_LIFT_N = 6
MOTOR_CENTRE_LIFT = 7
MOTOR_DICE = 8
MOTOR_COUNT = 9

# --- Subsystems (Fault.subsystem) --------------------------------------------------------------

SUB_BOARD = 0
SUB_SHUFFLER = 1
SUB_STACKER_HEAD = 2
SUB_CHAIN = 3
SUB_LIFTS = 4
SUB_DICE = 5
SUB_READER = 6
SUB_SAFETY = 7
SUB_POWER = 8

# --- Fault codes (Fault.code, SensorData.fault; 0 = no fault) ----------------------------------

FAULT_NONE = 0
FAULT_SORT_TIMEOUT = 1
FAULT_HEAD_JAM = 2
FAULT_WALL_SHORT = 3
FAULT_WALL_EXTRA = 4
FAULT_MOTOR_STALL = 5
FAULT_LIFT_LIMIT = 6
FAULT_CHAIN_HOME = 7
FAULT_DICE_FAULT = 8
FAULT_OVERHEAT = 9
FAULT_COVER_OPEN = 10
FAULT_ESTOP = 11
FAULT_TILE_COUNT = 12
FAULT_READER_FAULT = 13
FAULT_INTERNAL = 14
FAULT_SENSOR_BROKEN = 15
FAULT_DRIVER_SHORT = 16
FAULT_MOTION_TIMEOUT = 17
FAULT_HOST_LOST = 18
FAULT_PART_MISSING = 19
#: FAULT INTERNAL's detail: an exception in the firmware's loop (it goes on), or at its start
#: (the board speaks the protocol and refuses every motion until it is restarted)
INTERNAL_LOOP = 0xEE
INTERNAL_START = 0xEF

# --- Analogue sensors (FAULT SENSOR_BROKEN's detail) -------------------------------------------
# detail 0..8: the current sense of that motor (its shunt and amplifier, through the multiplexer)

SENSOR_NTC = 9
SENSOR_MUX = 10
#: SENSOR_DATA's "no reading": a current sense or the NTC outside its physical range (broken)
NO_CURRENT = 0xFFFF
NO_TEMPERATURE = -0x8000

# --- Refusal reasons (Refused.reason) ----------------------------------------------------------

REFUSE_BAD_STATE = 1
REFUSE_FAULTED = 2
REFUSE_ESTOP_HELD = 3
REFUSE_BAD_ARGUMENT = 4
REFUSE_UNSUPPORTED = 5
REFUSE_CAUSE_PRESENT = 6
REFUSE_BUSY = 7
REFUSE_BAD_LAYOUT = 8
REFUSE_UNKNOWN_COMMAND = 9
BLOCK_BOOTING = 1
BLOCK_SET_NOT_IN_DISC = 2
BLOCK_SET_NOT_SHUFFLED = 3
BLOCK_SET_NOT_BUILT = 4
BLOCK_SURFACE_OCCUPIED = 5
BLOCK_BENCH_OCCUPIED = 6
BLOCK_COVER_OPEN = 7

# --- Capabilities (HelloReply.capabilities) ----------------------------------------------------

CAP_READER = 1
CAP_DICE = 2
CAP_BUTTONS = 4
CAP_SEEDED = 8

# --- SensorData.flags bits ---------------------------------------------------------------------

FLAG_COVER_CLOSED = 1
FLAG_TRAP_OPEN = 2
FLAG_HEAD_HOME = 4
FLAG_BELT_FULL = 8
FLAG_ESTOP = 16
FLAG_CHAIN_HOME = 32
FLAG_DICE_PRESENT = 64
FLAG_READER_OK = 128

# --- Buttons (Button.button) -------------------------------------------------------------------

BUTTON_SHUFFLE = 1
BUTTON_DEAL = 2
BUTTON_STOP = 3
BUTTON_CLEAR = 4
BUTTON_DICE = 5

# --- Tile sets ---------------------------------------------------------------------------------

TILE_SET_A = 0
TILE_SET_B = 1

# --- Places of a tile set (BOARD_STATUS.places, HELLO_REPLY.status) ----------------------------

PLACE_DISC = 0
PLACE_SHUFFLED = 1
PLACE_BUILDING = 2
PLACE_PARTIAL = 3
PLACE_BUILT = 4
PLACE_UP = 5
PLACE_UNKNOWN = 6

# --- Reset causes (BOARD_STATUS.reset_cause, HELLO_REPLY.status) -------------------------------

RESET_POWER_ON = 0
RESET_WATCHDOG = 1
RESET_SOFT = 2
RESET_BROWN_OUT = 3
RESET_PIN = 4
RESET_UNKNOWN = 5
#: BOARD_STATUS.build_hash of a firmware that was not built by ``mjtable firmware build``
BUILD_UNKNOWN = "0000000000000000"

# --- Look-ups ----------------------------------------------------------------------------------

#: DONE.result: how a command ended
RESULT_OK = 0
RESULT_STOPPED = 1
