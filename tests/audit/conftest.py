"""Fixtures of the audit tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def logpath(tmp_path: Path) -> Path:
    """Where a test's audit log lives: in a directory the log creates."""
    return tmp_path / "audit" / "audit.jsonl"
