"""Readers of the installed files, shared by the files' tests and `mjtable install`'s tests.

A udev rules checker that follows udev's own rule parser (systemd's udev-rules.c: keys,
attributes, operators, double-quoted values, delimiters), and a systemd unit reader (on the
service's own line reader, controller/service/ports.py).
"""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass

from controller.service.ports import unit_lines

MATCH_OPS = ("==", "!=")
ASSIGN_OPS = ("=", "+=", "-=", ":=")
OPS = ("==", "!=", "+=", "-=", ":=", "=")

# key -> (attribute: "no" | "required" | "optional", allowed operators)
KEYS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ACTION": ("no", MATCH_OPS),
    "DEVPATH": ("no", MATCH_OPS),
    "KERNEL": ("no", MATCH_OPS),
    "SYMLINK": ("no", (*MATCH_OPS, "=", "+=", "-=", ":=")),
    "NAME": ("no", (*MATCH_OPS, "=", ":=")),
    "ENV": ("required", (*MATCH_OPS, "=", "+=")),
    "CONST": ("required", MATCH_OPS),
    "TAG": ("no", (*MATCH_OPS, "=", "+=", "-=")),
    "SUBSYSTEM": ("no", MATCH_OPS),
    "DRIVER": ("no", MATCH_OPS),
    "ATTR": ("required", (*MATCH_OPS, "=")),
    "SYSCTL": ("required", (*MATCH_OPS, "=")),
    "KERNELS": ("no", MATCH_OPS),
    "SUBSYSTEMS": ("no", MATCH_OPS),
    "DRIVERS": ("no", MATCH_OPS),
    "ATTRS": ("required", MATCH_OPS),
    "TAGS": ("no", MATCH_OPS),
    "TEST": ("optional", MATCH_OPS),
    "PROGRAM": ("no", (*MATCH_OPS, "=", "+=", ":=")),
    "IMPORT": ("required", (*MATCH_OPS, "=", "+=", ":=")),
    "RESULT": ("no", MATCH_OPS),
    "OPTIONS": ("no", ("=", "+=", ":=")),
    "OWNER": ("no", ("=", ":=")),
    "GROUP": ("no", ("=", ":=")),
    "MODE": ("no", ("=", ":=")),
    "SECLABEL": ("required", ("=", "+=")),
    "RUN": ("optional", ("=", "+=", ":=")),
    "GOTO": ("no", ("=",)),
    "LABEL": ("no", ("=",)),
}
ENV_READ_ONLY = {
    "ACTION", "DEVLINKS", "DEVNAME", "DEVPATH", "DEVTYPE", "DRIVER",
    "IFINDEX", "MAJOR", "MINOR", "SEQNUM", "SUBSYSTEM", "TAGS",
}  # fmt: skip
IMPORT_TYPES = {"file", "program", "builtin", "db", "cmdline", "parent"}
CONST_NAMES = {"arch", "virt"}


@dataclass(frozen=True)
class Token:
    key: str
    attr: str | None
    op: str
    value: str


@dataclass(frozen=True)
class Problem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash-continued lines; drop comments and blank lines."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not pending:
            start = number
            if not line.strip() or line.lstrip().startswith("#"):
                continue
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        out.append((start, pending + line))
        pending = ""
    if pending:
        out.append((start, pending))
    return out


def _parse_value(text: str, pos: int) -> tuple[str, int]:
    escaped = text.startswith('e"', pos)
    pos += 1 if escaped else 0
    if pos >= len(text) or text[pos] != '"':
        raise ValueError("the value must be in double quotes")
    out: list[str] = []
    i = pos + 1
    while True:
        if i >= len(text):
            raise ValueError("the value's closing double quote is missing")
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\" and i + 1 < len(text) and (escaped or text[i + 1] == '"'):
            out.append(text[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1


def parse_rule_line(text: str) -> tuple[list[Token], list[str]]:
    """Tokens of one rule line, and style remarks (udev's comma/whitespace notices)."""
    tokens: list[Token] = []
    style: list[str] = []
    pos = 0
    while True:
        gap_start = pos
        while pos < len(text) and text[pos] in " \t,":
            pos += 1
        gap = text[gap_start:pos]
        if pos >= len(text):
            if "," in gap:
                style.append("stray trailing comma")
            return tokens, style
        if tokens:
            commas = gap.count(",")
            if commas != 1:
                style.append("one comma between tokens is expected")
            elif not gap.endswith((" ", "\t")) or gap.startswith((" ", "\t")):
                style.append("write ', ' between tokens")
        elif "," in gap:
            style.append("stray leading comma")
        match = re.match(r"[A-Za-z_]+", text[pos:])
        if not match:
            raise ValueError(f"a key is expected at column {pos + 1}")
        key = match.group(0)
        pos += len(key)
        attr = None
        if text.startswith("{", pos):
            end = text.find("}", pos)
            if end < 0:
                raise ValueError(f"{key}{{: the closing brace is missing")
            attr = text[pos + 1 : end]
            pos = end + 1
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        op = next((o for o in OPS if text.startswith(o, pos)), None)
        if op is None:
            raise ValueError(f"{key}: an operator (==, !=, =, +=, -=, :=) is expected")
        pos += len(op)
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        value, pos = _parse_value(text, pos)
        tokens.append(Token(key, attr, op, value))


def check_rules(text: str) -> list[Problem]:
    """Every problem udev would report (errors, warnings and style notices)."""
    problems: list[Problem] = []
    labels: set[str] = set()
    gotos: list[tuple[int, str]] = []
    for number, line in _logical_lines(text):
        try:
            tokens, style = parse_rule_line(line)
        except ValueError as exc:
            problems.append(Problem(number, f"invalid key/value pair: {exc}"))
            continue
        problems.extend(Problem(number, f"style: {s}") for s in style)
        for t in tokens:
            where = f"{t.key}{'{' + t.attr + '}' if t.attr is not None else ''}{t.op}"
            if t.key not in KEYS:
                problems.append(Problem(number, f"invalid key {t.key!r}"))
                continue
            attr_rule, ops = KEYS[t.key]
            if attr_rule == "no" and t.attr is not None:
                problems.append(Problem(number, f"{where}: {t.key} takes no attribute"))
            if attr_rule == "required" and not t.attr:
                problems.append(Problem(number, f"{where}: {t.key} needs an attribute"))
            if t.op not in ops:
                problems.append(Problem(number, f"{where}: operator {t.op} not valid here"))
            if t.key == "ENV" and t.op in ASSIGN_OPS and t.attr in ENV_READ_ONLY:
                problems.append(Problem(number, f"{where}: ENV{{{t.attr}}} cannot be set"))
            if t.key == "IMPORT" and t.attr not in IMPORT_TYPES:
                problems.append(Problem(number, f"{where}: unknown IMPORT type"))
            if t.key == "CONST" and t.attr not in CONST_NAMES:
                problems.append(Problem(number, f"{where}: CONST is arch or virt"))
            if t.key in ("ATTR", "ATTRS", "SYSCTL", "ENV") and not t.attr:
                problems.append(Problem(number, f"{where}: empty attribute"))
            if t.key == "MODE" and not re.fullmatch(r"0?[0-7]{3,4}", t.value):
                problems.append(Problem(number, f"{where}: mode {t.value!r} is not octal"))
            if t.key == "GOTO":
                gotos.append((number, t.value))
            if t.key == "LABEL":
                labels.add(t.value)
    for number, label in gotos:
        if label not in labels:
            problems.append(Problem(number, f"GOTO={label!r} has no LABEL"))
    return problems


def rule_tokens(text: str) -> list[list[Token]]:
    return [parse_rule_line(line)[0] for _, line in _logical_lines(text)]


# ---------------------------------------------------------------- a systemd unit reader


def unit_options(text: str) -> dict[str, dict[str, list[str]]]:
    """Section -> option -> every value given (systemd options may repeat)."""
    parser = configparser.ConfigParser(
        strict=False, interpolation=None, delimiters=("=",), comment_prefixes=("#", ";")
    )
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    out: dict[str, dict[str, list[str]]] = {}
    for section, name, value in unit_lines(text):
        assert value is not None, f"not an option line: {name!r}"
        out.setdefault(section, {}).setdefault(name, []).append(value)
    parser.read_string(text)  # configparser agrees it is a well-formed INI file
    return out
