"""Helpers of the message catalogue's tests: the example status and reply, fields out of range."""

from __future__ import annotations

from typing import Any

from protocol.examples import example_identity, example_status
from protocol.messages import (
    SENSORS_COLLECT,
    SENSORS_RESTART,
    BoardStatus,
    BoardVitals,
    BuildWalls,
    Button,
    Dice,
    DisplayDice,
    Done,
    Fault,
    Heartbeat,
    Hello,
    HelloReply,
    ManifestChunk,
    Message,
    MotorResult,
    MotorTest,
    Ping,
    Progress,
    Refused,
    RollDice,
    SensorData,
    Sensors,
    Shuffle,
)


def status(**changes: Any) -> BoardStatus:
    """The example status (firmware 1.4.2), with some fields changed."""
    fields: dict[str, Any] = dict(
        zip(BoardStatus.FIELDS, example_status().field_values(), strict=True)
    )
    fields.update(changes)
    return BoardStatus(**fields)


def reply(**changes: Any) -> HelloReply:
    """The example HELLO_REPLY with some fields changed."""
    example = example_identity(host_session=1)
    fields: dict[str, Any] = dict(zip(HelloReply.FIELDS, example.field_values(), strict=True))
    fields.update(changes)
    return HelloReply(**fields)


STATUS_BYTES = example_status().encode()
#: the status as it travels inside HELLO_REPLY (without the firmware version)
STATUS_TAIL = STATUS_BYTES[3:]


BAD_FIELDS: list[tuple[Message, str, object]] = [
    (Shuffle(2), "tile_set", 2),
    (Shuffle(-1), "tile_set", -1),
    (Hello(1, 0, 0), "host_session", 0),
    (Hello(256, 0, 1), "proto_major", 256),
    (Heartbeat(1, 14), "state", 14),
    (Ping(1 << 32), "token", 1 << 32),
    (RollDice(0, 0), "count", 0),
    (RollDice(0, 4), "count", 4),
    (DisplayDice(0, [1, 7]), "values[1]", 7),
    (DisplayDice(0, []), "values", ()),
    (Dice(0, [0]), "values[0]", 0),
    (Dice(0, [1, 2, 3, 4]), "values", (1, 2, 3, 4)),
    (MotorTest(9, 100), "motor", 9),
    (MotorTest(0, 0), "duration_ms", 0),
    (MotorTest(0, 65536), "duration_ms", 65536),
    (Refused(6, 0, 0), "reason", 0),
    (Refused(6, 10, 0), "reason", 10),
    (Refused(32, 1, 0), "command", 32),
    (Progress(6, 1, 101, 0), "percent", 101),
    (Progress(6, 8, 50, 0), "phase", 8),
    (Done(6, 256), "result", 256),
    (Fault(0, 0, 0, 0), "code", 0),
    (Fault(20, 0, 0, 0), "code", 20),
    (Fault(1, 9, 0, 0), "subsystem", 9),
    (MotorResult(0, 0, 2), "ok", 2),
    (Button(0, 0, 1), "button", 0),
    (Button(1, 4, 1), "seat", 4),
    (SensorData(14, 0, 0, [0] * 4, 0, 0, [0] * 9, 0), "state", 14),
    (SensorData(0, 20, 0, [0] * 4, 0, 0, [0] * 9, 0), "fault", 20),
    (SensorData(0, 0, 1 << 16, [0] * 4, 0, 0, [0] * 9, 0), "flags", 1 << 16),
    (SensorData(0, 0, 0, [0] * 3, 0, 0, [0] * 9, 0), "wall_tiles", (0, 0, 0)),
    (SensorData(0, 0, 0, [0] * 4, 32, 0, [0] * 9, 0), "lift_up", 32),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 8, 0), "currents_ma", (0,) * 8),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 8 + [70000], 0), "currents_ma[8]", 70000),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 9, 40000), "temperature_dc", 40000),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 9, 0, 5), "vitals", 5),  # type: ignore[arg-type]
    (BoardVitals(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1), "rx_crc_errors", -1),
    (BoardVitals(1 << 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), "heap_free", 1 << 32),
    (Sensors(8), "flags", 8),
    (Sensors(SENSORS_COLLECT), "flags", SENSORS_COLLECT),
    (Sensors(SENSORS_RESTART), "flags", SENSORS_RESTART),
    (ManifestChunk(2, 10, 0, []), "tile_set", 2),
    (ManifestChunk(0, 10, 0, [0x0A]), "tiles[0]", 0x0A),
    (ManifestChunk(0, 10, 8, [1, 1, 1]), "tiles", 3),
    (ManifestChunk(0, 255, 0, [1] * 101), "tiles", 101),
    (BuildWalls(0, [[2], [2], [2]]), "layout", ((2,), (2,), (2,))),
    (BuildWalls(0, [[2], [2], [2], [3]]), "layout[3][0]", 3),
    (BuildWalls(0, [[2], [], [2], [2]]), "layout[1]", ()),
    (BuildWalls(0, [[2] * 29] * 4), "layout", 116),
    (BuildWalls(2, [[2], [2], [2], [2]]), "tile_set", 2),
    (status(build_hash="9F86D081884C7D65"), "build_hash", "9F86D081884C7D65"),
    (status(build_hash="9f86"), "build_hash", "9f86"),
    (status(state=14), "state", 14),
    (status(fault=20), "fault", 20),
    (status(subsystem=2), "subsystem", 2),
    (status(fault=3, subsystem=9), "subsystem", 9),
    (status(motions=1 << 32), "motions", 1 << 32),
    (status(reset_cause=6), "reset_cause", 6),
    (status(places=(5, 4, 0), laid=(1, 2, 3)), "places", (5, 4, 0)),
    (status(places=(5, 7)), "places[1]", 7),
    (status(laid=(136,)), "laid", (136,)),
    (status(laid=(136, 256)), "laid[1]", 256),
    (reply(deadlines_ms=(1000,) * 4), "deadlines_ms", (1000,) * 4),
    (reply(deadlines_ms=(1000, 0, 1, 1, 1)), "deadlines_ms[1]", 0),
    (reply(deadlines_ms=(1000, 1 << 32, 1, 1, 1)), "deadlines_ms[1]", 1 << 32),
]
