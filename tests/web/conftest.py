"""A real floor for the page's browser tests, and Debian's Chromium driven by Playwright.

The floor is tests/gateway's: its mosquitto, its `mjtable run --sim` core and its gateway
process (the fixtures ``floor_dir`` and ``broker`` and the helpers are imported from
tests/gateway/conftest.py, not copied), with a ``[gateway.web]`` section added.

Chromium is Debian's (``/usr/bin/chromium``): Playwright's own browser builds are never
downloaded. On a developer's machine without it (or without the ``playwright`` package) the
browser tests are skipped with one line saying what to install; under CI=true they fail.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from gateway.floorsim import SimTable
from gateway.mosquitto import Mosquitto
from gateway.web.auth import hash_token, new_token
from tests.gateway.conftest import broker, floor_dir, sim_table, wait_link

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

__all__ = ["broker", "floor_dir"]  # tests/gateway's fixtures, used here

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
INSTALL_HINT = (
    "install Debian's Chromium (apt-get install chromium) and the development tools "
    "(pip install -e '.[dev]', which has playwright); Playwright's own browsers are not used"
)
#: Where the browser test saves its screenshot, when set (e.g. docs/web.png): never by default.
SCREENSHOT_ENV = "MJTABLE_SCREENSHOT"


def need_chromium() -> None:
    missing = []
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        missing.append(CHROMIUM)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package")
    if not missing:
        return
    message = f"{' and '.join(missing)} missing: {INSTALL_HINT}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@dataclass(frozen=True)
class WebTable:
    table: SimTable
    url: str
    viewer: str  # the tokens, in plain text (the configuration has their hashes)
    technician: str


def web_section(viewer: str, technician: str) -> str:
    return (
        '[gateway.web]\nhost = "127.0.0.1"\nport = 0\n'
        f'[gateway.web.tokens]\nviewer = "{hash_token(viewer)}"\n'
        f'technician = "{hash_token(technician)}"\n'
    )


def page_url(table: SimTable, timeout: float = 30.0) -> str:
    """The page's address, from the gateway's log (port 0: the system chose it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"the technicians' page on (http://\S+)", table.tail("gateway.log", 50))
        if found:
            return found.group(1)
        time.sleep(0.05)
    raise AssertionError(f"the gateway never served its page: {table.tail('gateway.log')}")


@pytest.fixture
def web_table(floor_dir: Path, broker: Mosquitto) -> Iterator[WebTable]:
    """Table 7 with its gateway serving the page; the tokens of both roles."""
    need_chromium()
    viewer, technician = new_token(), new_token()
    table = sim_table(floor_dir, broker, web_section(viewer, technician))
    try:
        table.start_service()
        table.wait_service()
        wait_link(table)
        table.start_gateway()
        yield WebTable(table, page_url(table), viewer, technician)
    finally:
        table.stop()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[BrowserContext]:
    """Chromium with a fresh profile of its own (the user-data-dir), closed after the test."""
    need_chromium()
    from playwright.sync_api import sync_playwright

    profile = tmp_path / "chromium-profile"
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1100, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)
