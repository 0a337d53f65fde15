"""tests/support/asuser.py: the child that acts as nobody imports what it needs even where
nobody cannot read it (a checkout inside a folder of mode 0700), and runs it as nobody."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

from tests.support.asuser import NOBODY, as_nobody


def test_a_module_only_root_can_read_is_imported_and_run_as_nobody(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: only root acts as another user (other users ask as themselves)")
    hidden = tmp_path / "hidden"  # as a clone in a folder made by mktemp -d
    hidden.mkdir(mode=0o700)
    package = hidden / "mjtable_asuser_probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "lazy.py").write_text("import os\n\nRAN_AS = os.geteuid()\n")
    secret = hidden / "secret"
    secret.write_text("root's only")
    monkeypatch.syspath_prepend(str(hidden))

    def action() -> str:
        lazy = importlib.import_module("mjtable_asuser_probe.lazy")  # first imported here
        try:
            secret.read_text()
            read = "read the secret"
        except PermissionError:
            read = "denied the secret"
        return f"module run as {lazy.RAN_AS}, child {os.geteuid()}:{os.getegid()}, {read}"

    said = as_nobody(action)
    assert said == f"module run as {NOBODY}, child {NOBODY}:{NOBODY}, denied the secret"
