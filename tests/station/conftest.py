"""A real table for the page's browser tests, and Debian's Chromium driven by Playwright.

The table is a `mjtable run --sim` core and `mjtable station` serving the page, with no
broker and no gateway: the page needs neither (the helpers are tests/gateway's, imported
from tests/gateway/conftest.py, not copied).

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
from station.web.auth import hash_token, new_token
from tests.gateway.conftest import floor_dir, wait_link

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

__all__ = ["floor_dir"]  # tests/gateway's fixture, used here

ROOT = Path(__file__).resolve().parents[2]
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
#: Where the browser tests save their screenshots, when set (a folder, e.g. docs: web.png and
#: dealer.png there): never by default.
SCREENSHOT_ENV = "MJTABLE_SCREENSHOTS"


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


#: axe-core, the accessibility checker the browser tests run in the page (tools/package.json)
AXE = ROOT / "tools" / "node_modules" / "axe-core" / "axe.min.js"


def accessibility_problems(page: Page) -> list[str]:
    """What axe-core finds wrong in the page as it is now (WCAG 2.1 A and AA), one line each;
    the test fails when axe-core is not installed (make npm)."""
    assert AXE.is_file(), f"{AXE} is missing: run make npm (the project's npm packages)"
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8") + "\n;0")
    violations = page.evaluate(
        """async () => (await axe.run(document, {runOnly: ["wcag2a", "wcag2aa", "wcag21a",
        "wcag21aa"]})).violations.map(v => v.id + ": " + v.help + " (" +
        v.nodes.map(n => n.target.join(" ")).join(", ") + ")")"""
    )
    return list(violations)


@dataclass(frozen=True)
class WebTable:
    table: SimTable
    url: str
    viewer: str  # the tokens, in plain text (the configuration has their hashes)
    technician: str
    dealer: str


def web_section(viewer: str, technician: str, dealer: str | None = None) -> str:
    return (
        '[station]\nhost = "127.0.0.1"\nport = 0\n'
        f'[station.tokens]\nviewer = "{hash_token(viewer)}"\n'
        f'technician = "{hash_token(technician)}"\n'
        + (f'dealer = "{hash_token(dealer)}"\n' if dealer is not None else "")
    )


def page_url(table: SimTable, timeout: float = 30.0) -> str:
    """The page's address, from the station's log (port 0: the system chose it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"the page of table \d+ on (http://\S+)", table.tail("station.log", 50))
        if found:
            return found.group(1)
        time.sleep(0.05)
    raise AssertionError(f"the station never served its page: {table.tail('station.log')}")


def screenshot(page: Page, name: str) -> None:
    """Save the page as NAME in the folder MJTABLE_SCREENSHOTS names, when it is set."""
    folder = os.environ.get(SCREENSHOT_ENV)
    if folder:
        path = Path(folder) if Path(folder).is_absolute() else ROOT / folder
        page.screenshot(path=str(path / name), full_page=True)


@pytest.fixture
def web_table(floor_dir: Path) -> Iterator[WebTable]:
    """Table 7 with its station serving the page, no broker; the tokens of both roles."""
    need_chromium()
    viewer, technician, dealer = new_token(), new_token(), new_token()
    section = web_section(viewer, technician, dealer)
    table = SimTable(floor_dir, 7, None, seed=21, gateway=section)
    try:
        table.start_service()
        table.wait_service()
        wait_link(table)
        table.start_station()
        yield WebTable(table, page_url(table), viewer, technician, dealer)
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
