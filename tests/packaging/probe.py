"""Run by the installed wheel's interpreter (``python -I probe.py WHAT ...``), never imported.

``-I`` keeps the checkout off ``sys.path`` (no script directory, no PYTHONPATH), so everything
below comes from the fresh environment the test built. Each action prints one JSON document:

    imports MODULE...   import each module; where each came from, and what failed
    commands            every subcommand path of `mjtable` (["audit", "verify"], ...)
    metadata            every installed distribution's requirements, and the marker environment
    audit FILE          write a short audit log at FILE with the installed writer
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import platform
import sys
import sysconfig
from pathlib import Path
from typing import Any


def imports(modules: list[str]) -> dict[str, Any]:
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    out: dict[str, Any] = {"outside": {}, "failed": {}, "imported": 0}
    for name in modules:
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            out["failed"][name] = f"{type(exc).__name__}: {exc}"
            continue
        out["imported"] += 1
        where = Path(module.__file__ or "").resolve()
        if not where.is_relative_to(site):
            out["outside"][name] = str(where)
    return out


def commands() -> list[list[str]]:
    from cli import build_parser

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> list[list[str]]:
        found = [path]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += walk(sub, [*path, name])
        return found

    return walk(build_parser(), [])


def metadata() -> dict[str, Any]:
    """Each distribution's ``Requires-Dist`` lines, and what their markers are evaluated
    against here (the environment ``packaging.markers`` defines, which this venv lacks)."""
    info = sys.implementation
    version = f"{info.version.major}.{info.version.minor}.{info.version.micro}"
    environment = {
        "implementation_name": info.name,
        "implementation_version": version,
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    }
    requires = {
        dist.metadata["Name"]: dist.requires or [] for dist in importlib.metadata.distributions()
    }
    return {"environment": environment, "requires": requires}


def audit(path: str) -> dict[str, Any]:
    from controller.audit.writer import AuditLog

    with AuditLog.open(Path(path)) as log:
        log.append("power_up", {"version": importlib.metadata.version("mjtable")})
        log.append("power_up", {"version": importlib.metadata.version("mjtable")})
        return {"head": log.head}


def main() -> None:
    action, args = sys.argv[1], sys.argv[2:]
    result: object
    if action == "imports":
        result = imports(args)
    elif action == "commands":
        result = commands()
    elif action == "metadata":
        result = metadata()
    elif action == "audit":
        result = audit(args[0])
    else:
        raise SystemExit(f"probe: unknown action {action}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
