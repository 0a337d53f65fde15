"""The code blocks of docs/*.md, read the way tests/docs/test_examples.py runs them.

A block is a fenced code block (three backticks, an optional language, the lines, three
backticks). What it is decides how it is checked:

- ``python``: run (``compile`` and ``exec``); a block that is not Python as written (a list
  of signatures) is a *listing*: its imports run and every ``name(params)`` line is compared
  with the real signature;
- a shell block (no language, ``sh``, ``shell`` or ``console``) holding commands: each line
  starting with ``$`` is a command and the lines after it, up to the next ``$`` line, its
  output; in a block without ``$``, every line that starts with a known program is a command
  (``mjtable status: no service...`` is a message, not a command: its second word is no
  subcommand). A block with ``[`` in a command line is a *synopsis*: its options are
  checked against the parser instead of being run;
- any other block (JSON, TOML, mermaid, plain output) is not an example to run here.

An HTML comment on the line before the fence changes that: ``<!-- not run: REASON -->``
(the reason is required), ``<!-- example output: counts and hashes vary -->`` (the output is
compared with runs of digits and hex hashes free).
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

SHELL_LANGUAGES = ("", "sh", "shell", "console")
# first words of a command line: the project's programs and the system tools docs name
PROGRAMS = (
    "mjtable",
    "python",
    ".venv/bin/python",
    "/opt/mjtable/.venv/bin/mjtable",
    "/opt/mjtable/current/bin/mjtable",
    "sudo",
    "sudoedit",
    "systemctl",
    "udevadm",
    "journalctl",
    "ls",
    "lsusb",
    "printf",
    "socat",
    "make",
)
MARKER = re.compile(r"<!--\s*(not run|example output):\s*(.*?)\s*-->")
FENCE = re.compile(r"^(```+)\s*([\w+-]*)\s*$")


@dataclass
class Command:
    """One command line of a shell block, with the output the doc shows after it."""

    line: int
    text: str
    output: list[str] = field(default_factory=list)
    continuation: list[str] = field(default_factory=list)  # a synopsis's following lines


@dataclass
class Block:
    doc: str  # file name under docs/
    line: int  # line number of the opening fence (1-based)
    language: str
    text: str
    not_run: str | None = None  # the reason given in <!-- not run: ... -->
    output_note: str | None = None  # <!-- example output: ... -->

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def kind(self) -> str:
        """python, listing, commands, synopsis or other."""
        if self.language == "python":
            try:
                compile(self.text, self.id, "exec")
            except SyntaxError:
                return "listing"
            return "python"
        if self.language in SHELL_LANGUAGES and self.commands():
            if any("[" in c.text for c in self.commands()):
                return "synopsis"
            return "commands"
        return "other"

    def commands(self) -> list[Command]:
        lines = self.text.splitlines()
        dollar = any(line.startswith("$ ") for line in lines)
        found: list[Command] = []
        for offset, line in enumerate(lines, start=1):
            number = self.line + offset
            if dollar:
                if line.startswith("$ "):
                    found.append(Command(number, line[2:].strip()))
                elif found and line.strip():
                    found[-1].output.append(line)
            elif is_command(line):
                found.append(Command(number, line.strip()))
            elif found and line.startswith(" ") and line.strip():
                found[-1].continuation.append(line.strip())
        return found


def is_command(line: str) -> bool:
    words = line.split()
    if not words or words[0] not in PROGRAMS:
        return False
    if words[0].endswith("mjtable"):
        return len(words) > 1 and words[1] in subcommands()
    return True


def blocks(doc: Path) -> list[Block]:
    """Every fenced block of ``doc``, with the marker on the line before it, if any."""
    found: list[Block] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].strip() != opening.group(1):
            body.append(lines[i])
            i += 1
        block = Block(doc.name, start + 1, opening.group(2), "\n".join(body) + "\n")
        before = lines[start - 1] if start else ""
        marker = MARKER.search(before)
        if marker and marker.group(1) == "not run":
            block.not_run = marker.group(2)
        elif marker:
            block.output_note = marker.group(2)
        found.append(block)
        i += 1
    return found


def all_blocks() -> list[Block]:
    return [b for doc in sorted(DOCS.glob("*.md")) for b in blocks(doc)]


def markers(doc: Path) -> list[int]:
    """Line numbers (1-based) of every marker comment in ``doc``."""
    text = doc.read_text(encoding="utf-8").splitlines()
    return [n for n, line in enumerate(text, start=1) if MARKER.search(line)]


# -- the command line's parser, for synopses ---------------------------------------------------


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    from cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("mjtable has no subcommands")


_SUBPARSERS: dict[str, argparse.ArgumentParser] = {}


def subcommands() -> dict[str, argparse.ArgumentParser]:
    if not _SUBPARSERS:
        _SUBPARSERS.update(_subparsers())
    return _SUBPARSERS


def options_of(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``parser`` and of its own subcommands (``config check``)."""
    found: set[str] = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= options_of(sub)
    return found


def synopsis_options(command: Command) -> tuple[str, set[str]]:
    """The subcommand a synopsis line describes and every ``--option`` it names."""
    words = shlex.split(command.text, comments=True)
    text = " ".join(line.split("#")[0] for line in [command.text, *command.continuation])
    return words[1], set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))
