"""The page in a real browser (Debian's Chromium, driven by Playwright) against a real floor:
a `mjtable run --sim` core and `mjtable station` serving the page, with no broker."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

from playwright.sync_api import BrowserContext, Page, expect

from controller.api.client import ApiClient
from tests.gateway.test_dealt import deal
from tests.station.conftest import WebTable, accessibility_problems, screenshot
from tests.station.test_picture import TILE

ROOT = Path(__file__).resolve().parents[2]


def log_in(page: Page, url: str, token: str) -> None:
    page.goto(url + "login")
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Log in").click()


def buttons_within_reach(page: Page, names: tuple[str, ...]) -> None:
    """Each button on the 800×480 display without scrolling, as big as a finger's tip."""
    for name in names:
        box = page.get_by_role("button", name=name, exact=True).bounding_box()
        assert box is not None, name
        assert box["y"] + box["height"] <= 480 and box["x"] + box["width"] <= 800, (name, box)
        assert box["height"] >= 48 and box["width"] >= 48, (name, box)
    assert page.evaluate("document.documentElement.scrollWidth") <= 800


def test_viewer_login_state_picture_without_faces_and_logout(
    web_table: WebTable, browser: BrowserContext
) -> None:
    page = browser.new_page()
    page.goto(web_table.url)
    expect(page).to_have_url(web_table.url + "login")
    log_in(page, web_table.url, web_table.viewer + "nope")
    expect(page.get_by_role("alert")).to_have_text("That token is not valid for this table.")
    expect(page).to_have_url(web_table.url + "login")
    log_in(page, web_table.url, web_table.viewer)
    expect(page).to_have_url(web_table.url)
    expect(page.locator("#role")).to_have_text("viewer")
    expect(page.locator("#state")).to_have_text("idle")
    expect(page.locator("#link")).to_have_text("up")
    expect(page.locator("#live")).to_contain_text("live")  # the stream is open
    with ApiClient(web_table.table.socket) as client:  # DEAL before any walls: refused
        assert not client.deal().accepted
    refused = page.locator("#refused")
    expect(refused).to_contain_text("DEAL refused")
    expect(refused).to_contain_text("press SHUFFLE")
    cookies = {c["name"]: c for c in browser.cookies()}
    session = cookies["mjtable_session"]
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""  # out of the page's scripts' reach

    cycle = deal(web_table.table)  # a whole cycle, through the table's full API
    expect(page.locator("#cycles")).to_have_text("1")
    svg = page.locator("svg.table-picture")
    expect(svg.locator("g.breach")).to_have_count(1)
    expect(svg.locator("g.wall")).to_have_count(4)
    for seat in "ESWN":
        expect(svg.locator(f"g.wall[data-wall='{seat}'] rect.stack")).to_have_count(17)
    with ApiClient(web_table.table.socket) as client:
        dealt = client.get_cycle(cycle)
    assert dealt is not None
    breach = svg.locator("g.breach")
    assert breach.get_attribute("data-wall") == dealt.breach.wall
    assert breach.get_attribute("data-stack") == str(dealt.breach.stack)
    assert dealt.joker is not None
    assert svg.locator("g.joker").get_attribute("data-stack") == str(dealt.joker.position.stack)
    expect(svg.locator("text.face")).to_have_count(0)
    shown = svg.text_content() or ""
    assert TILE.findall(shown) == [] and "drawn as backs" in shown
    caption = page.locator("#picture-caption").inner_text()
    assert cycle in caption and TILE.findall(caption) == []
    expect(page.locator("#diag")).to_have_count(0)  # the checks are the technician's

    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(web_table.url + "login")
    assert "mjtable_session" not in {c["name"] for c in browser.cookies()}
    page.goto(web_table.url)
    expect(page).to_have_url(web_table.url + "login")


def test_technician_sees_a_fault_live_and_runs_the_checks(
    web_table: WebTable, browser: BrowserContext
) -> None:
    page = browser.new_page()
    log_in(page, web_table.url, web_table.technician)
    expect(page.locator("#role")).to_have_text("technician")
    expect(page.locator("#live")).to_contain_text("live")
    deal(web_table.table)
    expect(page.locator("svg.table-picture g.breach")).to_have_count(1)
    page.evaluate("window.notReloaded = true")
    loads = page.evaluate("performance.getEntriesByType('navigation').length")

    web_table.table.control_call(op="board", verb="inject", args=["estop"])
    expect(page.locator("#state")).to_have_text("fault", timeout=10_000)
    with ApiClient(web_table.table.socket) as client:
        standing = client.status().fault
    assert standing is not None and standing.code == "ESTOP"
    expect(page.locator("#fault-now")).to_contain_text("ESTOP")
    expect(page.locator("#fault-now .advice")).to_have_text(f"What to do: {standing.advice}")
    row = page.locator("#fault-table tbody tr").first
    expect(row).to_contain_text("ESTOP")
    expect(row.locator(".advice")).to_have_text(standing.advice)
    expect(page.locator("#faults-standing")).to_have_text("1")
    assert page.evaluate("window.notReloaded") is True  # the same page, updated in place
    assert page.evaluate("performance.getEntriesByType('navigation').length") == loads

    page.get_by_role("button", name="Run the checks").click()
    result = page.locator("#diag-result")
    expect(result).to_contain_text("table's service: OK", timeout=15_000)
    expect(result).to_contain_text("answered a status request")
    expect(result).to_contain_text("event stream: OK")
    expect(result).to_contain_text("board link: OK")
    expect(result).to_contain_text(re.compile(r"firmware\s*\d+\.\d+\.\d+"))
    assert page.evaluate("window.notReloaded") is True

    # the support bundle: the archive `mjtable support-bundle` makes, downloaded
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name="Download the support bundle").click()
    name = download.value.suggested_filename
    assert name.startswith("mjtable-support-table7-") and name.endswith(".tar.gz")
    saved = download.value.path()
    with tarfile.open(saved, mode="r:gz") as archive:
        names = [member.name.split("/")[-1] for member in archive.getmembers()]
    assert "manifest.json" in names and "status.json" in names

    screenshot(page, "web.png")


def test_the_dealer_deals_by_touch_on_the_tables_display(
    web_table: WebTable, browser: BrowserContext
) -> None:
    """The dealer's view on the table's 800×480 touch display: what comes next in words, the
    touch buttons within reach without scrolling, a refusal in words, a deal by two taps."""
    page = browser.new_page()
    page.set_viewport_size({"width": 800, "height": 480})
    log_in(page, web_table.url, web_table.dealer)
    expect(page).to_have_url(web_table.url + "dealer")
    expect(page.locator("#live")).to_contain_text("live")
    expect(page.locator("#next")).to_have_text("Press SHUFFLE to build the next walls.")
    buttons_within_reach(page, ("SHUFFLE", "DEAL", "STOP"))

    page.get_by_role("button", name="DEAL", exact=True).click()
    expect(page.locator("#answer")).to_contain_text("press SHUFFLE")
    expect(page.locator("#dealer-refused")).to_contain_text("DEAL refused")
    page.get_by_role("button", name="SHUFFLE", exact=True).click()
    expect(page.locator("#next")).to_have_text(
        "Press DEAL to raise them and throw the dice.", timeout=60_000
    )
    expect(page.locator("#dealer-refused")).to_have_count(0)
    # the answer to the press taken went once the walls were built: "next" says what to press
    expect(page.locator("#answer")).to_have_text("")
    page.get_by_role("button", name="DEAL", exact=True).click()
    expect(page.locator("#hands")).to_have_text("1", timeout=60_000)
    expect(page.locator("#dice")).not_to_have_text("not thrown yet")
    svg = page.locator("svg.table-picture")
    expect(svg.locator("g.breach")).to_have_count(1)
    expect(svg.locator("text.face")).to_have_count(0)  # the dealer's walls: backs only
    expect(page.locator("#next")).to_have_text("Press SHUFFLE to build the next walls.")
    screenshot(page, "dealer.png")


def test_a_day_in_french_at_the_table_with_no_accessibility_problem(
    web_table: WebTable, browser: BrowserContext
) -> None:
    """The dealer deals in French on the table's display, the technician looks and runs the
    checks in French and goes back to English; axe-core finds nothing wrong on any page."""
    url = web_table.url
    page = browser.new_page()
    page.set_viewport_size({"width": 800, "height": 480})
    page.goto(url + "language/fr?next=/login")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    assert accessibility_problems(page) == []
    page.get_by_label("Jeton").fill(web_table.dealer)
    page.get_by_role("button", name="Se connecter").click()
    expect(page).to_have_url(url + "dealer")
    expect(page.locator("#live")).to_contain_text("en direct")
    expect(page.locator("#next")).to_have_text(
        "Appuyez sur MÉLANGER pour construire les murs suivants."
    )
    assert accessibility_problems(page) == []
    page.get_by_role("button", name="DISTRIBUER", exact=True).click()
    expect(page.locator("#dealer-refused")).to_contain_text("DISTRIBUER refusé")
    expect(page.locator("#answer")).to_have_text(
        "aucun mur n'est prêt à distribuer : appuyez d'abord sur MÉLANGER"
    )
    page.get_by_role("button", name="MÉLANGER", exact=True).click()
    expect(page.locator("#next")).to_have_text(
        "Appuyez sur DISTRIBUER pour les lever et lancer les dés.", timeout=60_000
    )
    with page.expect_response("**/press") as pressed:
        page.get_by_role("button", name="DISTRIBUER", exact=True).click()
    assert pressed.value.json() == {"accepted": True, "message": "levée du jeu A"}
    expect(page.locator("#hands")).to_have_text("1", timeout=60_000)
    expect(page.locator("#walls-caption")).to_contain_text("la brèche (trait rouge) après")
    expect(page.locator("#answer")).to_have_text("")  # the hand dealt: the answer went
    buttons_within_reach(page, ("MÉLANGER", "DISTRIBUER", "STOP"))
    assert accessibility_problems(page) == []
    screenshot(page, "dealer-fr.png")
    page.get_by_role("button", name="Se déconnecter").click()

    page.set_viewport_size({"width": 1100, "height": 900})
    page.get_by_label("Jeton").fill(web_table.technician)
    page.get_by_role("button", name="Se connecter").click()
    expect(page).to_have_url(url)
    expect(page.locator("#state")).to_have_text("distribuée")
    expect(page.locator("#role")).to_have_text("technicien")
    page.get_by_role("button", name="Lancer les vérifications").click()
    expect(page.locator("#diag-result")).to_contain_text("toutes réussies")
    assert accessibility_problems(page) == []
    page.get_by_role("link", name="English").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("#state")).to_have_text("dealt")
    expect(page.get_by_role("button", name="Run the checks")).to_be_visible()
