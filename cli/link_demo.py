"""``mjtable link-demo``: the board protocol over a lossy in-memory link.

A host and a board Connection talk through a link that drops and corrupts bytes. The host sends
every command of the catalogue; a small scripted board answers with every event (progress,
faults, dice, manifest, sensors, buttons) and finally reboots on RESET. Each delivered message is
printed, then the counters, then a line confirming that every command and every event was
delivered exactly once and in order. Deterministic for a given --seed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cli.errors import UsageError
from cli.lang import N_

if TYPE_CHECKING:
    from protocol.messages import Message

MAX_PROBABILITY = 0.1
TIME_LIMIT_MS = 600_000


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "link-demo",
        help=N_("every message of the board protocol over a lossy in-memory link"),
        description=N_(
            "Run a host and a board protocol engine over an in-memory link that drops and "
            "corrupts bytes; send every command and event; check each is delivered exactly "
            "once."
        ),
    )
    parser.add_argument(
        "--drop",
        type=float,
        default=0.01,
        metavar="P",
        help=N_("probability that a byte is lost (default 0.01)"),
    )
    parser.add_argument(
        "--corrupt",
        type=float,
        default=0.005,
        metavar="P",
        help=N_("probability that a byte has one bit flipped (default 0.005)"),
    )
    parser.add_argument(
        "--duplicate",
        type=float,
        default=0.01,
        metavar="P",
        help=N_("probability that a chunk of bytes arrives twice (default 0.01)"),
    )
    parser.add_argument("--seed", type=int, default=1, metavar="N", help=N_("seed of the damage"))
    parser.add_argument(
        "--quiet", action="store_true", help=N_("print only the counters and the verdict")
    )
    parser.set_defaults(func=main)


def _probability(name: str, value: float) -> float:
    if not 0.0 <= value <= MAX_PROBABILITY:
        raise UsageError(
            f"--{name} must be between 0 and {MAX_PROBABILITY} (a probability per byte), "
            f"not {value}"
        )
    return value


def main(args: argparse.Namespace) -> int:
    drop = _probability("drop", args.drop)
    corrupt = _probability("corrupt", args.corrupt)
    duplicate = _probability("duplicate", args.duplicate)
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, not {args.seed}")
    result = run_demo(
        drop=drop,
        corrupt=corrupt,
        duplicate=duplicate,
        seed=args.seed,
        out=(lambda _line: None) if args.quiet else print,
        summary=print,
    )
    return 0 if result["ok"] else 1


def run_demo(
    *,
    drop: float,
    corrupt: float,
    duplicate: float = 0.0,
    seed: int = 1,
    out: Callable[[str], None] = print,
    summary: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the scripted exchange; return the figures (``ok`` is the verdict)."""
    # lazy: the protocol engine, only when the demo runs (not for every `mjtable` command)
    from protocol import codes
    from protocol.connection import BOARD, HOST, UP, Connection
    from protocol.events import LinkDown, LinkUp, PeerRebooted
    from protocol.examples import example_identity
    from protocol.loopback import Loopback, XorShift32
    from protocol.messages import (
        BuildWalls,
        Button,
        ClearFault,
        Collect,
        Dice,
        DisplayDice,
        Done,
        Fault,
        LiftWalls,
        ManifestChunk,
        Message,
        MotorResult,
        MotorTest,
        Ping,
        Pong,
        Progress,
        ReadManifest,
        Refused,
        Reset,
        RollDice,
        SensorData,
        Sensors,
        Shuffle,
        Stop,
    )

    rng = XorShift32(seed ^ 0x5A5A)
    host = Connection(HOST, session=0x10000 + seed)
    identity = example_identity(session_id=0xB0A0_0000 + rng.below(0xFFFF) + 1)
    board = Connection(BOARD, identity=identity)
    loop = Loopback(host, board, seed=seed, drop=drop, corrupt=corrupt, duplicate=duplicate)
    boards = [board]

    # the wall manifest of a 136-tile set, shuffled by the seed
    faces = [c for c in sorted(codes.TILE_CODES) if c < 0x50] * 4
    for i in range(len(faces) - 1, 0, -1):
        j = rng.below(i + 1)
        faces[i], faces[j] = faces[j], faces[i]
    layout = [[2] * 17 for _ in range(4)]

    commands: list[Message] = [
        Ping(0xC0FFEE),
        Shuffle(codes.TILE_SET_A),
        BuildWalls(codes.TILE_SET_A, layout),
        ReadManifest(codes.TILE_SET_A),
        LiftWalls(codes.TILE_SET_A),
        ClearFault(),
        ClearFault(),
        RollDice(1, 2),
        DisplayDice(2, [3, 6]),
        Sensors(),
        MotorTest(codes.MOTOR_CHAIN, 800),
        Stop(),
        Collect(),
        Reset(),
    ]

    def respond(cmd: Message) -> list[tuple[int, Message]]:
        """The scripted board: (delay ms, event) answers to one command."""
        t = cmd.TYPE
        if isinstance(cmd, Ping):
            return [(1, Pong(cmd.token))]
        if isinstance(cmd, Shuffle):
            steps = [(300 * k, Progress(t, codes.PHASE_SHUFFLE, 25 * k, 0)) for k in range(5)]
            return [*steps, (1250, Done(t, 0))]
        if isinstance(cmd, BuildWalls):
            return [(400, Progress(t, codes.PHASE_BUILD, 50, 0)), (800, Done(t, 0))]
        if isinstance(cmd, ReadManifest):
            return [
                (5, ManifestChunk(cmd.tile_set, 136, 0, faces[:100])),
                (10, ManifestChunk(cmd.tile_set, 136, 100, faces[100:])),
                (15, Done(t, 0)),
            ]
        if isinstance(cmd, LiftWalls):
            # the North plate sticks: a fault, which the first CLEAR_FAULT cannot clear
            return [
                (500, Progress(t, codes.PHASE_LIFT, 60, 0)),
                (900, Fault(codes.FAULT_LIFT_LIMIT, codes.SUB_LIFTS, codes.PHASE_LIFT, 3)),
            ]
        if isinstance(cmd, ClearFault):
            cleared = sum(1 for c in board_log if isinstance(c, ClearFault))
            if cleared == 1:
                return [(2, Refused(t, codes.REFUSE_CAUSE_PRESENT, 0))]
            return [(2, Done(t, 0))]
        if isinstance(cmd, RollDice):
            values = [rng.below(6) + 1 for _ in range(cmd.count)]
            return [(5, Button(codes.BUTTON_DICE, 0, 1)), (600, Dice(cmd.tag, values))]
        if isinstance(cmd, DisplayDice):
            return [(2, Done(t, 0))]
        if isinstance(cmd, Sensors):
            data = SensorData(
                codes.STATE_UP,
                0,
                codes.FLAG_COVER_CLOSED | codes.FLAG_HEAD_HOME | codes.FLAG_CHAIN_HOME,
                [34, 34, 34, 34],
                0x0F,
                0x10,
                [0] * 9,
                398,
            )
            return [(3, data)]
        if isinstance(cmd, MotorTest):
            return [(cmd.duration_ms, MotorResult(cmd.motor, 640, 1))]
        if isinstance(cmd, Stop | Collect):
            return [(20, Done(t, 0))]
        return []

    finishing = (Pong, Done, Dice, SensorData, MotorResult, Refused, Fault)
    board_log: list[Message] = []  # commands as the board(s) executed them
    host_log: list[Message] = []  # events as the host received them
    events_sent: list[Message] = []
    scheduled: list[tuple[int, Message]] = []
    reboot_at: int | None = None
    pending = list(commands)
    waiting = False
    reboots_seen: list[PeerRebooted] = []

    def stamp() -> str:
        return f"{loop.now:7d} ms"

    host.connect(loop.now)
    while loop.now < TIME_LIMIT_MS:
        host_events, board_events = loop.step()
        for ev in board_events:
            if isinstance(ev, LinkUp | LinkDown):
                out(f"{stamp()}  board: {_describe(ev)}")
            elif isinstance(ev, Message) and ev.KIND == "command":
                board_log.append(ev)
                out(f"{stamp()}  host -> board  {ev.NAME:<14} {ev!r}")
                if isinstance(ev, Reset):
                    reboot_at = loop.now + 50
                for delay, answer in respond(ev):
                    scheduled.append((loop.now + delay, answer))
            else:
                out(f"{stamp()}  board: {_describe(ev)}")
        for ev in host_events:
            if isinstance(ev, PeerRebooted):
                reboots_seen.append(ev)
                out(f"{stamp()}  host: {_describe(ev)}")
            elif isinstance(ev, LinkUp):
                out(f"{stamp()}  host: {_describe(ev)}")
                if reboots_seen and not pending:
                    waiting = False
            elif isinstance(ev, LinkDown):
                out(f"{stamp()}  host: {_describe(ev)}")
            elif isinstance(ev, Message) and ev.KIND == "event":
                host_log.append(ev)
                out(f"{stamp()}  board -> host  {ev.NAME:<14} {ev!r}")
                if isinstance(ev, finishing):
                    waiting = False
            else:
                out(f"{stamp()}  host: {_describe(ev)}")
        due = [item for item in scheduled if item[0] <= loop.now]
        scheduled = [item for item in scheduled if item[0] > loop.now]
        for _when, answer in due:
            loop.board.send(answer, loop.now)
            events_sent.append(answer)
        if reboot_at is not None and loop.now >= reboot_at and loop.board.idle and not scheduled:
            new_identity = example_identity(session_id=identity.session_id ^ 0x00FF_FF00)
            out(f"{stamp()}  board reboots (RESET): new session 0x{new_identity.session_id:08X}")
            fresh = Connection(BOARD, identity=new_identity)
            loop.replace_board(fresh)
            boards.append(fresh)
            reboot_at = None
        if host.state == UP and not waiting and host.idle:
            if pending:
                cmd = pending.pop(0)
                host.send(cmd, loop.now)
                waiting = True  # until its answer (RESET: until the host sees the new board)
            elif reboots_seen and reboot_at is None and not scheduled:
                break

    ok_commands = _same(board_log, commands)
    ok_events = _same(host_log, events_sent)
    finished = not pending and bool(reboots_seen)
    stats_h = host.stats
    stats_b = [b.stats for b in boards]

    def total(key: str) -> int:
        return int(stats_h[key]) + sum(int(s[key]) for s in stats_b)

    figures: dict[str, Any] = {
        "ok": ok_commands and ok_events and finished,
        "commands_sent": len(commands),
        "commands_delivered": len(board_log),
        "events_sent": len(events_sent),
        "events_delivered": len(host_log),
        "retransmits": total("retransmits"),
        "crc_errors": total("crc_errors"),
        "header_bytes_skipped": total("header_errors"),
        "duplicates": total("duplicates"),
        "link_downs": total("link_downs"),
        "simulated_ms": loop.now,
        "types_delivered": sorted({m.NAME for m in board_log} | {m.NAME for m in host_log}),
    }
    wire_b, wire_h = loop.to_board.stats, loop.to_host.stats
    summary("")
    summary(
        f"link: drop {drop} and corrupt {corrupt} per byte, duplicate {duplicate} per chunk, "
        f"seed {seed}; "
        f"{loop.now / 1000:.1f} s simulated"
    )
    summary(
        f"wire: {wire_b['bytes'] + wire_h['bytes']} bytes sent, "
        f"{wire_b['dropped'] + wire_h['dropped']} dropped, "
        f"{wire_b['corrupted'] + wire_h['corrupted']} corrupted, "
        f"{wire_b['duplicated'] + wire_h['duplicated']} chunks duplicated"
    )
    summary(
        f"sent: {len(commands)} commands, {len(events_sent)} events; "
        f"delivered: {len(board_log)} commands, {len(host_log)} events"
    )
    summary(
        f"retransmits {figures['retransmits']}, CRC errors {figures['crc_errors']}, "
        f"header bytes skipped {figures['header_bytes_skipped']}, "
        f"duplicates discarded {figures['duplicates']}, link downs {figures['link_downs']}"
    )
    summary(
        f"link frames: HELLO {total('hellos_sent')}, HELLO_REPLY {total('hello_replies_sent')}, "
        f"HEARTBEAT {total('heartbeats_sent')}, NO_SESSION {total('no_session_sent')}, "
        f"ACK {total('acks_sent')}"
    )
    summary(f"message types delivered: {len(figures['types_delivered'])} of 23 commands/events")
    for ev in reboots_seen:
        summary(f"board reboot reported: {_describe(ev)}")
    if figures["ok"]:
        summary(
            f"OK: every command delivered exactly once, in order ({len(board_log)} of "
            f"{len(commands)}); every event delivered exactly once, in order ({len(host_log)} of "
            f"{len(events_sent)})"
        )
    else:
        why = []
        if not finished:
            why.append(f"the script did not finish within {TIME_LIMIT_MS // 1000} s simulated")
        if not ok_commands:
            why.append("the commands executed by the board differ from those sent")
        if not ok_events:
            why.append("the events received by the host differ from those sent")
        summary("FAILED: " + "; ".join(why))
    return figures


def _same(got: list[Message], want: list[Message]) -> bool:
    return len(got) == len(want) and all(a == b for a, b in zip(got, want, strict=True))


def _describe(ev: object) -> str:
    from protocol.events import LinkUp, PeerRebooted  # lazy: as in run_demo

    if isinstance(ev, LinkUp):
        r = ev.hello_reply
        return (
            f"link up: board {r.serial} firmware {r.fw_major}.{r.fw_minor}.{r.fw_patch} "
            f"protocol {r.proto_major}.{r.proto_minor} session 0x{r.session_id:08X}"
        )
    if isinstance(ev, PeerRebooted):
        dropped = ", ".join(m.NAME for m in ev.dropped) or "nothing"
        return (
            f"board restarted: session 0x{ev.old_session:08X} -> 0x{ev.new_session:08X}, "
            f"dropped {dropped}"
        )
    return repr(ev)
