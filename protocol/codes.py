"""Code tables of the board protocol: tiles, states, phases, motors, faults, places, resets...

Every code travels as one unsigned byte. Each table maps a code to ``(NAME, text, advice)`` (advice
is the empty string where there is nothing for a technician to check); the names are the ones used
in logs and in docs/protocol.md.

The codes themselves, as numbers, are protocol/wirecodes.py's, all of them here too: the board
imports that module alone (these tables of words are the host's, and from a ``.mpy`` file they
would take about 30 KB of the board's heap), the host this one.

MicroPython-compatible: plain dicts and functions.
"""

from protocol.wirecodes import *  # noqa: F403 (the codes as numbers: this module's too)

# --- Tiles -------------------------------------------------------------------------------------


_TILE_NAMES = []  # type: list[tuple[int, str]]
for _i in range(9):
    _TILE_NAMES.append((0x01 + _i, str(_i + 1) + "m"))
for _i in range(9):
    _TILE_NAMES.append((0x11 + _i, str(_i + 1) + "p"))
for _i in range(9):
    _TILE_NAMES.append((0x21 + _i, str(_i + 1) + "s"))
for _i, _w in enumerate(("E", "S", "W", "N")):
    _TILE_NAMES.append((0x31 + _i, _w))
for _i, _d in enumerate(("C", "F", "B")):
    _TILE_NAMES.append((0x41 + _i, _d))
for _i in range(8):
    _TILE_NAMES.append((0x51 + _i, str(_i + 1) + "f"))

#: code -> tile name in the seeds' notation
TILE_CODES: dict[int, str] = {}
#: tile name -> code
TILE_BY_NAME: dict[str, int] = {}
for _code, _name in _TILE_NAMES:
    TILE_CODES[_code] = _name
    TILE_BY_NAME[_name] = _code

#: input aliases: the French name of West and lower-case honours
_TILE_ALIASES: dict[str, str] = {
    "O": "W",
    "o": "W",
    "e": "E",
    "s": "S",
    "w": "W",
    "n": "N",
    "c": "C",
    "f": "F",
    "b": "B",
}


def tile_to_code(name: str) -> int:
    """The one-byte code of a tile name (``'1m'``, ``'E'``, ``'O'`` for West, ``'5f'``...).

    Raises ValueError naming the tile when it is not in the table.
    """
    text = name.strip()
    code = TILE_BY_NAME.get(text)
    if code is None:
        alias = _TILE_ALIASES.get(text)
        code = TILE_BY_NAME[alias] if alias is not None else TILE_BY_NAME.get(text.lower())
    if code is None:
        raise ValueError(
            "unknown tile "
            + repr(name)
            + ": expected 1m..9m, 1p..9p, 1s..9s, E S W N (or O), C F B, or 1f..8f"
        )
    return code


def code_to_tile(code: int) -> str | None:
    """The tile name of a code; None for 0xFF (unknown: board without reader).

    Raises ValueError for a byte that is neither a tile code nor 0xFF.
    """
    if code == TILE_UNKNOWN:
        return None
    name = TILE_CODES.get(code)
    if name is None:
        raise ValueError("unknown tile code " + hex(code))
    return name


# --- Board states (Heartbeat.state, SensorData.state) ------------------------------------------


STATES: dict[int, tuple[str, str, str]] = {
    STATE_BOOT: ("BOOT", "starting up, no session yet", ""),
    STATE_IDLE: ("IDLE", "waiting for a command", ""),
    STATE_SHUFFLING: ("SHUFFLING", "shuffling a tile set", ""),
    STATE_SHUFFLED: ("SHUFFLED", "tile set shuffled, ready to build", ""),
    STATE_BUILDING: ("BUILDING", "building the four walls", ""),
    STATE_BUILT: ("BUILT", "walls built under the table", ""),
    STATE_LIFTING: ("LIFTING", "raising the walls", ""),
    STATE_UP: ("UP", "walls raised on the table", ""),
    STATE_COLLECTING: ("COLLECTING", "lowering the walls and collecting tiles", ""),
    STATE_ROLLING: ("ROLLING", "rolling the dice", ""),
    STATE_MOTOR_TEST: ("MOTOR_TEST", "running one motor (technician mode)", ""),
    STATE_FAULT: ("FAULT", "stopped on a fault", "read the fault, fix it, send CLEAR_FAULT"),
    STATE_ESTOP: ("ESTOP", "emergency stop pressed", "release the emergency stop"),
    STATE_STOPPED: ("STOPPED", "all motion stopped by STOP", ""),
}

# --- Phases (Progress.phase, Fault.phase) ------------------------------------------------------


PHASES: dict[int, tuple[str, str, str]] = {
    PHASE_NONE: ("NONE", "no phase", ""),
    PHASE_SHUFFLE: ("SHUFFLE", "shuffling", ""),
    PHASE_BUILD: ("BUILD", "building walls", ""),
    PHASE_LIFT: ("LIFT", "raising walls", ""),
    PHASE_DICE: ("DICE", "rolling dice", ""),
    PHASE_COLLECT: ("COLLECT", "collecting tiles", ""),
    PHASE_MANIFEST: ("MANIFEST", "sending the wall manifest", ""),
    PHASE_MOTOR_TEST: ("MOTOR_TEST", "motor test", ""),
}

# --- Motors (MotorTest.motor, MotorResult.motor, SensorData.currents_ma index) ----------------


MOTORS: dict[int, tuple[str, str, str]] = {
    MOTOR_SHUFFLE_DISC: ("SHUFFLE_DISC", "shuffle disc", "check the disc belt and the magnets"),
    MOTOR_STACKER_HEAD: ("STACKER_HEAD", "stacker head", "check the head for a stuck tile"),
    MOTOR_CHAIN: ("CHAIN", "chain conveyor", "check the chain tension and the home sensor"),
    MOTOR_LIFT_E: ("LIFT_E", "lift plate East", "check the East plate for obstruction"),
    MOTOR_LIFT_S: ("LIFT_S", "lift plate South", "check the South plate for obstruction"),
    MOTOR_LIFT_W: ("LIFT_W", "lift plate West", "check the West plate for obstruction"),
    MOTOR_LIFT_N: ("LIFT_N", "lift plate North", "check the North plate for obstruction"),
    MOTOR_CENTRE_LIFT: ("CENTRE_LIFT", "centre lift", "check the centre lift and the trap"),
    MOTOR_DICE: ("DICE", "dice motor", "check the dice dome"),
}

# --- Subsystems (Fault.subsystem) --------------------------------------------------------------


SUBSYSTEMS: dict[int, tuple[str, str, str]] = {
    SUB_BOARD: ("BOARD", "board", ""),
    SUB_SHUFFLER: ("SHUFFLER", "shuffler", ""),
    SUB_STACKER_HEAD: ("STACKER_HEAD", "stacker head", ""),
    SUB_CHAIN: ("CHAIN", "chain/conveyor", ""),
    SUB_LIFTS: ("LIFTS", "lifts", ""),
    SUB_DICE: ("DICE", "dice", ""),
    SUB_READER: ("READER", "tile reader", ""),
    SUB_SAFETY: ("SAFETY", "cover/safety", ""),
    SUB_POWER: ("POWER", "thermal/power", ""),
}

# --- Fault codes (Fault.code, SensorData.fault; 0 = no fault) ----------------------------------


FAULTS: dict[int, tuple[str, str, str]] = {
    FAULT_SORT_TIMEOUT: (
        "SORT_TIMEOUT",
        "a tile was never picked up at the stacker head: a jam on its way",
        "open the table, look for a tile stuck between the disc and the head, remove it",
    ),
    FAULT_HEAD_JAM: (
        "HEAD_JAM",
        "the stacker head is jammed",
        "clear the stacker head by hand; check the hall sensors of the head",
    ),
    FAULT_WALL_SHORT: (
        "WALL_SHORT",
        "a wall is short of tiles (detail = wall 0..3)",
        "count the tiles of the set; look for a tile left in the disc or fallen under the table",
    ),
    FAULT_WALL_EXTRA: (
        "WALL_EXTRA",
        "a wall has a tile too many (detail = wall 0..3)",
        "check that no tile of the other set got mixed in; check the tile counting sensor",
    ),
    FAULT_MOTOR_STALL: (
        "MOTOR_STALL",
        "motor current over the limit (detail = motor 0..8)",
        "switch off, check that motor for an obstruction; run MOTOR_TEST on it after",
    ),
    FAULT_LIFT_LIMIT: (
        "LIFT_LIMIT",
        "a lift plate never reached its limit switch (detail = plate 0..3, 4 centre)",
        "check the plate for an obstruction and the limit switch wiring",
    ),
    FAULT_CHAIN_HOME: (
        "CHAIN_HOME",
        "the chain never returned home",
        "check the chain tension and the chain home sensor",
    ),
    FAULT_DICE_FAULT: (
        "DICE_FAULT",
        "dice motor or dice sensor failure",
        "check the dice dome, its motor and sensor; roll by hand meanwhile",
    ),
    FAULT_OVERHEAT: (
        "OVERHEAT",
        "board or motor temperature over the limit",
        "let the table cool down; check the fan and the vents",
    ),
    FAULT_COVER_OPEN: (
        "COVER_OPEN",
        "the cover or the trap was opened during a cycle",
        "close the cover and the trap, then clear the fault",
    ),
    FAULT_ESTOP: (
        "ESTOP",
        "the emergency stop was pressed",
        "make the table safe, release the emergency stop, then clear the fault",
    ),
    FAULT_TILE_COUNT: (
        "TILE_COUNT",
        "the tile count at the reader does not match the tile set",
        "count the tiles of the set; check for a foreign or missing tile",
    ),
    FAULT_READER_FAULT: (
        "READER_FAULT",
        "the tile reader does not answer",
        "check the reader's cable and power; the table can deal without identities meanwhile",
    ),
    FAULT_INTERNAL: (
        "INTERNAL",
        "board firmware error (detail = 0xEE in its loop, 0xEF at its start)",
        "note the detail byte, reset the board; report it if it happens again",
    ),
    FAULT_SENSOR_BROKEN: (
        "SENSOR_BROKEN",
        "an analogue sensor reads outside its physical range: open or shorted (detail = "
        "the sensor: 0..8 a motor's current sense, 9 the heat-sink NTC, 10 the current "
        "multiplexer)",
        "check the wires and plug of the sensor the detail names; no motion starts until it "
        "reads in range, then clear the fault",
    ),
    FAULT_DRIVER_SHORT: (
        "DRIVER_SHORT",
        "current flows in a motor commanded off: its driver is shorted (detail = motor 0..8)",
        "switch the table off at its mains switch now (neither the board nor the emergency "
        "stop can stop a shorted driver) and have that motor's driver replaced",
    ),
    FAULT_MOTION_TIMEOUT: (
        "MOTION_TIMEOUT",
        "a motion ran past the board's deadline for its phase (detail = the deadline, seconds)",
        "watch that motion: a mechanism runs slow or slips (a feed that barely keeps up, a worn "
        "belt); run MOTOR_TEST on its motors, then clear the fault",
    ),
    FAULT_HOST_LOST: (
        "HOST_LOST",
        "the link to the controller was down during a motion: the board stopped it "
        "(detail = seconds the link was down)",
        "check the cable between the controller and the board, and whether the controller's "
        "service stopped during the motion, then clear the fault",
    ),
    FAULT_PART_MISSING: (
        "PART_MISSING",
        "a part on the board's I2C bus does not answer (detail = its I2C address)",
        "check the part's cable and power and reseat it, then clear the fault",
    ),
}


#: FAULT PART_MISSING's detail: the parts on the reference board's I2C bus, by address
PARTS: dict[int, tuple[str, str, str]] = {
    0x20: (
        "INPUT_EXPANDER",
        "input expander at I2C 0x20 (MCP23017: the limit switches, belt full)",
        "check the cable between the board and the input expander, and its power",
    ),
    0x21: (
        "OUTPUT_EXPANDER",
        "output expander at I2C 0x21 (MCP23017: lift directions, set gate, LEDs, current "
        "multiplexer)",
        "check the cable between the board and the output expander, and its power",
    ),
    0x30: (
        "DICE_UNIT",
        "dice unit at I2C 0x30",
        "check the cable between the board and the dice unit, and its power",
    ),
}

# --- Analogue sensors (FAULT SENSOR_BROKEN's detail) -------------------------------------------
# detail 0..8: the current sense of that motor (its shunt and amplifier, through the multiplexer)


ANALOGUE_SENSORS: dict[int, tuple[str, str, str]] = {
    SENSOR_NTC: (
        "HEATSINK_NTC",
        "the heat-sink temperature sensor (NTC)",
        "check the NTC's two wires on the drivers' heat sink and its plug on the board",
    ),
    SENSOR_MUX: (
        "CURRENT_MUX",
        "the current-sense multiplexer",
        "check the multiplexer's supply and its select lines from the output expander",
    ),
}


#: a motor's current sense (detail 0..8), in words and what to check, the motor named
CURRENT_SENSE = "the current sense of the {motor}"
CURRENT_SENSE_CHECK = "check the {motor}'s shunt, its current-sense amplifier and their wires"


def analogue_sensor_info(detail: int) -> tuple[str, str, str]:
    """``(NAME, words, what to check)`` of the sensor a SENSOR_BROKEN fault names."""
    motor = MOTORS.get(detail)
    if motor is not None:
        return (
            "CURRENT_" + motor[0],
            CURRENT_SENSE.format(motor=motor[1]),
            CURRENT_SENSE_CHECK.format(motor=motor[1]),
        )
    return _lookup(ANALOGUE_SENSORS, detail)


# --- Refusal reasons (Refused.reason) ----------------------------------------------------------


REFUSALS: dict[int, tuple[str, str, str]] = {
    REFUSE_BAD_STATE: ("BAD_STATE", "not possible in this state", "check the board state first"),
    REFUSE_FAULTED: ("FAULTED", "the board is in fault", "clear the fault first"),
    REFUSE_ESTOP_HELD: (
        "ESTOP_HELD",
        "the emergency stop is held",
        "release the emergency stop",
    ),
    REFUSE_BAD_ARGUMENT: (
        "BAD_ARGUMENT",
        "a field of the command is out of range (detail = index of the bad field)",
        "check that the controller and the board firmware speak the same protocol version",
    ),
    REFUSE_UNSUPPORTED: (
        "UNSUPPORTED",
        "the board has no such unit (no dice unit / no reader)",
        "set the configuration to what the table has (dice.source), or fit the unit",
    ),
    REFUSE_CAUSE_PRESENT: (
        "CAUSE_PRESENT",
        "CLEAR_FAULT refused: the cause of the fault is still there",
        "remove the cause of the fault, then clear it again",
    ),
    REFUSE_BUSY: ("BUSY", "the board is busy with another command", "wait for DONE or send STOP"),
    REFUSE_BAD_LAYOUT: (
        "BAD_LAYOUT",
        "the wall layout does not fit the tile set",
        "check that the rule set in the configuration matches the tiles in the table "
        "(108, 136 or 144)",
    ),
    REFUSE_UNKNOWN_COMMAND: (
        "UNKNOWN_COMMAND",
        "the board does not know this command",
        "update the board firmware to the controller's protocol version",
    ),
}

#: REFUSED(BAD_STATE).detail: what blocks the command (0 = not said)


BLOCKS: dict[int, tuple[str, str, str]] = {
    BLOCK_BOOTING: ("BOOTING", "the board has no session yet", "send HELLO"),
    BLOCK_SET_NOT_IN_DISC: (
        "SET_NOT_IN_DISC",
        "that set is not in the shuffle disc (it is built or on the table)",
        "collect it first",
    ),
    BLOCK_SET_NOT_SHUFFLED: ("SET_NOT_SHUFFLED", "that set is not shuffled", "shuffle it first"),
    BLOCK_SET_NOT_BUILT: (
        "SET_NOT_BUILT",
        "that set has no built walls",
        "shuffle and build it first",
    ),
    BLOCK_SURFACE_OCCUPIED: (
        "SURFACE_OCCUPIED",
        "the other set is still on the table",
        "collect it first",
    ),
    BLOCK_BENCH_OCCUPIED: (
        "BENCH_OCCUPIED",
        "the other set's walls still wait under the table",
        "lift them first",
    ),
    BLOCK_COVER_OPEN: ("COVER_OPEN", "the cover is open", "close the cover"),
}

# --- Capabilities (HelloReply.capabilities) ----------------------------------------------------


CAPABILITIES: dict[int, tuple[str, str, str]] = {
    CAP_READER: ("READER", "tile reader fitted: the manifest carries identities", ""),
    CAP_DICE: ("DICE", "dice unit fitted", ""),
    CAP_BUTTONS: ("BUTTONS", "seat buttons wired to the board", ""),
    CAP_SEEDED: ("SEEDED", "the seed field of HELLO_REPLY is valid", ""),
}

# --- SensorData.flags bits ---------------------------------------------------------------------


SENSOR_FLAGS: dict[int, tuple[str, str, str]] = {
    FLAG_COVER_CLOSED: ("COVER_CLOSED", "cover closed", ""),
    FLAG_TRAP_OPEN: ("TRAP_OPEN", "centre trap open", ""),
    FLAG_HEAD_HOME: ("HEAD_HOME", "stacker head at home", ""),
    FLAG_BELT_FULL: ("BELT_FULL", "belt full", ""),
    FLAG_ESTOP: ("ESTOP", "emergency stop pressed", ""),
    FLAG_CHAIN_HOME: ("CHAIN_HOME", "chain at home", ""),
    FLAG_DICE_PRESENT: ("DICE_PRESENT", "dice present in the dome", ""),
    FLAG_READER_OK: ("READER_OK", "tile reader answering", ""),
}

#: lift_up / lift_down bitmask: bit 0..3 walls E S W N, bit 4 centre lift
LIFT_BITS: dict[int, tuple[str, str, str]] = {
    1: ("E", "lift plate East", ""),
    2: ("S", "lift plate South", ""),
    4: ("W", "lift plate West", ""),
    8: ("N", "lift plate North", ""),
    16: ("CENTRE", "centre lift", ""),
}

# --- Buttons (Button.button) -------------------------------------------------------------------


BUTTONS: dict[int, tuple[str, str, str]] = {
    BUTTON_SHUFFLE: ("SHUFFLE", "shuffle button", ""),
    BUTTON_DEAL: ("DEAL", "deal button", ""),
    BUTTON_STOP: ("STOP", "stop button", ""),
    BUTTON_CLEAR: ("CLEAR", "clear-fault button", ""),
    BUTTON_DICE: ("DICE", "dice button", ""),
}

# --- Tile sets ---------------------------------------------------------------------------------

TILE_SETS: dict[int, tuple[str, str, str]] = {
    TILE_SET_A: ("A", "tile set A", ""),
    TILE_SET_B: ("B", "tile set B", ""),
}


# --- Places of a tile set (BOARD_STATUS.places, HELLO_REPLY.status) ----------------------------


PLACES: dict[int, tuple[str, str, str]] = {
    PLACE_DISC: ("DISC", "loose in the shuffle disc, order unknown", ""),
    PLACE_SHUFFLED: ("SHUFFLED", "in the disc, shuffled: ready to build", ""),
    PLACE_BUILDING: ("BUILDING", "being built into walls (laid = tiles in walls so far)", ""),
    PLACE_PARTIAL: (
        "PARTIAL",
        "a build stopped or faulted: laid tiles in walls under the table, the rest in the disc",
        "",
    ),
    PLACE_BUILT: ("BUILT", "four walls built under the table", ""),
    PLACE_UP: ("UP", "walls raised on the table: the set being played", ""),
    PLACE_UNKNOWN: (
        "UNKNOWN",
        "the board lost track of the set (power lost while it moved)",
        "look under the table and on it for tiles of this set before the next cycle",
    ),
}

# --- Reset causes (BOARD_STATUS.reset_cause, HELLO_REPLY.status) -------------------------------


RESET_CAUSES: dict[int, tuple[str, str, str]] = {
    RESET_POWER_ON: ("POWER_ON", "power was applied", ""),
    RESET_WATCHDOG: (
        "WATCHDOG",
        "the watchdog reset the board: its main loop stopped",
        "note what the table was doing; report it if it happens again",
    ),
    RESET_SOFT: ("SOFT_RESET", "the firmware restarted itself (the RESET command)", ""),
    RESET_BROWN_OUT: (
        "BROWN_OUT",
        "the supply voltage dipped below the board's minimum",
        "check the power supply and its cable; a motor start should not pull it down",
    ),
    RESET_PIN: ("RESET_PIN", "the reset (RUN) pin or a debugger restarted the board", ""),
    RESET_UNKNOWN: ("UNKNOWN", "the board cannot tell why it started", ""),
}


# --- Look-ups ----------------------------------------------------------------------------------


def _lookup(table: dict[int, tuple[str, str, str]], code: int) -> tuple[str, str, str]:
    entry = table.get(code)
    if entry is None:
        return ("UNKNOWN_" + str(code), "unknown code " + str(code), "")
    return entry


def fault_info(code: int) -> tuple[str, str, str]:
    """``(NAME, text, advice)`` of a fault code; an unknown code gives ``UNKNOWN_<n>``."""
    return _lookup(FAULTS, code)


RESULTS: dict[int, tuple[str, str, str]] = {
    RESULT_OK: ("OK", "the command completed", ""),
    RESULT_STOPPED: ("STOPPED", "STOP interrupted the command before the end", ""),
}


#: a part the table does not know, by its address on the bus
PART_AT = "part at {where}"
PART_AT_CHECK = "check that part's cable and its power"


def part_info(address: int) -> tuple[str, str, str]:
    """``(NAME, text, advice)`` of a part on the board's I2C bus, by its address; one the table
    does not know is ``I2C_0x..``, named by its address."""
    entry = PARTS.get(address)
    if entry is None:
        where = "I2C 0x%02x" % address  # noqa: UP031 (MicroPython)
        return ("I2C_" + where[4:], PART_AT.format(where=where), PART_AT_CHECK)
    return entry


def refusal_info(code: int) -> tuple[str, str, str]:
    """``(NAME, text, advice)`` of a refusal reason."""
    return _lookup(REFUSALS, code)


def block_info(detail: int) -> tuple[str, str, str]:
    """``(NAME, text, advice)`` of what blocks a command refused with BAD_STATE."""
    return _lookup(BLOCKS, detail)


def fault_name(code: int) -> str:
    return _lookup(FAULTS, code)[0]


def refusal_name(code: int) -> str:
    return _lookup(REFUSALS, code)[0]


def state_name(code: int) -> str:
    return _lookup(STATES, code)[0]


def phase_name(code: int) -> str:
    return _lookup(PHASES, code)[0]


def motor_name(code: int) -> str:
    return _lookup(MOTORS, code)[0]


def subsystem_name(code: int) -> str:
    return _lookup(SUBSYSTEMS, code)[0]


def place_name(code: int) -> str:
    return _lookup(PLACES, code)[0]


def reset_cause_name(code: int) -> str:
    return _lookup(RESET_CAUSES, code)[0]


def button_name(code: int) -> str:
    return _lookup(BUTTONS, code)[0]


def flag_names(flags: int, table: dict[int, tuple[str, str, str]] = SENSOR_FLAGS) -> list[str]:
    """Names of the bits set in ``flags`` (SENSOR_FLAGS, CAPABILITIES or LIFT_BITS)."""
    names = []
    for bit in sorted(table):
        if flags & bit:
            names.append(table[bit][0])
    return names
