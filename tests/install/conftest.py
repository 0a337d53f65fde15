"""What the installation tests share: a service configuration whose files are in the test's
own directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.service.config import Config, config_from_dict


@pytest.fixture
def table_config(tmp_path: Path) -> Callable[..., Config]:
    """``table_config(**sections)``: table 7 on the Wenzhou rules, its API socket and audit log
    under tmp_path, and these sections besides (e.g. ``board={"port": ...}``)."""

    def make(**sections: dict[str, Any]) -> Config:
        return config_from_dict(
            {
                "table": {"number": 7},
                "rules": {"profile": "wenzhou"},
                "api": {"socket": str(tmp_path / "api.sock")},
                "audit": {"path": str(tmp_path / "audit" / "audit.jsonl")},
                **sections,
            }
        )

    return make
