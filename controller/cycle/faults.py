"""The controller's fault catalogue: what the controller itself declares a fault, as data.

Each kind has the machine name shown in ``FaultEvent.code``, its source, the words of what
happened (a template: the details of the moment fill the ``{named}`` fields) and the advice:
what a person at the table does about it. The board's own faults and refusals are worded from
the protocol's tables (``protocol.codes``) by ``board_fault_words`` and ``refusal_words``.

docs/controller.md shows this catalogue as a table made by ``catalogue_markdown()`` (a test
keeps the two equal).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import protocol.codes as codes
from controller.cycle.reports import FaultSource


@dataclass(frozen=True)
class FaultKind:
    """One fault the controller declares: its code, source, words and advice."""

    code: str
    source: FaultSource
    #: what happened, with ``{named}`` details filled in when the fault strikes
    text: str
    #: what a person does about it
    advice: str

    def message(self, **details: object) -> str:
        """The words of what happened, with the details of this occurrence."""
        return self.text.format(**details)


#: what CLEAR FAULT does, for advice: the board's report decides what comes next
START_OVER = (
    "press CLEAR FAULT: the table asks the board where the sets are and carries on from there"
)
_CLEAR = "press CLEAR FAULT, then SHUFFLE (walls already built underneath are read again)"
#: mjtable diag asks the running service (the port is the service's alone)
DIAG = "mjtable diag (it asks the running service; --motors tests the motors once at rest)"
#: a ``{detail}`` of a template, with its format if any
_DETAIL = re.compile(r"\{(\w+)(?::[^}]*)?\}")

DEADLINE = FaultKind(
    "DEADLINE",
    "deadline",
    "the board did not finish {state} within {seconds:g} s",
    "watch the table: a motor may be blocked or a sensor not reporting; press CLEAR FAULT to go "
    f"on, or check the board's sensors with {DIAG}",
)
STOP_UNCONFIRMED = FaultKind(
    "STOP_UNCONFIRMED",
    "deadline",
    "the board did not confirm STOP within {seconds:g} s: motion may go on",
    "press the table's emergency stop now and check the cable to the board; once the link is "
    "back, release the emergency stop and press CLEAR FAULT",
)
LINK_DOWN = FaultKind(
    "LINK_DOWN",
    "link",
    "the serial link to the board is down: {reason}",
    "check the cable between the controller and the board and that the board has power; the "
    "link comes back by itself, then press CLEAR FAULT",
)
BOARD_REBOOTED = FaultKind(
    "BOARD_REBOOTED",
    "reboot",
    "the board restarted (new session) while it worked: its motors stopped",
    f"check the board's power supply and its cable; then {START_OVER}",
)
PROTOCOL_MISMATCH = FaultKind(
    "PROTOCOL_MISMATCH",
    "link",
    "board speaks protocol {board}.x, this controller speaks {controller}.x: update the "
    "controller or the board firmware",
    "update the controller or the firmware",
)
COMMAND_STOPPED = FaultKind(
    "COMMAND_FAILED",
    "board",
    "the board stopped {command} before the end",
    f"press CLEAR FAULT to go on; if it happens again, read the board's faults with {DIAG}",
)
COMMAND_FAILED = FaultKind(
    "COMMAND_FAILED",
    "board",
    "the board ended {command} with error {result}",
    f"press CLEAR FAULT to go on; if it happens again, read the board's faults with {DIAG}",
)
FIRMWARE_MISMATCH = FaultKind(
    "FIRMWARE_MISMATCH",
    "controller",
    "the board runs firmware {board} ({board_build}), this controller needs firmware "
    "{version} (build {build}): flash it with the UF2 of `{flash}`",
    "make that image from this controller's release, copy the UF2 onto the Pico (hold BOOTSEL "
    "while plugging its USB in: it shows a drive named RPI-RP2), let it restart, then press "
    'CLEAR FAULT; to deal with this board as it is, set board.firmware_mismatch = "warn" in '
    "the configuration",
)
MANIFEST_MISMATCH = FaultKind(
    "MANIFEST_MISMATCH",
    "controller",
    "a manifest chunk of set {chunk_set} with {total} tiles arrived while set {tile_set} was read",
    f"{_CLEAR}; if it happens again, check the board's firmware version with {DIAG}",
)
MANIFEST_GAP = FaultKind(
    "MANIFEST_GAP",
    "controller",
    "manifest chunk at offset {offset} while {received} tiles were received",
    f"check the cable between the controller and the board; {_CLEAR}",
)
MANIFEST_SIZE = FaultKind(
    "MANIFEST_SIZE",
    "controller",
    "the board reported {got} tiles in the manifest, the rule set needs {expected}",
    "check that the tile set in the table matches the configured rule set, then press CLEAR FAULT",
)
MANIFEST_INVALID = FaultKind(
    "MANIFEST_INVALID",
    "controller",
    "the wall manifest from the board is not a valid set: {error}",
    "check that no tile is missing or foreign, then press CLEAR FAULT; if it happens again, "
    f"check the tile reader with {DIAG}",
)
DICE_COUNT = FaultKind(
    "DICE_COUNT",
    "board",
    "the dice unit gave {got} dice, {asked} were asked",
    f"press CLEAR FAULT to go on; if it happens again, check the dice unit with {DIAG}",
)
AUDIT_LOG = FaultKind(
    "AUDIT_LOG",
    "controller",
    "the audit log cannot be written ({error}); nothing is dealt until it can",
    "check the disk where the audit log lives (df -h, the SD card), then restart the service",
)
SETS_UNKNOWN = FaultKind(
    "SETS_UNKNOWN",
    "board",
    "the board lost track of {sets} (its power went while it moved them): CLEAR FAULT will {plan}",
    "look on the table and under it for tiles of the lost set stuck half way (a plate part "
    "raised, a wall part built) and free them, then press CLEAR FAULT",
)
IMPOSSIBLE = FaultKind(
    "IMPOSSIBLE_COMMAND",
    "board",
    "the board reports {places}: {command} cannot be done ({why}), so it was not sent",
    f"{START_OVER}; if it happens again, keep the service's journal (journalctl -u mjtable) "
    "and the audit log for the maintainers",
)
CONTROLLER = FaultKind(
    "CONTROLLER",
    "controller",
    "the controller failed while handling {event}: {error}",
    "press CLEAR FAULT to start over; if it happens again, keep the service's journal "
    "(journalctl -u mjtable) and the audit log for the maintainers",
)

#: every fault the controller declares itself, in the order of the docs' table
CATALOGUE: tuple[FaultKind, ...] = (
    DEADLINE,
    STOP_UNCONFIRMED,
    LINK_DOWN,
    BOARD_REBOOTED,
    PROTOCOL_MISMATCH,
    FIRMWARE_MISMATCH,
    COMMAND_STOPPED,
    COMMAND_FAILED,
    MANIFEST_MISMATCH,
    MANIFEST_GAP,
    MANIFEST_SIZE,
    MANIFEST_INVALID,
    DICE_COUNT,
    SETS_UNKNOWN,
    IMPOSSIBLE,
    AUDIT_LOG,
    CONTROLLER,
)

# --- the board's faults and refusals, in the controller's words ---------------------------------

#: a command of the cycle refused by the board: FaultEvent.message
REFUSED = "the board refused {command}: {text}"

# --- CLEAR FAULT's answers: the press's result, its button record and event ----------------------
# The fault itself never changes when a clear is refused: its clear_refused count goes up.

#: the press is sent: the board answers whether the fault's cause is gone
CLEAR_SENT = "CLEAR FAULT sent: the board answers whether the fault's cause is gone"
#: STOP accepted
STOPPED_WORDS = (
    "motion stopped; the cycle is abandoned (press DEAL to carry on to the deal, SHUFFLE to "
    "carry on with a new shuffle, or CLEAR FAULT to leave the table idle)"
)
#: SHUFFLE pressed when stopped: the stop is cleared first (CLEAR_FAULT sent)
CARRY_ON_SENT = (
    "carrying on: the board confirms the stop is over and reports where the tile sets are, "
    "then the shuffle starts over"
)
#: DEAL pressed when stopped: the same, then the deal starts by itself once the walls are ready
CARRY_ON_TO_DEAL = (
    "carrying on to the deal: the board confirms the stop is over and reports where the tile "
    "sets are, then the walls are made ready again (walls built underneath are read again) "
    "and dealt"
)
#: the board cleared its fault
CLEARED = "cleared: the board reports where the tile sets are, then the table is idle"
#: the board refused it while a fault stands: {why} (the cause still there, the emergency
#: stop held...), the fault ({code}: {message}) and what to do ({advice})
NOT_CLEARED = "not cleared, {why} ({code}: {message}); {advice}"
#: the board refused it with the cause still there (REFUSED CAUSE_PRESENT)
CAUSE_STILL_THERE = "the cause is still there"
#: the board refused it with no fault standing (the table was stopped): FaultEvent.message
CLEAR_REFUSED = "the board did not clear the fault: {text}"
#: something else ended the wait for the board's answer
CLEAR_CUT_SHORT = "not cleared: {what} before the board answered; {advice}"
#: the board has not answered within the caller's wait
CLEAR_UNANSWERED = (
    "CLEAR FAULT sent; the board has not answered within {seconds:g} s: the status shows "
    "whether the fault cleared"
)


# --- the board's faults in words: each sentence with its details named -------------------------
# A client that translates the table's words matches a board fault's words against these (its
# details are the protocol's words, each translated whole: ``board_words()``).

#: what happened, then what struck, where and when, one after the other
FAULT_AT = "{happened} ({at})"
ONE_THEN = "{one}, {then}"
WHILE = "while {phase}"
#: what the detail byte names
WALLS = ("the East wall", "the South wall", "the West wall", "the North wall")
PLATES = (
    "the East wall's plate",
    "the South wall's plate",
    "the West wall's plate",
    "the North wall's plate",
    "the centre lift",
)
#: a motor named (each motor's words whole in ``board_words()``: the article is the language's)
MOTOR_NAMED = "the {motor}"
FIRMWARE_ERROR = "firmware error {number}"
ITS_DEADLINE = "its deadline {seconds} s"
DOWN_FOR = "down {seconds} s"
#: the protocol's advice ends at the table; the controller's key comes after it
THEN_CLEAR = "{advice}, then press CLEAR FAULT"
SENSOR_ADVICE = "{check}; no motion starts until it reads in range, then press CLEAR FAULT"
PART_SILENT = "the board's {part} does not answer"
PART_SILENT_WHILE = "the board's {part} does not answer while {phase}"
PART_ADVICE = "{check}; reseat it, then press CLEAR FAULT (the board sets it up again)"
START_FAILED = "the board's firmware failed to start; it answers on the link and moves nothing"
START_FAILED_SAID = (
    "the board's firmware failed to start: {said}; it answers on the link and moves nothing"
)
START_ADVICE = (
    "note the error, then restart the board (its reset button or its power); if it happens "
    "again, flash it again (the UF2 of mjtable firmware image) and report the error"
)


def _fault_text(code: int) -> str:
    """A fault's words without the protocol's note on its detail byte."""
    return codes.fault_info(code)[1].split(" (detail")[0]


def _protocol_advice(code: int) -> str:
    """A fault's advice as the protocol gives it, its clearing in the controller's key."""
    return codes.fault_info(code)[2].replace("then clear the fault", "then press CLEAR FAULT")


def _fault_advice(code: int) -> str:
    """A fault's advice ending with the controller's key."""
    advice = _protocol_advice(code)
    return advice if "CLEAR FAULT" in advice else THEN_CLEAR.format(advice=advice)


def board_fault_words(
    code: int, subsystem: int, phase: int, detail: int, board_said: str = ""
) -> tuple[str, str, str]:
    """A board FAULT as (NAME, what happened, what to check), in plain words: the detail
    byte named (the wall, the motor, the lift plate, the part that does not answer), where and
    when it struck. ``board_said``: the line a board that failed to start gives in its
    HELLO_REPLY's serial field (FAULT INTERNAL, detail INTERNAL_START)."""
    name = codes.fault_info(code)[0]
    phase_words = codes.PHASES[phase][1] if phase in codes.PHASES and phase else ""
    if code == codes.FAULT_PART_MISSING:
        _part, part, check = codes.part_info(detail)
        if phase_words:
            silent = PART_SILENT_WHILE.format(part=part, phase=phase_words)
        else:
            silent = PART_SILENT.format(part=part)
        return name, silent, PART_ADVICE.format(check=check)
    if code == codes.FAULT_INTERNAL and detail == codes.INTERNAL_START:
        text = START_FAILED_SAID.format(said=board_said) if board_said else START_FAILED
        return name, text, START_ADVICE
    advice = _fault_advice(code)
    what = ""
    if code in (codes.FAULT_WALL_SHORT, codes.FAULT_WALL_EXTRA) and detail < 4:
        what = WALLS[detail]
    elif code in (codes.FAULT_MOTOR_STALL, codes.FAULT_DRIVER_SHORT) and detail in codes.MOTORS:
        what = MOTOR_NAMED.format(motor=codes.MOTORS[detail][1])
    elif code == codes.FAULT_SENSOR_BROKEN:
        _name, what, check = codes.analogue_sensor_info(detail)
        advice = SENSOR_ADVICE.format(check=check)
    elif code == codes.FAULT_LIFT_LIMIT:
        what = PLATES[min(detail, 4)]
    elif code == codes.FAULT_INTERNAL and detail:
        what = FIRMWARE_ERROR.format(number=detail)
    elif code == codes.FAULT_MOTION_TIMEOUT and detail:
        what = ITS_DEADLINE.format(seconds=detail)
    elif code == codes.FAULT_HOST_LOST and detail:
        what = DOWN_FOR.format(seconds=detail)
    where = codes.SUBSYSTEMS.get(subsystem, ("", "", ""))[1]
    when = WHILE.format(phase=phase_words) if phase_words else ""
    at = ""
    for part in (what, where, when):
        if part:
            at = ONE_THEN.format(one=at, then=part) if at else part
    text = _fault_text(code)
    return name, FAULT_AT.format(happened=text, at=at) if at else text, advice


def board_fault_sentences() -> tuple[str, ...]:
    """The sentences a board fault's words are made of, their details named; the most
    particular first, the two that only join others last."""
    return (
        PART_SILENT_WHILE,
        PART_SILENT,
        PART_ADVICE,
        START_FAILED_SAID,
        SENSOR_ADVICE,
        codes.CURRENT_SENSE,
        codes.CURRENT_SENSE_CHECK,
        codes.PART_AT,
        FIRMWARE_ERROR,
        ITS_DEADLINE,
        DOWN_FOR,
        WHILE,
        THEN_CLEAR,
        FAULT_AT,
        ONE_THEN,
    )


def board_words() -> tuple[str, ...]:
    """The protocol's words a board fault's sentences are filled with, each whole: what
    happened and the advice of each fault, the walls, plates, motors, sensors, parts,
    subsystems and phases (what a client that translates the table's words translates)."""
    words: list[str] = [START_FAILED, START_ADVICE, codes.PART_AT_CHECK, *WALLS, *PLATES]
    for code in codes.FAULTS:
        words += [_fault_text(code), _protocol_advice(code)]
    for _name, motor, _check in codes.MOTORS.values():
        words += [motor, MOTOR_NAMED.format(motor=motor)]
    for table in (codes.ANALOGUE_SENSORS, codes.PARTS):
        for _name, text, check in table.values():
            words += [text, check]
    words += [subsystem for _name, subsystem, _x in codes.SUBSYSTEMS.values()]
    words += [phase for code, (_name, phase, _x) in codes.PHASES.items() if code]
    return tuple(dict.fromkeys(words))


#: what a person does about a refused command of the cycle, where the protocol's words speak
#: to the controller ("send HELLO", "wait for DONE"): always something the table allows now
REFUSAL_ADVICE: dict[int, str] = {
    codes.REFUSE_BAD_STATE: START_OVER,
    codes.REFUSE_FAULTED: START_OVER,
    codes.REFUSE_ESTOP_HELD: "release the emergency stop, then press CLEAR FAULT",
    codes.REFUSE_BUSY: START_OVER,
    codes.REFUSE_CAUSE_PRESENT: "remove the cause of the fault, then press CLEAR FAULT again",
}
#: the same, by what blocked a BAD_STATE refusal (protocol.codes.BLOCKS)
BLOCK_ADVICE: dict[int, str] = {
    codes.BLOCK_BOOTING: "wait for the board to answer (the link comes back by itself), then "
    "press CLEAR FAULT",
    codes.BLOCK_COVER_OPEN: "close the table's cover, then press CLEAR FAULT",
}


def refusal_words(reason: int, detail: int) -> tuple[str, str, str]:
    """A board REFUSED as (NAME, why, what to do); for BAD_STATE the detail names what
    blocks the command (protocol.codes.BLOCKS). The advice is the table's: what a person can
    do at that moment (the protocol's own advice speaks to the controller)."""
    name, text, advice = codes.refusal_info(reason)
    advice = REFUSAL_ADVICE.get(reason, advice)
    if reason == codes.REFUSE_BAD_STATE and detail in codes.BLOCKS:
        _block, why, _what = codes.block_info(detail)
        text, advice = f"{text}: {why}", BLOCK_ADVICE.get(detail, advice)
    return name, text, advice


def fault_sentences() -> tuple[str, ...]:
    """The words and advice of the controller's own faults, as written (``{named}`` details
    not filled in): what a client that translates the table's words matches a fault with."""
    kinds = [words for kind in CATALOGUE for words in (kind.text, kind.advice)]
    clears = (CLEAR_SENT, CLEARED, NOT_CLEARED, CAUSE_STILL_THERE, CLEAR_REFUSED, CLEAR_CUT_SHORT)
    return tuple(
        dict.fromkeys(
            [
                *kinds,
                REFUSED,
                STOPPED_WORDS,
                CARRY_ON_SENT,
                CARRY_ON_TO_DEAL,
                *clears,
                CLEAR_UNANSWERED,
            ]
        )
    )


def catalogue_markdown() -> str:
    """The catalogue as the markdown table of docs/controller.md."""
    rows = [
        "| code | source | what happened | advice |",
        "|---|---|---|---|",
    ]
    for kind in CATALOGUE:
        text = _DETAIL.sub(lambda found: f"*{found.group(1)}*", kind.text)
        rows.append(f"| `{kind.code}` | {kind.source} | {text} | {kind.advice} |")
    return "\n".join(rows) + "\n"
