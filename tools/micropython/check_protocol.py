"""The board protocol under the real MicroPython: what the table's board will run.

Run by `make test` through tools/micropython/run.mjs (MicroPython's WebAssembly port in
Node.js). Every check prints one line; the last line counts them.
"""

import sys

from protocol import examples, framing, messages
from protocol.connection import BOARD, HOST, Connection
from protocol.errors import FieldError, ProtocolError
from protocol.loopback import Loopback

passed = 0
failed = 0


def check(name: str, ok: bool) -> None:
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAILED: " + name)


print("running on " + sys.implementation.name + " " + sys.version)
check("implementation is MicroPython", sys.implementation.name == "micropython")

# CRC: the table-driven path is the board's.
framing.set_crc_implementation("table")
check("CRC-16/IBM-3740 check value", framing.crc16_table(b"123456789") == framing.CRC_CHECK)

# Every message of the catalogue: encode, frame, decode through the real frame decoder.
decoder = framing.FrameDecoder()
count = 0
for message, seq in examples.EXAMPLES:
    frame = framing.encode_frame(message.TYPE, seq, message.encode())
    frames = decoder.feed(frame)
    same = len(frames) == 1 and frames[0][0] == message.TYPE and frames[0][1] == seq
    if same:
        back = messages.decode_message(frames[0][0], frames[0][2])
        same = back == message
    check("round trip of " + message.NAME, same)
    count += 1
check("the catalogue has every message", count == len(messages.MESSAGE_TYPES))

# Every single-bit error of a frame is rejected, and the next good frame still decodes.
sample = framing.encode_frame(messages.Shuffle.TYPE, 3, messages.Shuffle(1).encode())
rejected = 0
for bit in range(len(sample) * 8):
    bad = bytearray(sample)
    bad[bit // 8] ^= 1 << (bit % 8)
    decoder.reset()
    if not decoder.feed(bytes(bad)):
        rejected += 1
check("every 1-bit error rejected", rejected == len(sample) * 8)
decoder.reset()
check("resynchronises after garbage", len(decoder.feed(b"\x00\xff\x13" + sample + sample)) == 2)

# Range errors are the protocol's own typed errors.
try:
    messages.Progress(messages.Shuffle.TYPE, 1, 101, 0).encode()
    check("percent 101 refused", False)
except FieldError as error:
    check("percent 101 refused, naming the field", "percent" in str(error))
try:
    messages.decode_message(0x1E, b"")
    check("unknown type refused", False)
except ProtocolError:
    check("unknown type refused", True)

# A host and a board over a lossy wire: every command delivered once, in order.
host = Connection(HOST, session=0x1234)
board = Connection(BOARD, identity=examples.example_identity(), session=0xBEEF)
wire = Loopback(host, board, seed=7, drop=0.01, corrupt=0.005, duplicate=0.01)
host.connect(0)
sent = []  # type: list[messages.Message]
for tile_set in (0, 1):
    cycle = (
        messages.Shuffle(tile_set),
        messages.BuildWalls(tile_set, [[2] * 17] * 4),
        messages.ReadManifest(tile_set),
        messages.LiftWalls(tile_set),
        messages.RollDice(len(sent) & 0xFF, 2),
        messages.Collect(),
    )  # type: tuple[messages.Message, ...]
    sent.extend(cycle)
received = []  # type: list[object]
queued = False
for _ in range(20000):
    host_events, board_events = wire.step()
    for event in board_events:
        if isinstance(event, messages.Message) and event.KIND == "command":
            received.append(event)
            board.send(messages.Done(event.TYPE, 0), wire.now)
    if host.state == "UP" and not queued:
        for command in sent:
            host.send(command, wire.now)
        queued = True
    if queued and len(received) >= len(sent) and host.idle and board.idle:
        break
check("host and board came up", host.state == "UP")
check("every command delivered exactly once, in order", received == sent)
stats = host.stats
print(f"lossy link: {len(sent)} commands, {stats['retransmits']} retransmits on the host")

print(f"{passed} passed, {failed} failed")
if failed:
    raise SystemExit(1)
