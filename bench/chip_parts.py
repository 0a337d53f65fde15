"""The measurements of bench/chip.py on the emulated chip: a host on its pty that asks the
firmware for its vitals (SENSORS with SENSORS_VITALS, protocol 2.2), deal cycles, and the line
kept full.

The board keeps its own counters (firmware/vitals.py): each pass of its main loop timed into a
histogram, the link's bytes and frames; SENSORS with SENSORS_VITALS reads them at the end of
SENSOR_DATA (BoardVitals), with SENSORS_COLLECT after collecting the garbage (the collection
timed), with SENSORS_RESTART starting the loop's counters again. The time the board spends
answering is left out of its loop's figures, so asking does not change what it reports.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import serial

from bench.simulator import cycle_commands, finished
from protocol import messages as m
from protocol.codes import STATE_IDLE, fault_name, refusal_info
from protocol.connection import HOST, Connection
from protocol.events import LinkUp
from protocol.framing import encode_frame
from simulator.chip.board import ChipBoard

#: the line: 115200 baud, 8N1 (a start bit, 8 data bits, a stop bit: 10 bits a byte)
BAUD = 115_200
CHAR_US = 10 * 1e6 / BAUD
LINE_BYTES_PER_S = BAUD / 10
#: how far (bytes) the host keeps ahead of what the chip's UART has taken, so the line never rests
LEAD_BYTES = 240


class ChipHost:
    """A protocol engine on the chip's pty, on the chip's clock, counting the bytes it writes.

    Its timers (heartbeats, retransmissions, the link's timeout, all at the protocol's
    defaults) run on the chip's time, as a host's run on real time beside a real board: the
    emulated chip runs at 0.05 to 0.3 of real time, and a host on the wall's clock would send
    it its heartbeats 3 to 20 times as often, in the chip's time, as a real host does."""

    def __init__(
        self, path: str, board: ChipBoard, limit_s: float | None = None, rtscts: bool = True
    ) -> None:
        # rtscts: the host's UART waits on CTS, the board's RTS, as the reference board wires
        # it (board.rtscts); the emulated chip's line follows the port's setting
        self.port = serial.Serial(path, timeout=0.01, rtscts=rtscts)
        self.conn = Connection(HOST)
        self.board = board
        #: past this (monotonic), every wait fails: None waits as long as the chip runs
        self.deadline = None if limit_s is None else time.monotonic() + limit_s
        #: bytes written to the line since the start
        self.written = 0

    def now(self) -> int:
        """The chip's time, in ms."""
        return int(self.board.chip_us / 1000)

    def write(self, data: bytes) -> None:
        if data:
            self.port.write(data)
            self.written += len(data)

    def pump(self) -> list[object]:
        """Read what came, run the engine's timers, write what it has; its events."""
        if not self.board.running:
            raise RuntimeError(f"the chip stopped: {self.board.loop_error}")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise RuntimeError(f"the chip did not answer in time ({self.board.snapshot()})")
        data = self.port.read(self.port.in_waiting or 1)
        now = self.now()
        if data:
            self.conn.receive_data(data, now)
        self.conn.tick(now)
        self.write(self.conn.data_to_send())
        return list(self.conn.events())

    def connect(self) -> None:
        self.conn.connect(self.now())
        while not any(isinstance(e, LinkUp) for e in self.pump()):
            pass

    def send(self, message: m.Message) -> int:
        """Queue a command and write what goes out; the bytes written so far."""
        self.conn.send(message, self.now())
        self.write(self.conn.data_to_send())
        return self.written

    def ask(self, flags: int = 0) -> tuple[m.BoardVitals, int]:
        """The board's vitals (SENSORS with SENSORS_VITALS and ``flags``), asked at rest, and
        the bytes written up to the request (the board has read as many when it answers, bar
        those lost on the way)."""
        mark = self.send(m.Sensors(m.SENSORS_VITALS | flags))
        while True:
            for event in self.pump():
                if isinstance(event, m.SensorData) and event.vitals is not None:
                    return event.vitals, mark

    def run(self, command: m.Message) -> None:
        """Send a command and wait for the event that ends it (bench.simulator's rule: a
        REFUSED or a FAULT raises RuntimeError)."""
        self.send(command)
        while not any(finished(command, e) for e in self.pump()):
            pass

    def close(self) -> None:
        self.port.close()


@dataclass
class CycleFigures:
    """One deal cycle on the chip."""

    #: chip and wall time of its six commands
    chip_s: float
    wall_s: float
    #: the vitals at its end: the loop's passes since its start
    loop: m.BoardVitals
    #: the vitals after a collection, at rest: at its start and after each command
    samples: list[m.BoardVitals]
    #: the heap free after it, after a collection
    free_after: int

    @property
    def lowest_free(self) -> int:
        return min(s.heap_free for s in self.samples)

    @property
    def longest_collect_us(self) -> int:
        return max(s.collect_us for s in self.samples)


def deal_cycle(host: ChipHost, index: int, tiles: int, echo: bool = True) -> CycleFigures:
    """Cycle ``index`` (the sets alternate), the loop's counters started again at its start.
    The heap is counted (after a collection) at rest only, before the cycle and after each
    command: a collection asked for during a motion stretches one pass of the loop by the
    collection and the count (about 30 ms), which a build does not survive (READER_FAULT:
    docs/performance.md)."""
    board = host.board
    samples = [host.ask(m.SENSORS_COLLECT | m.SENSORS_RESTART)[0]]
    chip = wall = 0.0
    for command in cycle_commands(index & 1, tiles):
        c, w = board.chip_us, time.monotonic()
        host.run(command)
        took, waited = (board.chip_us - c) / 1e6, time.monotonic() - w
        chip += took
        wall += waited
        samples.append(host.ask(m.SENSORS_COLLECT)[0])
        if echo:
            print(
                f"  cycle {index + 1} {command.NAME:13} {took:6.2f} s chip {waited:7.1f} s wall;"
                f" the loop's longest pass so far {samples[-1].pass_max_us / 1000:.1f} ms",
                flush=True,
            )
    loop = host.ask()[0]
    return CycleFigures(chip, wall, loop, samples, samples[-1].heap_free)


@dataclass
class CyclesRun:
    """Deal cycles one after the other on one chip: those completed, and why the run ended
    before its count ("" when it did not)."""

    done: list[CycleFigures]
    #: a REFUSED or a FAULT ("cycle N: ..."), and the main loop's figures up to it
    failure: str = ""
    failed_loop: m.BoardVitals | None = None
    #: the wall-time limit ended the run before its count
    stopped: bool = False


def deal_cycles(
    host: ChipHost,
    count: int,
    tiles: int,
    wall_limit_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> CyclesRun:
    """``count`` deal cycles, each followed by a line with its heap (after a collection, at
    rest) beside the first cycle's: a long run shows its trend as it goes. Past
    ``wall_limit_s`` seconds of wall time no cycle begins; a REFUSED or a FAULT ends the run
    with the figures of the cycles before it."""
    run = CyclesRun([])
    begun = clock()
    for i in range(count):
        if wall_limit_s is not None and clock() - begun > wall_limit_s:
            run.stopped = True
            print(
                f"the wall-time limit ({wall_limit_s:g} s) passed: {i} of {count} cycles run",
                flush=True,
            )
            break
        try:
            cycle = deal_cycle(host, i, tiles)
        except RuntimeError as exc:
            run.failure = f"cycle {i + 1}: {exc}"
            print(f"the board did not complete {run.failure}", flush=True)
            run.failed_loop = host.ask()[0]
            break
        run.done.append(cycle)
        first = run.done[0]
        print(
            f"cycle {i + 1} of {count}: heap free after it {cycle.free_after:,} B"
            f" ({cycle.free_after - first.free_after:+,} B against cycle 1), at its lowest"
            f" {cycle.lowest_free:,} B; {cycle.chip_s:.1f} s of chip time,"
            f" {cycle.wall_s:.0f} s of wall time, {clock() - begun:.0f} s in all",
            flush=True,
        )
    return run


def heap_growth(cycles: list[CycleFigures]) -> int | None:
    """Bytes of heap the cycles kept: the heap free after the first cycle less the most free
    after any of the last three (None under 2 cycles). Bytes held at one count's moment come
    back at the next cycle (the `.mpy` build's count dips 16 or 32 B after a cycle now and
    then); a leak lowers every count after it."""
    if len(cycles) < 2:
        return None
    return cycles[0].free_after - max(c.free_after for c in cycles[1:][-3:])


@dataclass
class BlastFigures:
    """The line kept full towards the board for a while."""

    #: the board's counters over it (from the vitals asked before it to those asked after)
    span_ms: int
    busy_ms: int
    longest_us: int  # the longest pass of the loop
    frames: int
    bytes_read: int
    crc_errors: int
    skipped: int
    #: what the host wrote over the same stretch
    bytes_sent: int
    pings: int
    pongs: int
    retransmits: int
    #: the command run meanwhile and how it ended ("" when none)
    outcome: str = ""

    @property
    def lost(self) -> int:
        """Bytes written that the board never read."""
        return self.bytes_sent - self.bytes_read

    @property
    def line_use(self) -> float:
        """The share of the span the line carried bytes towards the board."""
        return self.bytes_read * CHAR_US / (self.span_ms * 1000) if self.span_ms else 0.0

    @property
    def frame_bytes(self) -> float:
        return self.bytes_read / self.frames if self.frames else 0.0

    @property
    def wire_fps(self) -> float:
        """Frames per second the line carries at 115200 baud, frames of this mix."""
        return LINE_BYTES_PER_S / self.frame_bytes if self.frames else 0.0

    @property
    def board_fps(self) -> float:
        """Frames the board handles per second of its loop's work (its passes' time)."""
        return self.frames / (self.busy_ms / 1000) if self.busy_ms else math.inf

    def summary(self, what: str) -> str:
        """The details of this stretch of the line kept full, in one line."""
        return (
            f"{what}: {self.span_ms / 1000:.1f} s of chip time, {self.line_use:.0%} of the line's"
            f" time carried bytes that reached the board, {self.pongs:,} of {self.pings:,} PINGs"
            f" answered, {self.crc_errors} CRC errors, {self.skipped:,} bytes skipped,"
            f" {self.retransmits} frames resent, the loop busy {self.busy_ms / self.span_ms:.0%}"
            f" of the time, its longest pass {self.longest_us / 1000:.1f} ms"
        )


def blast(host: ChipHost, chip_us: float, during: m.Message | None = None) -> BlastFigures:
    """Keep the line to the board full for ``chip_us`` of chip time (or, with ``during``, from
    sending that command until it ends): PINGs as fast as the host's engine sends them (its
    window), and HEARTBEATs whenever the line would otherwise rest; then every PING is waited
    for and the board's counters read."""
    board = host.board
    conn = host.conn
    before, mark0 = host.ask(m.SENSORS_RESTART)
    retransmits = conn.stats["retransmits"]
    filler = encode_frame(m.Heartbeat.TYPE, 0, m.Heartbeat(conn.session, STATE_IDLE).encode())
    start_us, start_written = board.chip_us, host.written
    token = pongs = 0
    outcome: str | None = None if during is not None else ""
    if during is not None:
        host.send(during)
    while outcome is None or (during is None and board.chip_us - start_us < chip_us):
        for event in host.pump():
            if isinstance(event, m.Pong):
                pongs += 1
            elif during is not None and outcome is None and _ends(during, event):
                outcome = _outcome(event)
        if conn.queued < 2:
            token += 1
            host.send(m.Ping(token & 0xFFFFFFFF))
        taken = (board.chip_us - start_us) / CHAR_US
        short = LEAD_BYTES - (host.written - start_written - taken)
        if short > 0:
            host.write(filler * math.ceil(short / len(filler)))
    while not conn.idle:
        pongs += sum(isinstance(e, m.Pong) for e in host.pump())
    after, mark1 = host.ask()
    return BlastFigures(
        span_ms=after.span_ms,
        busy_ms=after.busy_ms,
        longest_us=after.pass_max_us,
        frames=after.rx_frames - before.rx_frames,
        bytes_read=after.rx_bytes - before.rx_bytes,
        crc_errors=after.rx_crc_errors - before.rx_crc_errors,
        skipped=after.rx_skipped - before.rx_skipped,
        bytes_sent=mark1 - mark0,
        pings=token,
        pongs=pongs,
        retransmits=conn.stats["retransmits"] - retransmits,
        outcome=outcome,
    )


def _outcome(event: object) -> str:
    """DONE, or the fault's or refusal's name."""
    if isinstance(event, m.Fault):
        return "FAULT " + fault_name(event.code)
    if isinstance(event, m.Refused):
        return "REFUSED " + refusal_info(event.reason)[0]
    return "DONE" if isinstance(event, m.Done) and event.result == 0 else repr(event)


def _ends(command: m.Message, event: object) -> bool:
    if isinstance(event, m.Refused | m.Fault):
        return True
    return isinstance(event, m.Done) and event.command == command.TYPE
