"""One example of every message, and the Markdown tables of docs/protocol.md made from the code.

``EXAMPLES`` holds one instance of each message class with the SEQ it travels with; the worked
example frames of the docs are produced by ``examples_markdown()`` and the code tables by
``tables_markdown()``. A test checks that the docs hold exactly this text, so the hex in the
docs can never drift from the encoder. ``python -m protocol.examples`` prints both blocks.
"""

from protocol import codes
from protocol.framing import encode_frame
from protocol.messages import (
    MESSAGE_CLASSES,
    PROTO_MAJOR,
    PROTO_MINOR,
    SENSORS_COLLECT,
    SENSORS_VITALS,
    Ack,
    BoardStatus,
    BoardVitals,
    BuildWalls,
    Button,
    ClearFault,
    Collect,
    Dice,
    DisplayDice,
    Done,
    Fault,
    Heartbeat,
    Hello,
    HelloReply,
    LiftWalls,
    ManifestChunk,
    Message,
    MotorResult,
    MotorTest,
    NoSession,
    Ping,
    Pong,
    Progress,
    ReadManifest,
    ReadStatus,
    Refused,
    Reset,
    RollDice,
    SensorData,
    Sensors,
    Shuffle,
    Stop,
)

HOST_SESSION = 0x1A2B3C4D
BOARD_SESSION = 0x5EED0001


#: the first 16 hex digits of an example build hash (``mjtable firmware build``'s manifest)
EXAMPLE_BUILD = "9f86d081884c7d65"


def example_status() -> BoardStatus:
    """A board at rest: set A raised on the table, set B built underneath, no fault."""
    return BoardStatus(
        1,
        4,
        2,
        EXAMPLE_BUILD,
        codes.STATE_UP,
        codes.FAULT_NONE,
        0,
        0,
        0,
        1234,
        codes.RESET_POWER_ON,
        (codes.PLACE_UP, codes.PLACE_BUILT),
        (136, 136),
    )


def example_identity(session_id: int = BOARD_SESSION, host_session: int = 0) -> HelloReply:
    """A board's HELLO_REPLY template: reader and dice fitted, two 136-tile sets, 17 stacks,
    the motion deadlines of the reference board's configuration for 136 tiles."""
    return HelloReply(
        PROTO_MAJOR,
        PROTO_MINOR,
        host_session,
        session_id,
        1,
        4,
        2,
        codes.CAP_READER | codes.CAP_DICE | codes.CAP_SEEDED,
        2,
        136,
        17,
        20240601,
        "MJT-000123",
        example_status(),
        (40360, 49080, 7000, 9000, 10900),
    )


_MANIFEST_START = ("1m", "1m", "E", "C", "9s", "5p", "B", "2m", "7s", "N", "3p", "F")

#: (message, SEQ) for every message class, in TYPE order
EXAMPLES: "tuple[tuple[Message, int], ...]" = (
    (Ack(), 5),
    (Hello(PROTO_MAJOR, PROTO_MINOR, HOST_SESSION), 0),
    (example_identity(host_session=HOST_SESSION), 0),
    (Heartbeat(BOARD_SESSION, codes.STATE_IDLE), 0),
    (NoSession(), 0),
    (Ping(0xCAFE0001), 0),
    (Shuffle(codes.TILE_SET_B), 1),
    (BuildWalls(codes.TILE_SET_B, [[2] * 17, [2] * 17, [2] * 17, [2] * 17]), 2),
    (LiftWalls(codes.TILE_SET_B), 3),
    (Collect(), 4),
    (RollDice(7, 2), 5),
    (DisplayDice(8, [3, 5]), 6),
    (ReadManifest(codes.TILE_SET_B), 7),
    (Sensors(SENSORS_VITALS | SENSORS_COLLECT), 0),
    (MotorTest(codes.MOTOR_LIFT_E, 1500), 1),
    (Stop(), 2),
    (ClearFault(), 3),
    (Reset(), 4),
    (Pong(0xCAFE0001), 0),
    (Refused(Shuffle.TYPE, codes.REFUSE_BUSY, 0), 1),
    (Progress(Shuffle.TYPE, codes.PHASE_SHUFFLE, 40, 0), 2),
    (Done(Shuffle.TYPE, 0), 3),
    (Fault(codes.FAULT_LIFT_LIMIT, codes.SUB_LIFTS, codes.PHASE_LIFT, 2), 4),
    (Dice(7, [4, 2]), 5),
    (
        ManifestChunk(codes.TILE_SET_B, 136, 0, [codes.tile_to_code(t) for t in _MANIFEST_START]),
        6,
    ),
    (
        SensorData(
            codes.STATE_BUILT,
            0,
            codes.FLAG_COVER_CLOSED | codes.FLAG_HEAD_HOME | codes.FLAG_CHAIN_HOME,
            [34, 34, 34, 34],
            0,
            0x1F,
            [0, 0, 0, 0, 0, 0, 0, 120, 0],
            412,
            BoardVitals(
                92816, 246016, 23925, 45020, 9120, 12310, 1900, 6800, 42394, 2100, 160, 0, 0
            ),
        ),
        7,
    ),
    (MotorResult(codes.MOTOR_LIFT_E, 850, 1), 0),
    (Button(codes.BUTTON_DICE, 2, 1), 1),
    (ReadStatus(), 5),
    (
        BoardStatus(
            1,
            4,
            2,
            EXAMPLE_BUILD,
            codes.STATE_FAULT,
            codes.FAULT_WALL_SHORT,
            codes.SUB_STACKER_HEAD,
            codes.PHASE_BUILD,
            2,
            1237,
            codes.RESET_POWER_ON,
            (codes.PLACE_UP, codes.PLACE_PARTIAL),
            (136, 71),
        ),
        2,
    ),
)


def hex_bytes(data: bytes) -> str:
    """``'05 46 9A 1B ...'``: upper-case hex, one space between bytes."""
    return " ".join("%02X" % b for b in data)  # noqa: UP031


def example_frame(message: Message, seq: int) -> bytes:
    return encode_frame(message.TYPE, seq, message.encode())


def examples_markdown() -> str:
    """The worked-example table of docs/protocol.md."""
    lines = [
        "| TYPE | message | example | SEQ | frame on the wire (hex) |",
        "|---|---|---|---|---|",
    ]
    for message, seq in EXAMPLES:
        frame = example_frame(message, seq)
        lines.append(
            "| 0x%02X | %s | `%s` | %d | `%s` |"  # noqa: UP031
            % (message.TYPE, message.NAME, repr(message), seq, hex_bytes(frame))
        )
    return "\n".join(lines)


def _table(title: str, table: "dict[int, tuple[str, str, str]]", advice: bool) -> "list[str]":
    lines = ["#### " + title, ""]
    if advice:
        lines.append("| code | name | meaning | what to check |")
        lines.append("|---|---|---|---|")
    else:
        lines.append("| code | name | meaning |")
        lines.append("|---|---|---|")
    for code in sorted(table):
        name, text, hint = table[code]
        if advice:
            lines.append("| %d | %s | %s | %s |" % (code, name, text, hint))  # noqa: UP031
        else:
            lines.append("| %d | %s | %s |" % (code, name, text))  # noqa: UP031
    lines.append("")
    return lines


def tables_markdown() -> str:
    """The code tables of docs/protocol.md."""
    lines = [
        "#### Tiles",
        "",
        "| code | tile | code | tile | code | tile |",
        "|---|---|---|---|---|---|",
    ]
    groups = (
        [c for c in sorted(codes.TILE_CODES) if c < 0x10],
        [c for c in sorted(codes.TILE_CODES) if 0x10 < c < 0x20],
        [c for c in sorted(codes.TILE_CODES) if 0x20 < c < 0x30],
    )
    for i in range(9):
        cells = []
        for group in groups:
            cells.append("0x%02X | %s" % (group[i], codes.TILE_CODES[group[i]]))  # noqa: UP031
        lines.append("| " + " | ".join(cells) + " |")
    rest = [c for c in sorted(codes.TILE_CODES) if c > 0x30]
    lines.append("")
    lines.append("| code | tile | code | tile | code | tile | code | tile |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for start in range(0, len(rest), 4):
        row = rest[start : start + 4]
        cells = ["0x%02X | %s" % (c, codes.TILE_CODES[c]) for c in row]  # noqa: UP031
        while len(cells) < 4:
            cells.append(" | ")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("0xFF: unknown tile (a board without a reader reports positions only).")
    lines.append("")
    lines += _table(
        "Fault codes (FAULT.code, SENSOR_DATA.fault, BOARD_STATUS.fault; 0 = none)",
        codes.FAULTS,
        True,
    )
    sensors = {}
    for detail in list(codes.MOTORS) + list(codes.ANALOGUE_SENSORS):
        sensors[detail] = codes.analogue_sensor_info(detail)
    lines += _table("Analogue sensors (FAULT.detail with SENSOR_BROKEN)", sensors, True)
    lines += _table(
        "Parts on the board's I2C bus (FAULT.detail of PART_MISSING: the part's address)",
        codes.PARTS,
        True,
    )
    lines += _table("Refusal reasons (REFUSED.reason)", codes.REFUSALS, True)
    lines += _table("What blocks a command (REFUSED.detail with BAD_STATE)", codes.BLOCKS, True)
    lines += _table("Command results (DONE.result)", codes.RESULTS, False)
    lines += _table(
        "Board states (HEARTBEAT.state, SENSOR_DATA.state, BOARD_STATUS.state)", codes.STATES, False
    )
    lines += _table("Phases (PROGRESS.phase, FAULT.phase)", codes.PHASES, False)
    lines += _table("Motors (MOTOR_TEST.motor, SENSOR_DATA.currents_ma index)", codes.MOTORS, True)
    lines += _table("Subsystems (FAULT.subsystem)", codes.SUBSYSTEMS, False)
    lines += _table("Capabilities (HELLO_REPLY.capabilities bits)", codes.CAPABILITIES, False)
    lines += _table("Sensor flags (SENSOR_DATA.flags bits)", codes.SENSOR_FLAGS, False)
    lines += _table("Lift bits (SENSOR_DATA.lift_up, lift_down)", codes.LIFT_BITS, False)
    lines += _table("Buttons (BUTTON.button)", codes.BUTTONS, False)
    lines += _table("Tile sets", codes.TILE_SETS, False)
    lines += _table("Places of a tile set (BOARD_STATUS.places)", codes.PLACES, True)
    lines += _table("Reset causes (BOARD_STATUS.reset_cause)", codes.RESET_CAUSES, True)
    return "\n".join(lines).rstrip("\n")


def _check_complete() -> None:
    types = [m.TYPE for m, _seq in EXAMPLES]
    expected = [c.TYPE for c in MESSAGE_CLASSES]
    if types != expected:
        raise AssertionError("EXAMPLES must hold one message of every class, in TYPE order")


_check_complete()

if __name__ == "__main__":
    print("<!-- examples:begin -->")
    print(examples_markdown())
    print("<!-- examples:end -->")
    print()
    print("<!-- tables:begin -->")
    print(tables_markdown())
    print("<!-- tables:end -->")
