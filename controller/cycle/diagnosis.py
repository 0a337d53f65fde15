"""The board's own reports as a technician reads them: identity, places, sensors, motor tests.

One translation of the board's messages into the models of reports.py (``BoardIdentity``,
``BoardPlaces``, ``SensorReport``, ``MotorReport``), for both ways of diagnosing a board:
``mjtable diag`` on a port of its own, and the service's ``diag`` operation (testing.py)
while the service holds the port. The names and words are the protocol's (protocol/codes.py);
each motor's limits are the board's firmware's (firmware/config.py: its over-current limit and
its strain level), so the verdict of a motor test says the current beside them.
"""

from __future__ import annotations

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.reports import BoardIdentity, BoardPlaces, MotorReport, SensorReport
from firmware.config import Timings
from protocol.codes import NO_CURRENT, NO_TEMPERATURE

#: The board's limits, as its firmware declares them.
LIMITS = Timings()

# The sentences of a diagnosis with their details named, filled in where they are made; a
# client that translates the table's words matches them (diagnosis_sentences()).
#: a protocol name with its words: a fault ("TILE_COUNT: a wall is short of tiles"), a state
NAMED = "{name}: {words}"
SET_IN_WALLS = "{place}, {count} tiles in walls"
UNKNOWN_PLACE = "unknown place {place}"
UNKNOWN_CAUSE = "unknown cause {cause}"
UNKNOWN_MOTOR = "motor {motor}"
VERDICT_OK = "ok (strain level {strain} mA, limit {limit} mA)"
VERDICT_SEIZED = "NOT OK, seized or blocked: over its limit of {limit} mA for {trip}"
VERDICT_STRAINING = (
    "NOT OK, straining: over its strain level of {strain} mA for {trip} ({pct} % of its limit "
    "of {limit} mA; a free motor draws about half)"
)
VERDICT_STOPPED = "NOT OK: the board stopped the test (strain level {strain} mA, limit {limit} mA)"
MOTOR_REFUSED = "refused: {why}"
#: the parts a board may have fitted, by its capability bit
FITTED = {
    codes.CAP_READER: "tile reader",
    codes.CAP_DICE: "dice unit",
    codes.CAP_BUTTONS: "seat buttons",
}


def diagnosis_sentences() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The sentences above in two: those particular enough to be matched before any other
    (a motor's verdict, which the board's "{happened} ({at})" would take whole), and those
    that begin with a word and a detail ("motor {motor}", "{name}: {words}"), which take
    many others' and are matched after them all."""
    first = (VERDICT_OK, VERDICT_SEIZED, VERDICT_STRAINING, VERDICT_STOPPED, SET_IN_WALLS)
    last = (UNKNOWN_PLACE, UNKNOWN_CAUSE, UNKNOWN_MOTOR, MOTOR_REFUSED, NAMED)
    return first, last


def diagnosis_words() -> tuple[str, ...]:
    """The protocol's words a diagnosis shows whole or as details: the parts fitted, the
    places of the sets, the causes of a start, the board's states, its switches and lifts,
    the reasons it refuses a test, what to check when a motor's test is not OK."""
    words = list(FITTED.values())
    tables = (codes.PLACES, codes.RESET_CAUSES, codes.STATES, codes.REFUSALS)
    for table in (*tables, codes.SENSOR_FLAGS, codes.LIFT_BITS):
        words += [text for _name, text, _advice in table.values()]
    words += [check for _name, _motor, check in codes.MOTORS.values()]  # a test not OK
    words.append("unknown")
    return tuple(dict.fromkeys(words))


def default_motor_ms() -> int:
    """How long each motor test runs unless a technician says otherwise (the firmware's)."""
    return LIMITS.motor_test_ms


def max_motor_ms() -> int:
    """The longest motor test the board accepts (the firmware's)."""
    return LIMITS.max_motor_test_ms


def identity(reply: m.HelloReply) -> BoardIdentity:
    return BoardIdentity(
        protocol=f"{reply.proto_major}.{reply.proto_minor}",
        firmware=f"{reply.fw_major}.{reply.fw_minor}.{reply.fw_patch}",
        build=reply.status.build_hash,
        serial=reply.serial,
        session=f"{reply.session_id:08x}",
        capabilities=codes.flag_names(reply.capabilities, codes.CAPABILITIES),
        fitted=[words for bit, words in FITTED.items() if reply.capabilities & bit],
        tile_sets=reply.tile_sets,
        tiles=reply.tiles,
        stacks_per_wall=reply.stacks_per_wall,
        seed=reply.seed if reply.capabilities & codes.CAP_SEEDED else None,
    )


def places(
    places: tuple[int, ...] | list[int], laid: tuple[int, ...] | list[int], reset: int, motions: int
) -> BoardPlaces:
    """Where the sets are (the board's places and tiles laid), why it started, its motions."""
    sets: dict[str, str] = {}
    for name, place, count in zip("AB", places, laid, strict=False):
        words = codes.PLACES.get(place, (None, UNKNOWN_PLACE.format(place=place)))[1]
        sets[name] = SET_IN_WALLS.format(place=words, count=count) if count else words
    return BoardPlaces(
        tile_sets=sets,
        reset_cause=codes.RESET_CAUSES.get(reset, ("", UNKNOWN_CAUSE.format(cause=reset)))[1],
        motions=motions,
    )


def _words(table: dict[int, tuple[str, str, str]], bits: int) -> list[str]:
    return [words for bit, (_name, words, _advice) in sorted(table.items()) if bits & bit]


def sensors(data: m.SensorData) -> SensorReport:
    fault = None
    advice = None
    if data.fault:
        name, what, advice = codes.fault_info(data.fault)
        fault = NAMED.format(name=name, words=what)
    state_name, state_words, _ = codes.STATES.get(data.state, (f"{data.state}", "unknown", ""))
    return SensorReport(
        state=NAMED.format(name=state_name.lower(), words=state_words),
        fault=fault,
        advice=advice or None,
        switches=_words(codes.SENSOR_FLAGS, data.flags),
        wall_tiles=dict(zip("ESWN", data.wall_tiles, strict=True)),
        lifts_up=_words(codes.LIFT_BITS, data.lift_up),
        lifts_down=_words(codes.LIFT_BITS, data.lift_down),
        currents={
            codes.MOTORS.get(i, ("", UNKNOWN_MOTOR.format(motor=i), ""))[1]: (
                None if current == NO_CURRENT else current
            )
            for i, current in enumerate(data.currents_ma)
        },
        temperature_c=None if data.temperature_dc == NO_TEMPERATURE else data.temperature_dc / 10,
    )


def motor_verdict(motor: int, current: int, ok: bool) -> str:
    """The verdict of a test in words: what the current (said beside it) was against the
    motor's limits."""
    limit = LIMITS.current_limit_ma[motor]
    strain = LIMITS.strain_ma(motor)
    if ok:
        return VERDICT_OK.format(strain=strain, limit=limit)
    trip = f"{LIMITS.stall_trip_ms / 1000:g} s"
    if current > limit:
        return VERDICT_SEIZED.format(limit=limit, trip=trip)
    if current > strain:
        return VERDICT_STRAINING.format(
            strain=strain, trip=trip, pct=LIMITS.strain_pct, limit=limit
        )
    return VERDICT_STOPPED.format(strain=strain, limit=limit)


def motor_result(motor: int, ms: int, result: m.MotorResult | m.Refused) -> MotorReport:
    """One motor test's report: the board's result, or its refusal, in words."""
    unknown = UNKNOWN_MOTOR.format(motor=motor)
    name, words, advice = codes.MOTORS.get(motor, (f"MOTOR_{motor}", unknown, ""))
    if isinstance(result, m.Refused):
        refused, why, _ = codes.refusal_info(result.reason)
        return MotorReport(
            motor=name,
            words=words,
            ms=ms,
            ok=None,
            current_ma=None,
            limit_ma=None,
            strain_ma=None,
            verdict=MOTOR_REFUSED.format(why=why),
            advice=None,
            refused=refused,
        )
    ok = bool(result.ok)
    return MotorReport(
        motor=name,
        words=words,
        ms=ms,
        ok=ok,
        current_ma=result.current_ma,
        limit_ma=LIMITS.current_limit_ma[motor],
        strain_ma=LIMITS.strain_ma(motor),
        verdict=motor_verdict(motor, result.current_ma, ok),
        advice=None if ok else advice or None,
        refused=None,
    )
