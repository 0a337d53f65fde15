"""The gateway imports only the API client, its watcher, the message models they speak, and
the I/O loop."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

GATEWAY = Path(__file__).resolve().parents[2] / "gateway"
ALLOWED_OURS = {
    "controller.api.backoff",
    "controller.api.client",
    "controller.api.messages",
    "controller.api.watcher",
    "controller.cycle.reports",
    "drivers.ioloop",
}
ALLOWED_OTHERS = {"paho", "prometheus_client", "pydantic"}


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_only_the_api_client_and_its_models() -> None:
    wrong = []
    for path in sorted(GATEWAY.glob("*.py")):
        for name in imports(path):
            top = name.split(".")[0]
            if top == "gateway" or top == "__future__" or top in sys.stdlib_module_names:
                continue
            if name in ALLOWED_OURS or top in ALLOWED_OTHERS:
                continue
            wrong.append(f"{path.name}: {name}")
    assert not wrong, wrong


def test_the_check_sees_a_wrong_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from controller.cycle.controller import CycleController\n")
    assert "controller.cycle.controller" in imports(bad)
    assert "controller.cycle.controller" not in ALLOWED_OURS
