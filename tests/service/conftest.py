"""The service's tests: `mjtable run --sim` as a real process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.sim_service import Service


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    """A service with its own paths under the test's directory, not yet started."""
    svc = Service(tmp_path)
    try:
        yield svc
    finally:
        svc.cleanup()
