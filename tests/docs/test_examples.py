"""Every example in docs/*.md runs, or says why it cannot (tests/support/docblocks.py).

Python blocks run in this process; commands (`mjtable ...`, `python -m ...`) run in a
subprocess, in a temporary directory, and what the doc shows after a `$` command is compared
with what it prints. Examples that name the table's real paths (/run/mjtable/api.sock,
/var/lib/mjtable/audit.jsonl, /etc/mjtable/config.toml) run against temporary ones set up
below, one context per doc: a simulated service (`mjtable run --sim`), an audit chain, the
doc's own configuration example. Benchmarks take minutes (`make bench` runs them): their
commands run with `--help`, which proves the module and its options exist. Blocks already
checked by the tests of their area (the API schemas, the diagrams, the configuration example,
the protocol's example frames) are JSON, mermaid or TOML: no block of those kinds runs here.
"""

from __future__ import annotations

import inspect
import io
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.docblocks import (
    DOCS,
    ROOT,
    Block,
    Command,
    all_blocks,
    blocks,
    markers,
    options_of,
    subcommands,
    synopsis_options,
)

RUNNABLE = ("mjtable", "python", ".venv/bin/python")
# the installed program is this one (docs/install.md: one virtualenv per version, `current`)
ALIASES = {
    "/opt/mjtable/.venv/bin/mjtable": "mjtable",
    "/opt/mjtable/current/bin/mjtable": "mjtable",
}
WAIT = 60.0


@dataclass
class Context:
    """What one doc's examples run against."""

    cwd: Path
    subs: dict[str, str] = field(default_factory=dict)  # text in the doc -> text run
    namespace: dict[str, Any] = field(default_factory=dict)
    # for an example that waits forever (an event loop): when to stop it, and how
    stop_when: Callable[[list[str]], bool] | None = None
    stop: Callable[[], object] | None = None
    ends_with: tuple[type[BaseException], ...] = ()
    check: Callable[[dict[str, Any], list[str]], None] | None = None


# -- one context per doc ---------------------------------------------------------------------


def api_context(block: Block, tmp: Path, stack: ExitStack) -> Context:
    shutil.copytree(DOCS / "api", tmp / "docs" / "api")  # `--write docs/api` writes here
    context = Context(tmp)
    if "ApiClient(" in block.text:
        from controller.api.client import ConnectionLost
        from tests.support.sim_service import Service

        service = Service(tmp, speed=0.05)  # slow enough for the shuffle's events to be seen
        stack.callback(service.cleanup)
        service.start()
        context.subs["/run/mjtable/api.sock"] = service.socket
        context.stop_when = lambda printed: len(printed) >= 3  # the state, then two events
        context.stop = service.terminate
        context.ends_with = (ConnectionLost,)

        def shown(namespace: dict[str, Any], printed: list[str]) -> None:
            assert printed[0] == "idle", printed
            for line in printed[1:]:
                assert re.fullmatch(r"[a-z_]+ \d{4}-\d\d-\d\dT[\d:.]+Z", line), printed

        context.check = shown
    if "ApiServer(" in block.text:
        from controller.service.config import load_config, with_changes
        from tests.support.fake_controller import FakeTable

        config = load_config(ROOT / "udev" / "config.example.toml")
        from drivers.ioloop import IoLoop

        api = {"socket": str(tmp / "api.sock"), "group": None}  # no group mjtable here
        loop = IoLoop("docs-example")  # the service's loop
        loop.start()
        stack.callback(loop.stop)
        context.namespace = {
            "table": FakeTable(),
            "config": with_changes(config, {"api": api}),
            "loop": loop,
        }
    return context


def audit_context(block: Block, tmp: Path, stack: ExitStack) -> Context:
    from tests.support.audit_cycles import write_chain

    # what the doc's `audit verify` shows: three rotations and a torn tail set aside...
    good = tmp / "lib" / "audit.jsonl"
    good.parent.mkdir()
    write_chain(good, ["c-1", "c-2", "c-3"], max_bytes=8192, torn_tail=True)
    # ...and a chain with records 1 and 2 cut out of its oldest file
    broken = tmp / "audit.jsonl"
    write_chain(broken, ["c-1", "c-2", "c-3"], max_bytes=8192)
    oldest = tmp / "audit.jsonl.1"
    lines = oldest.read_bytes().splitlines(keepends=True)
    oldest.write_bytes(b"".join(lines[:1] + lines[3:]))
    # the Python example appends to and replays cycle t1-000042 of its own log
    path = tmp / "py" / "audit.jsonl"
    path.parent.mkdir()
    write_chain(path, ["t1-000042"], max_bytes=1 << 20)
    return Context(
        tmp,
        subs={"/var/lib/mjtable/audit.jsonl": str(good)},
        namespace={
            "path": path,
            "path_or_directory_or_list": path,
            "datetime": datetime,
            "UTC": UTC,
        },
    )


def cli_context(block: Block, tmp: Path, stack: ExitStack) -> Context:
    if "support-bundle --config" in block.text:
        from tests.support.sim_service import Service

        # the table's files in a folder of their own: the bundle is not written among them
        (tmp / "table").mkdir()
        service = Service(tmp / "table")
        stack.callback(service.cleanup)
        secrets = (
            '[gateway]\nhost = "floor.example"\nusername = "floor"\npassword = "s3cret-word"\n'
            f'[station]\ntokens = {{ technician = "sha256:{"0" * 64}", '
            f'viewer = "sha256:{"1" * 64}" }}\n'
        )
        (tmp / "config.toml").write_text(service.config.read_text() + secrets)
        service.start()
    return Context(tmp)


def config_context(block: Block, tmp: Path, stack: ExitStack) -> Context:
    # the file checked and loaded is the doc's own example
    example = next(b.text for b in blocks(DOCS / "config.md") if b.language == "toml")
    (tmp / "config.toml").write_text(example)
    return Context(tmp, subs={"/etc/mjtable/config.toml": str(tmp / "config.toml")})


def install_context(block: Block, tmp: Path, stack: ExitStack) -> Context:
    from tests.support.audit_cycles import write_chain

    path = tmp / "audit.jsonl"  # the doc verifies the chain and replays cycle t7-000042
    write_chain(path, ["t7-000041", "t7-000042"], max_bytes=1 << 20)
    return Context(tmp, subs={"/var/lib/mjtable/audit.jsonl": str(path)})


def panel_context(block: Block, tmp: Path, stack: ExitStack) -> Context:
    from drivers.usbemu import emulated_panel

    backend, _device = emulated_panel()
    events: list[object] = []
    return Context(
        tmp,
        subs={"backend=None,": "backend=backend,"},  # the emulated bus, not libusb
        namespace={"time": time, "on_event": events.append, "backend": backend},
    )


def protocol_context(block: Block, tmp: Path, stack: ExitStack) -> Context:
    port = io.BytesIO()

    def wrote(namespace: dict[str, Any], printed: list[str]) -> None:
        assert port.getvalue(), "the engine gave no bytes for the wire"

    return Context(tmp, namespace={"now": 0, "data": b"", "port": port}, check=wrote)


CONTEXTS: dict[str, Callable[[Block, Path, ExitStack], Context]] = {
    "api.md": api_context,
    "audit.md": audit_context,
    "cli.md": cli_context,
    "config.md": config_context,
    "install.md": install_context,
    "panel.md": panel_context,
    "protocol.md": protocol_context,
}


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def context_for(block: Block, tmp: Path, stack: ExitStack) -> Context:
    make = CONTEXTS.get(block.doc)
    return make(block, tmp, stack) if make else Context(tmp)


def substitute(text: str, subs: dict[str, str]) -> str:
    for old, new in {**ALIASES, **subs}.items():
        text = text.replace(old, new)
    return text


# -- what runs -------------------------------------------------------------------------------


def runnable(command: Command) -> bool:
    try:
        words = shlex.split(substitute(command.text, {}), comments=True)
    except ValueError:  # not a shell line as written (`<the project's repository>`)
        return False
    return bool(words) and words[0] in RUNNABLE and "|" not in words


def examples(kind: str) -> list[Block]:
    return [b for b in all_blocks() if b.kind == kind and b.not_run is None]


def test_every_example_is_run_or_says_why() -> None:
    unmarked = []
    for block in all_blocks():
        if block.not_run is not None:
            assert block.not_run, f"{block.id}: <!-- not run: --> needs a reason"
            assert block.kind != "other", f"{block.id}: marked but not an example to run"
        elif block.kind == "commands" and not all(runnable(c) for c in block.commands()):
            unmarked.append(block.id)
    assert not unmarked, f"runs outside this machine: mark <!-- not run: why --> {unmarked}"
    for doc in DOCS.glob("*.md"):
        found = {b.line - 1 for b in blocks(doc) if b.not_run is not None or b.output_note}
        assert set(markers(doc)) == found, f"{doc.name}: a marker stands before no block"
    assert len(examples("python")) + len(examples("commands")) >= 15  # the parser finds them


def test_files_the_docs_name_exist() -> None:
    """A test or benchmark file named in the docs exists (the tests move and get renamed)."""
    missing = []
    for doc in [*DOCS.glob("*.md"), ROOT / "README.md"]:
        text = doc.read_text(encoding="utf-8")
        for path in re.findall(r"\b(?:tests|bench)/[\w/*.-]+\.py\b", text):
            if not list(ROOT.glob(path)):
                missing.append(f"{doc.name}: {path}")
    assert not missing, missing


@pytest.mark.parametrize("block", examples("python"), ids=lambda b: b.id)
def test_python_example_runs(block: Block, tmp_path: Path, stack: ExitStack) -> None:
    context = context_for(block, tmp_path, stack)
    code = compile(substitute(block.text, context.subs), block.id, "exec")
    printed: list[str] = []
    namespace = {
        "__name__": "__doc_example__",
        "print": lambda *args, **_: printed.append(" ".join(map(str, args))),
        **context.namespace,
    }
    failed: list[BaseException] = []

    def run() -> None:
        try:
            exec(code, namespace)
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=run, name=f"example {block.id}", daemon=True)
    thread.start()
    if context.stop_when is not None and context.stop is not None:
        end = time.monotonic() + WAIT
        while thread.is_alive() and not context.stop_when(printed):
            assert time.monotonic() < end, f"{block.id} printed only {printed}"
            time.sleep(0.02)
        context.stop()
    thread.join(WAIT)
    assert not thread.is_alive(), f"{block.id} did not finish"
    if failed and not isinstance(failed[0], context.ends_with):
        raise failed[0]
    if context.check is not None:
        context.check(namespace, printed)


def shape(line: str, loose: bool) -> str:
    """A line as a pattern: itself, or with figures and hashes free; `…` is anything."""
    free = r"([0-9a-f]{16,}|\d+|…)" if loose else "(…)"
    parts = re.split(free, line.rstrip())
    out = []
    for n, part in enumerate(parts):
        if n % 2 == 0:
            out.append(re.escape(part))
        else:
            out.append(".*" if part == "…" else "[0-9a-f]+" if len(part) >= 16 else r"\d+")
    return "".join(out)


def run_command(command: Command, context: Context) -> subprocess.CompletedProcess[str]:
    words = shlex.split(substitute(command.text, context.subs), comments=True)
    program, args = words[0], words[1:]
    cwd = context.cwd
    if program == "mjtable":
        argv = [sys.executable, "-m", "cli", *args]
    elif args[:2] and args[0] == "-m" and args[1].startswith("bench."):
        argv = [sys.executable, *args[:2], "--help"]  # a benchmark: its module and options
        cwd = ROOT  # bench/ is the repository's, not installed
    else:
        argv = [sys.executable, *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=WAIT, check=False)


@pytest.mark.parametrize("block", examples("commands"), ids=lambda b: b.id)
def test_command_example_runs(block: Block, tmp_path: Path, stack: ExitStack) -> None:
    context = context_for(block, tmp_path, stack)
    for command in block.commands():
        done = run_command(command, context)
        said = (done.stdout + done.stderr).splitlines()
        where = f"{block.doc} line {command.line}: {command.text}"
        if not command.output:
            assert done.returncode == 0, f"{where}: exit {done.returncode}\n{done.stderr}"
            if "--help" in done.args:
                for option in re.findall(r"(?<!\S)--[a-z][a-z0-9-]*", command.text):
                    assert option in done.stdout, f"{where}: no option {option}"
            continue
        # the doc may show an excerpt: its lines, one after the other, somewhere in the output
        loose = block.output_note is not None
        expected = [shape(line, loose) for line in command.output]
        starts = range(len(said) - len(expected) + 1)
        assert any(
            all(re.fullmatch(p, line.rstrip()) for p, line in zip(expected, said[i:], strict=False))
            for i in starts
        ), f"{where}: the doc shows\n" + "\n".join(command.output) + "\nit says\n" + "\n".join(said)


@pytest.mark.parametrize("block", examples("synopsis"), ids=lambda b: b.id)
def test_synopsis_names_real_options(block: Block) -> None:
    for command in block.commands():
        name, options = synopsis_options(command)
        assert name in subcommands(), f"{block.id}: no subcommand {name!r}"
        unknown = options - options_of(subcommands()[name])
        assert not unknown, f"{block.id}: mjtable {name} has no {sorted(unknown)}"


def signatures(text: str) -> list[tuple[str, list[str]]]:
    """``name(a, b: T, *, c=1)`` entries of a listing: each name and its parameter names."""
    found = []
    code = re.sub(r"\n\s+", " ", text)  # a signature may go on over the next line
    for line in code.splitlines():
        line = line.split("#")[0]
        for name, params in re.findall(r"(?:^|;\s*)(\w+)\(([^()]*)\)", line):
            names, depth, current = [], 0, ""
            for char in params + ",":
                if char == "," and depth == 0:  # a comma between parameters
                    names.append(re.split(r"[:=]", current)[0].strip())
                    current = ""
                    continue
                depth += {"[": 1, "]": -1}.get(char, 0)
                current += char
            found.append((name, [n for n in names if n]))
    return found


@pytest.mark.parametrize("block", examples("listing"), ids=lambda b: b.id)
def test_listing_matches_the_code(block: Block) -> None:
    imports, _, listing = block.text.partition("\n\n")
    namespace: dict[str, Any] = {}
    exec(compile(imports, block.id, "exec"), namespace)
    entries = signatures(listing)
    assert entries, f"{block.id}: no signature found"
    for name, params in entries:
        assert name in namespace, f"{block.id}: {name} is not imported by the listing"
        real = []
        for p in inspect.signature(namespace[name]).parameters.values():
            if p.kind is p.KEYWORD_ONLY and "*" not in real:
                real.append("*")
            real.append(p.name)
        assert params == real, f"{block.id}: {name}({', '.join(params)}), the code has {real}"
