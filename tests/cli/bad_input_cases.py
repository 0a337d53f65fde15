"""The bad inputs to every `mjtable` command that tests/cli/test_bad_inputs.py runs: the bad
files, and the cases generated from each option that names a file or takes a value."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

LONG = "x" * 5000
#: bytes that are not UTF-8, as Python receives them from argv (surrogate escapes)
NOT_UTF8 = "\udcff\udcfe"
HUGE = "9" * 100_000


# -- the bad files ---------------------------------------------------------------------------

#: kind -> content (bytes) of the generated files; the other kinds are paths (below).
CONTENTS: dict[str, bytes] = {
    "binary": bytes(range(256)) * 8,
    "utf16": '[table]\nnumber = 1\n{"walls": {}}\n'.encode("utf-16"),
    "utf16-nobom": '[table]\nnumber = 1\n{"walls": {}}\n'.encode("utf-16-le"),
    "utf8-bom": '\ufeff[table]\nnumber = 1\n{"walls": {}}\n'.encode(),
    "nul": b"[table]\x00\nnumber = 1\n",
    "empty": b"",
    "garbage": b"}{ not = [ a file\n",
    "deep-json": b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "deep-toml": b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "deep-inline": b"a = " + b"{b = " * 5000 + b"1" + b"}" * 5000 + b"\n",
    "deep-dotted": b"[table]\nnumber = 1\n[x" + b".a" * 5000 + b"]\nb = 1\n",
    "huge-json": b'{"walls": ' + HUGE.encode() + b', "seq": 1}\n',
    "huge-toml": b"[table]\nnumber = " + HUGE.encode() + b"\n",
    "too-big": b"#" + b" " * (2 << 20) + b"\n",
}
#: kinds that are paths to things that are not regular files
PATHS = ("directory", "missing", "symlink-loop", "dev-null", "dev-zero", "proc-mem", "fifo")
#: kinds read only in a real process: a reader that read it would fill the memory (a FIFO
#: blocks in open(), which this process's alarm interrupts; /proc/self/mem fails to read)
SPECIAL = frozenset({"dev-zero"})
#: of an option whose command would serve if a bad value slipped through (run, sim,
#: gateway, floor-sim, watch), the kind and the value index that run in a real process too
SAMPLE_KIND = "binary"
SAMPLE_VALUE = 0
KINDS = (*CONTENTS, *PATHS)
KINDS_LONGEST_FIRST = sorted(KINDS, key=len, reverse=True)  # utf16-nobom before utf16


def make_files(root: Path) -> dict[str, str]:
    files = {}
    for kind, data in CONTENTS.items():
        path = root / f"{kind}.toml"
        path.write_bytes(data)
        files[kind] = str(path)
    (root / "a-directory.toml").mkdir()
    files["directory"] = str(root / "a-directory.toml")
    files["missing"] = "@T/no/such.toml"  # each case's own: a command may create it
    os.symlink(root / "loop-b.toml", root / "loop-a.toml")
    os.symlink(root / "loop-a.toml", root / "loop-b.toml")
    files["symlink-loop"] = str(root / "loop-a.toml")
    files["dev-null"] = "/dev/null"
    files["dev-zero"] = "/dev/zero"
    files["proc-mem"] = "/proc/self/mem"
    os.mkfifo(root / "fifo.toml")
    files["fifo"] = str(root / "fifo.toml")
    return files


# -- the cases -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """``mjtable ARGV`` and the statuses it may end with. ``@F`` is a bad file, ``@T`` the
    case's own directory, ``@M`` a good manifest, ``@L`` a good audit log."""

    argv: tuple[str, ...]
    statuses: tuple[int, ...] = (2,)
    process: bool = False
    stdin: bytes | None = None

    @property
    def name(self) -> str:
        return " ".join(a if len(a) <= 40 else f"{a[:12]}…({len(a)})" for a in self.argv)


@dataclass(frozen=True)
class Slot:
    """An option that names a file: ``argv`` with ``@F`` where the file goes."""

    argv: tuple[str, ...]
    status: int = 2  # what a bad file's content ends with
    process: bool = False
    skip: frozenset[str] = frozenset()  # kinds that are good input here
    special_status: int = 2  # what a path that is not a regular file ends with
    sized: bool = True  # a file larger than 1 MiB is refused (an audit log may be larger)

    def statuses(self, kind: str) -> tuple[int, ...]:
        special = kind in PATHS or (self.sized and kind == "too-big")
        return (self.special_status,) if special else (self.status,)


RUN = ("run", "--sim", "--socket", "@T/api.sock", "--audit", "@T/audit.jsonl")
DEAL = ("deal", "--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+6")
HAND: tuple[str, ...] = (
    "hand",
    "--variant",
    "wenzhou",
    "1m",
    "2m",
    "3m",
    "4m",
    "5m",
    "6m",
    "7m",
    "8m",
    "9m",
)
HAND += ("1p", "2p", "3p", "5s", "5s")
FLOOR: tuple[str, ...] = (
    "floor-sim",
    "--broker",
    "127.0.0.1:9",
    "--tables",
    "1",
    "--duration",
    "0",
)
FLOOR += ("--dir", "@T/floor")
LOG_CONTENT = frozenset(CONTENTS) - {"too-big"}
BUNDLE = ("support-bundle", "--socket", "@T/api.sock", "--output", "@T/b.tar.gz")

SLOTS = (
    Slot(("config", "check", "@F"), status=1, special_status=1),
    Slot((*RUN, "--config", "@F"), process=True),
    Slot(("run", "--sim", "--variant", "@F"), process=True),
    Slot(("deal", "--variant", "@F", "--random", "--seed", "1")),
    Slot((*DEAL, "--manifest", "@F")),
    Slot((*HAND, "--table", "@F"), skip=frozenset({"empty"})),
    Slot(("sim", "--pty", "--scenario", "@F"), process=True, skip=frozenset({"empty"})),
    Slot(("diag", "--sim", "--config", "@F")),
    Slot(("diag", "--port", "@T/no-board", "--audit", "@F"), skip=frozenset(CONTENTS)),
    Slot(("status", "--config", "@F")),
    Slot(("watch", "--config", "@F"), process=True),
    Slot(("shuffle", "--config", "@F")),
    Slot(("throw", "3+4", "--config", "@F")),
    Slot(("deal", "--socket", "@F"), status=3, special_status=3, skip=LOG_CONTENT),
    Slot(("status", "--socket", "@F"), status=3, special_status=3, skip=LOG_CONTENT),
    # an audit log's content is the verdict: a break (1), or an empty chain (0)
    Slot(("audit", "verify", "@F"), status=1, sized=False, skip=frozenset({"empty", "directory"})),
    Slot(("audit", "verify", "@L", "--key", "@F"), skip=frozenset(CONTENTS)),
    Slot(("audit", "verify", "@L", "--heads", "@F"), skip=frozenset({"empty"})),
    Slot(("audit", "replay", "@F", "--cycle", "c1"), sized=False),
    Slot(("audit", "keygen", "@F"), skip=frozenset({"missing"})),
    Slot(("install", "--prefix", "@F"), skip=frozenset({"missing", "directory"})),
    Slot(("firmware", "verify", "--port", "@T/p", "--build", "@F"), status=1, special_status=1),
    Slot(("gateway", "--config", "@F"), process=True),
    Slot((*FLOOR[:-1], "@F"), process=True, skip=frozenset({"missing", "directory"})),
    # a configuration that does not load is what the bundle is for: it says so, and writes it
    Slot((*BUNDLE, "--config", "@F"), status=0, sized=False),
)

INT = ("abc", "", "1.5", HUGE, "nan", "0x10")
FLOAT = ("abc", "", "nan", "inf", "-inf", "-1", "1e400", HUGE)
NAME = (LONG, "", "nope", NOT_UTF8)

#: (argv before the option, option, bad values, statuses, in a process)
VALUES: tuple[tuple[tuple[str, ...], str, tuple[str, ...], tuple[int, ...], bool], ...] = (
    (("demo",), "--variant", NAME, (2,), False),
    (("demo",), "--cycles", (*INT, "-1", "0", "1000000000000"), (2,), False),
    (("demo",), "--speed", FLOAT, (2,), False),
    (("demo",), "--seed", (*INT, "-1", "99999999999999"), (2,), False),
    (("demo",), "--fault", (LONG, "", "nope", "jam@nowhere"), (2,), False),
    (("demo",), "--dice", (LONG, ""), (2,), False),
    (RUN, "--sim-seed", (*INT, "-1", "99999999999999"), (2,), True),
    (RUN, "--sim-speed", FLOAT, (2,), True),
    (RUN, "--sim-fault", (LONG, "", "nope"), (2,), True),
    (RUN, "--sim-control", ("/" + LONG, ""), (2,), True),
    (RUN, "--variant", NAME, (2,), True),
    (
        ("run", "--sim", "--audit", "@T/a.jsonl"),
        "--socket",
        (LONG, "", "rel.sock", "/" + NOT_UTF8),
        (2,),
        True,
    ),
    (
        ("run", "--sim", "--socket", "@T/s.sock"),
        "--audit",
        ("/" + LONG, "", "rel", "/" + NOT_UTF8),
        (2,),
        True,
    ),
    (("diag", "--sim"), "--motor-ms", (*INT, "0", "-5", "10001"), (2,), False),
    (("diag", "--sim"), "--faults", (*INT, "-1"), (2,), False),
    (("diag",), "--sim-fault", (LONG, "", "nope"), (2,), False),
    (("diag", "--sim"), "--sim-speed", FLOAT, (2,), False),
    (("diag", "--sim"), "--audit", ("/" + LONG, "", NOT_UTF8), (2,), False),
    (("status",), "--config", (NOT_UTF8, "/" + LONG), (2,), False),
    (("deal", "--random"), "--variant", NAME, (2,), False),
    (
        ("deal", "--variant", "wenzhou", "--random"),
        "--leader",
        (LONG, "", "Q", "EE", NOT_UTF8),
        (2,),
        False,
    ),
    (("deal", "--variant", "wenzhou", "--random"), "--seed", ("abc", HUGE, ""), (2,), False),
    (
        ("deal", "--variant", "wenzhou", "--random"),
        "--tile-set",
        (LONG, "", "C", NOT_UTF8),
        (2,),
        False,
    ),
    (
        ("deal", "--variant", "wenzhou", "--random"),
        "--cycle-id",
        (LONG, NOT_UTF8, "a\tb"),
        (2,),
        False,
    ),
    (
        (*DEAL[:-2], "--manifest", "@M"),
        "--throws",
        (
            *("0+7", "7+7", "+", "3+", "a+b", LONG, HUGE, "1+2+3+4+5", "-1+3", ",,,"),
            "3+4," * 2000,
            *("\u0663+4,5+6", "\u00b2+4,5+6", "3.0+4,5+6", "3+4,\uff15+6"),  # ٣, ², fullwidth 5
        ),
        (2,),
        False,
    ),
    (HAND, "--melds", (LONG, "[", "123m," * 1000), (2,), False),
    (HAND, "--win", (LONG, "1x", "", NOT_UTF8), (2,), False),
    (HAND, "--joker", (LONG, "1x", ""), (2,), False),
    (HAND, "--point", (LONG, "nan", "inf", "-1", "1e400", HUGE, "abc", "", NOT_UTF8), (2,), False),
    (HAND, "--leader-streak", (*INT, "-1", "1" + "0" * 30), (2,), False),
    (("hand", "--variant", "sichuan", "1m"), "--robbed-kong-points", (*INT, "-1"), (2,), False),
    (("hand", "--variant", "simplified", "1m"), "--order", (*INT, "0", "5"), (2,), False),
    (("hand", "1m"), "--variant", NAME, (2,), False),
    (("hand", "--variant", "wenzhou"), "1m", (LONG, "1x", HUGE, "1m " * 500), (2,), False),
    (("sim", "--pty"), "--seed", (*INT, "-1", "99999999999999"), (2,), True),
    (("sim", "--pty"), "--speed", FLOAT, (2,), True),
    (("sim", "--pty"), "--tiles", (*INT, "100", "-136"), (2,), True),
    (("sim", "--pty"), "--fault", (LONG, "", "nope"), (2,), True),
    (("sim", "--pty"), "--serial", (LONG, "", NOT_UTF8), (2,), True),
    (("sim", "--pty"), "--link", ("/" + LONG,), (2,), True),
    (("sim",), "--tcp", (LONG, "x", "127.0.0.1:99999", ":", "127.0.0.1:abc"), (2,), True),
    (("link-demo", "--quiet"), "--drop", FLOAT, (2,), False),
    (("link-demo", "--quiet"), "--corrupt", ("nan", "-1", "2"), (2,), False),
    (("link-demo", "--quiet"), "--seed", (*INT, "-1"), (2,), False),
    (
        ("throw",),
        "3+4",
        (
            *("0+7", "+", "a", "-1+2", "3+", "1+2+3+4+5+6+7", LONG, HUGE, NOT_UTF8),
            *("\u0663+4", "\u00b2+4", "3.0+4", "true+4", "\uff13+4"),  # ٣, ², fullwidth 3
        ),
        (2,),
        False,
    ),
    (("shuffle",), "--socket", (LONG, ""), (2,), False),
    (
        ("shuffle",),
        "--socket",
        ("@T", "@M", "/" + NOT_UTF8),
        (3,),
        False,
    ),  # not a socket: a directory, a file
    (("audit", "verify", "@L"), "--key", (LONG, "", "zz"), (2,), False),
    (("audit", "verify", "@L"), "--table", (LONG, NOT_UTF8, "0"), (2,), False),
    (("audit", "replay", "@L"), "--cycle", (LONG, ""), (2,), False),
    (("gateway", "--config", "@T/none.toml"), "--socket", (LONG,), (2,), True),
    (FLOOR, "--tables", (*INT, "0", "-1", "1001"), (2,), True),
    (FLOOR, "--broker", (LONG, "x", "h:0", "h:99999"), (2,), True),
    (FLOOR, "--sim-speed", FLOAT, (2,), True),
    (FLOOR, "--duration", (*FLOAT,), (2,), True),
    ((), "mjtable", (LONG, "nope", "--bogus"), (2,), False),
    (("firmware", "verify", "--port", "@T/p", "--build", "@T"), "--timeout", FLOAT, (2,), False),
    (BUNDLE, "--journal-lines", (*INT, "0", "-1", "100001"), (2,), False),
    (BUNDLE, "--since", (LONG, "", " ", NOT_UTF8, "a\tb"), (2,), False),
    (BUNDLE[:3], "--output", ("@T/no/such/b.tar.gz", "@M", "@T"), (2,), False),
    (("support-bundle", "--output", "@T/b.tar.gz"), "--socket", (LONG, ""), (2,), False),
)

#: through stdin (a pipe is no regular file, whatever it carries) and argv's raw bytes
THROUGH_A_PROCESS = (
    Case(("deal", *DEAL[1:], "--manifest", "/dev/stdin"), stdin=CONTENTS["binary"], process=True),
    Case(("config", "check", "/dev/stdin"), (1,), stdin=CONTENTS["deep-toml"], process=True),
    Case(("audit", "verify", "/dev/stdin"), stdin=CONTENTS["deep-json"], process=True),
    Case(("hand", *HAND[1:], "--table", "/dev/stdin"), stdin=b"", process=True),
    Case(("deal", "--variant", "wenzhou", "--random", "--cycle-id", NOT_UTF8), process=True),
    Case(("config", "check", f"@T/{NOT_UTF8}.toml"), (1,), process=True),
)


def cases() -> list[Case]:
    found: list[Case] = []
    for slot in SLOTS:
        for kind in KINDS:
            if kind in slot.skip:
                continue
            argv = tuple(a.replace("@F", f"@F:{kind}") for a in slot.argv)
            process = kind in SPECIAL or (slot.process and kind == SAMPLE_KIND)
            found.append(Case(argv, slot.statuses(kind), process))
    for before, option, values, statuses, serves in VALUES:
        for index, value in enumerate(values):
            process = serves and index == SAMPLE_VALUE
            if option == "mjtable":
                found.append(Case((value,), statuses, process))
            elif option.startswith("-"):
                found.append(Case((*before, option, value), statuses, process))
            else:  # a positional argument in the option's place
                found.append(Case((*before, value, *_rest(before)), statuses, process))
    found.extend(THROUGH_A_PROCESS)
    return found


def _rest(before: tuple[str, ...]) -> tuple[str, ...]:
    return ("--socket", "/nonexistent/api.sock") if before == ("throw",) else ()
