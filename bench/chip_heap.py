"""Where the board's heap goes, on the emulated chip, from the `.mpy` files: a minute or two
instead of bench.chip's cycles.

    .venv/bin/python -m bench.chip_heap [--tiles 136] [--rp2040 DIR]

The sources' build (`mjtable firmware build`) goes on the flash of MicroPython's stock Pico image
with a ``main.py`` of its own (not the firmware's): it imports the board's modules one at a time,
each after those it imports (the order MicroPython finishes them in when ``main.py`` imports
``firmware.app``, ``firmware.config`` and ``firmware.hal.rp2``), and prints the heap free after a
collection before and after each; then it makes what the running board holds (the HAL, the
configuration, the firmware with its board, store and protocol engine) and runs 300 passes of the
main loop with no host, each step measured the same way. A package's ``__init__`` is measured on
its own: the build's ``protocol/__init__.mpy`` is put on the flash as ``/bench_protocol_init.mpy``
and an empty one in its place, so that importing a module of the package loads that module alone.
"""

from __future__ import annotations

import argparse
import ast
import re
import select
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from controller.firmware.build import PACKAGES, build, default_source_root
from simulator.chip.exchange import Inputs, Runner, shared_folder
from simulator.chip.flash import build_files, file_system
from simulator.transport import SimulatorError

#: what ``main.py`` imports, in its order
ROOTS = ("firmware.app", "firmware.config", "firmware.hal.rp2")
#: the wiring: both expanders and the dice unit answer
WIRING = (
    '{"i2c": [{"address": 32, "kind": "mcp23017"}, {"address": 33, "kind": "mcp23017"}, '
    '{"address": 48, "kind": "bytes"}]}'
)
_LINE = re.compile(r"HEAP (\S+) (-?\d+) (-?\d+)")


def _top_imports(root: Path, module: str) -> list[str]:
    """The modules of ours ``module`` imports when it runs, in order (imports in functions and
    under ``if TYPE_CHECKING`` do not run at import)."""
    path = root / (module.replace(".", "/") + ".py")
    if not path.is_file():
        path = root / module.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_bytes())
    out: list[str] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                    visit(node.orelse)
                    continue
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
            elif isinstance(node, ast.Import):
                out.extend(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                out.append(node.module)
                for alias in node.names:  # from package import module
                    sub = f"{node.module}.{alias.name}"
                    if (root / (sub.replace(".", "/") + ".py")).is_file():
                        out.append(sub)

    visit(tree.body)
    return [m for m in out if m.split(".")[0] in PACKAGES]


def import_order(root: Path) -> list[str]:
    """Every module ``main.py`` loads, each after the modules it imports; a package (its
    ``__init__``) before its modules."""
    done: list[str] = []
    seen: set[str] = set()

    def load(module: str) -> None:
        parts = module.split(".")
        for i in range(1, len(parts)):  # the packages on the way
            package = ".".join(parts[:i])
            if package not in seen:
                seen.add(package)
                for dep in _top_imports(root, package):
                    load(dep)
                done.append(package)
        if module in seen:
            return
        seen.add(module)
        for dep in _top_imports(root, module):
            load(dep)
        done.append(module)

    for module in ROOTS:
        load(module)
    return done


def program(modules: list[str], tiles: int) -> bytes:
    """The chip's ``main.py``: a line ``HEAP what free-before free-after`` per step, then the
    modules loaded (``MODULES`` and their names)."""
    return f"""import gc
import sys
def free():
    gc.collect()
    return gc.mem_free()
def show(what, before):
    print("HEAP %s %d %d" % (what, before, free()))
print("HEAP boot 0 %d" % free())
for name in {modules!r}:
    b = free()
    __import__(name)
    show(name, b)
b = free()
from firmware.hal.rp2 import Rp2Hal
from firmware.config import BoardConfig
from firmware.app import boot
show("names", b)
b = free()
hal = Rp2Hal()
show("Rp2Hal()", b)
b = free()
config = BoardConfig({tiles})
show("BoardConfig()", b)
b = free()
app = boot(hal, config)
show("App()", b)
b = free()
for _ in range(300):
    app.step()
show("300-passes", b)
print("MODULES " + " ".join(sorted(sys.modules)))
print("HEAP end 0 %d" % free())
""".encode()


@dataclass(frozen=True)
class Heap:
    #: (step, heap free before it, after it), each after a collection; ``before`` 0 for the
    #: heap free at boot and at the end
    steps: list[tuple[str, int, int]]
    #: the modules loaded on the chip at the end (sys.modules)
    modules: list[str]

    @property
    def free(self) -> int:
        """The heap free at the end: the firmware made and run 300 passes, after a collection."""
        return self.steps[-1][2]


def measure(tiles: int, shared: Path, work: Path) -> Heap:
    """Build the sources for ``tiles`` in ``work``, run the program on the chip, read what it
    printed (SimulatorError when it failed, with its console)."""
    root = default_source_root()
    built = build(root, work / "build", tiles=tiles).directory
    files = build_files(built)
    files["/main.py"] = program(import_order(root), tiles)
    flash = work / "flash.lfs"
    flash.write_bytes(file_system(files))
    runner = Runner(flash, WIRING, shared, entropy=1)
    devices = {0x20: b"\xff\xff", 0x21: b"\x00\x00", 0x30: b"\x01\x02\x03"}
    try:
        for _ in range(60_000):
            runner.send(Inputs(1000, 0, devices=devices))
            while True:
                if runner.ended:
                    raise SimulatorError(runner.failure or "the runner stopped")
                if runner.take():
                    break
                select.select([runner], [], [], 1.0)  # until the slice's answer comes
            console = runner.console.decode("utf-8", "replace")
            if "HEAP end" in console or "Traceback" in console:
                break
    finally:
        runner.stop()
    if "Traceback" in console:
        raise SimulatorError("the program failed on the chip:\n" + console)
    steps = [(w, int(a), int(b)) for w, a, b in _LINE.findall(console)]
    found = re.search(r"MODULES ([^\r\n]*)", console)
    if not steps or steps[-1][0] != "end" or found is None:
        raise SimulatorError("the program printed no figures:\n" + console)
    return Heap(steps, found.group(1).split())


def report(heap: Heap) -> str:
    lines = [f"{'step':32} {'bytes taken':>12} {'free after':>12}"]
    imports = 0
    for what, before, after in heap.steps:
        taken = before - after if before else 0
        if "." in what or what in PACKAGES:
            imports += taken
        lines.append(f"{what:32} {taken:>12,} {after:>12,}")
    lines.append(f"{'the imports, in all':32} {imports:>12,}")
    ours = [name for name in heap.modules if name.split(".")[0] in PACKAGES]
    lines.append(f"modules of ours loaded: {len(ours)}: {' '.join(ours)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiles", type=int, default=136, help="the table (default 136)")
    parser.add_argument("--rp2040", type=Path, help="the shared rp2040 folder")
    args = parser.parse_args(argv)
    try:
        shared = shared_folder(args.rp2040) if args.rp2040 else shared_folder()
        with tempfile.TemporaryDirectory(prefix="mjtable-heap-") as work:
            heap = measure(args.tiles, shared, Path(work))
    except SimulatorError as exc:
        print(f"bench.chip_heap: {exc}", file=sys.stderr)
        return 1
    print(report(heap))
    return 0


if __name__ == "__main__":
    sys.exit(main())
