"""What the board tells about itself: its status, its sensors, whether a fault's cause is there.

All three read the hardware through the HAL (never a remembered flag), so they answer for what
is physically true now.
"""

from firmware.compat import TYPE_CHECKING
from firmware.hal import (
    NO_READING,
    SENSE_BELT_FULL,
    SENSE_CHAIN_HOME,
    SENSE_COVER_CLOSED,
    SENSE_DICE,
    SENSE_DOWN,
    SENSE_ESTOP,
    SENSE_HEAD_HOME,
    SENSE_UP,
)
from firmware.version import FW_MAJOR, FW_MINOR, FW_PATCH
from protocol import wirecodes as c
from protocol.messages import BoardStatus, SensorData

if TYPE_CHECKING:
    from firmware.board import Board


def board_status(board: "Board") -> BoardStatus:
    """BOARD_STATUS now: version and build, state, the active fault, motions begun, why the
    board last started, and each set's place with the tiles it has in walls."""
    a, b = board.sets
    return BoardStatus(
        FW_MAJOR,
        FW_MINOR,
        FW_PATCH,
        board.build_hash,
        board.state,
        board.fault_code,
        board.fault_subsystem,
        board.fault_phase,
        board.fault_detail,
        board.record.motions_begun & 0xFFFFFFFF,
        board.reset_cause,
        (a.place, b.place),
        (a.laid, b.laid),
    )


def sensor_data(board: "Board") -> SensorData:
    """Every sensor now, as SENSOR_DATA."""
    hal = board.hal
    level = hal.level
    flags = 0
    if level(SENSE_COVER_CLOSED):
        flags |= c.FLAG_COVER_CLOSED
    if not level(SENSE_UP + 4):
        flags |= c.FLAG_TRAP_OPEN
    if level(SENSE_HEAD_HOME):
        flags |= c.FLAG_HEAD_HOME
    if level(SENSE_BELT_FULL):
        flags |= c.FLAG_BELT_FULL
    if level(SENSE_ESTOP):
        flags |= c.FLAG_ESTOP
    if level(SENSE_CHAIN_HOME):
        flags |= c.FLAG_CHAIN_HOME
    if hal.has_dice() and level(SENSE_DICE):
        flags |= c.FLAG_DICE_PRESENT
    if hal.reader_ok():
        flags |= c.FLAG_READER_OK
    up = 0
    down = 0
    for i in range(5):
        if level(SENSE_UP + i):
            up |= 1 << i
        if level(SENSE_DOWN + i):
            down |= 1 << i
    currents = []
    for motor in range(c.MOTOR_COUNT):
        ma = hal.current_ma(motor)
        currents.append(ma if 0 <= ma < c.NO_CURRENT else c.NO_CURRENT)
    temp = hal.temperature_dc()
    if temp == NO_READING or temp < c.NO_TEMPERATURE:
        temp = c.NO_TEMPERATURE
    elif temp > 0x7FFF:
        temp = 0x7FFF
    counts = board.wall_counts
    return SensorData(
        board.state,
        board.fault_code,
        flags,
        (counts[0], counts[1], counts[2], counts[3]),
        up,
        down,
        tuple(currents),
        temp,
    )


def cause_present(board: "Board") -> bool:
    """The cause of the current fault is still there, as far as the sensors can tell at rest.

    The E-stop, the cover, the temperature (above overheat_clear_dc), tiles piled behind the
    head or the head away from home (HEAD_JAM), the chain away from home (CHAIN_HOME), the
    reader not answering (READER_FAULT), the dice sensor dark (DICE_FAULT), a current in a motor
    that is off (MOTOR_STALL, DRIVER_SHORT), the sensor named still out of its range
    (SENSOR_BROKEN). A part on the bus that did not answer (PART_MISSING) is set up again: the
    fault stays while it still does not answer. A jam, a plate or a count cannot be seen at
    rest: the next motion tells.
    """
    hal = board.hal
    code = board.fault_code
    if hal.level(SENSE_ESTOP):
        return True
    if code == c.FAULT_PART_MISSING:
        return hal.start_parts() != 0  # a cable reseated: one CLEAR_FAULT finds the part again
    if code == c.FAULT_OVERHEAT:
        return hal.temperature_dc() > board.timings.overheat_clear_dc
    if code == c.FAULT_COVER_OPEN:
        return not hal.level(SENSE_COVER_CLOSED)
    if code == c.FAULT_HEAD_JAM:
        return bool(hal.level(SENSE_BELT_FULL)) or not hal.level(SENSE_HEAD_HOME)
    if code == c.FAULT_CHAIN_HOME:
        return not hal.level(SENSE_CHAIN_HOME)
    if code == c.FAULT_READER_FAULT:
        return not hal.reader_ok()
    if code == c.FAULT_DICE_FAULT:
        return not hal.level(SENSE_DICE)
    if code == c.FAULT_MOTOR_STALL:
        motor = board.fault_detail
        return hal.current_ma(motor) > board.timings.current_limit_ma[motor]
    if code == c.FAULT_DRIVER_SHORT:
        return hal.current_ma(board.fault_detail) > board.timings.off_current_ma
    if code == c.FAULT_SENSOR_BROKEN:
        sensor = board.fault_detail
        if sensor == c.SENSOR_NTC:
            return hal.temperature_dc() == NO_READING
        if sensor == c.SENSOR_MUX:
            return not hal.current_sense_ok()
        return hal.current_ma(sensor) == NO_READING
    return False
