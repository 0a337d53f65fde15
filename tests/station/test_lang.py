"""The pages' words in French and English: the French catalogue has every word the pages show
(and none they no longer use), keeps each word's placeholders, and a page asked for in French
shows no English word of the catalogue."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from html import unescape

import pytest
from babel.messages.pofile import read_po

import protocol.codes as codes
from controller.cycle.faults import board_fault_words
from controller.cycle.reports import ButtonEvent, FaultEvent
from station.lang import (
    LOCALE,
    MATCHED_AT_MOST,
    ROOT,
    TableWords,
    compiled,
    forms_of,
    source_words,
    translations,
)
from station.picture import picture_of
from station.view import TableView
from station.web.page import Renderer, TableInfo, Viewer, context
from tests.station.test_picture import dealt_event
from tests.station.test_server import (
    TECHNICIAN,
    VIEWER,
    Served,
    Settings,
    fault,
    serve,
    status,
)

PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")


def catalogue() -> dict[str, str]:
    """English to French; a word counted by ngettext gives each of its forms (a French for
    each, else none)."""
    with (LOCALE / "fr.po").open("rb") as po:
        found = read_po(po, locale="fr")
    pairs: dict[str, str] = {}
    for m in found:
        if not m.id or m.fuzzy:
            continue
        forms = forms_of(m.string)
        for n, english in enumerate(forms_of(m.id)):
            pairs[english] = forms[min(n, len(forms) - 1)] if all(forms) else ""
    return pairs


def test_every_word_of_the_pages_has_its_french_and_none_is_left_over() -> None:
    wanted = {english for m in source_words() if m.id for english in forms_of(m.id)}
    have = catalogue()
    missing = sorted(w for w in wanted if not have.get(w))
    assert missing == [], f"no French for {missing}: python -m station.lang, then translate"
    assert sorted(set(have) - wanted) == [], "words nothing uses: python -m station.lang"


def test_each_translation_keeps_its_placeholders() -> None:
    for english, french in catalogue().items():
        assert sorted(PLACEHOLDER.findall(english)) == sorted(PLACEHOLDER.findall(french)), (
            english,
            french,
        )


def text_of(html: str) -> str:
    """The words a person reads: no tags, no attributes, no comments."""
    html = re.sub(r"<!--.*?-->|<script.*?</script>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def english_left(text: str) -> list[str]:
    """The catalogue's English words (of three words or more) found in ``text``."""
    found = []
    for english, french in catalogue().items():
        words = PLACEHOLDER.sub("", english).strip(" .;:")
        if english != french and len(words.split()) >= 3 and words in text:
            found.append(english)
    return found


def board_fault() -> FaultEvent:
    """The emergency stop pressed while the walls were built, in the table's words."""
    name, text, advice = board_fault_words(codes.FAULT_ESTOP, codes.SUB_SAFETY, 2, 0)
    return fault(name).model_copy(update={"message": text, "advice": advice})


@pytest.fixture
def fed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TableView]:
    view = TableView()
    view.set_core(True)
    view.set_status(status("fault", board_fault()))
    view.fault(board_fault())
    view.set_picture(picture_of(dealt_event("wenzhou", [[3, 4], [2, 5]]), faces=False))
    view.pressed(
        ButtonEvent(
            at="2026-11-30T20:46:21.000Z",
            action="deal",
            source="api",
            accepted=False,
            reason="the table is in fault: a technician must clear it first",
        )
    )
    yield view


@pytest.mark.parametrize("role", ["viewer", "technician"])
def test_the_pages_in_french_show_no_english_word_of_the_catalogue(
    fed: TableView, role: str
) -> None:
    renderer = Renderer()
    viewer = Viewer(role, False, role == "technician", "csrf", role == "technician", True)
    table = TableInfo("7", "Table 7", "0.1.0")
    ctx = context(fed.snapshot(), viewer, table, "fr")
    page = text_of(renderer.page(ctx))
    dealer = text_of(renderer.dealer(context(fed.snapshot(), viewer, table, "fr", "dealer")))
    login = text_of(renderer.login(login_csrf="x", message=None, table=ctx["table"], lang="fr"))
    for shown in (page, dealer, login):
        assert english_left(shown) == []
    assert "Appelez un technicien : le défaut s'efface avec sa clé EFFACER LE DÉFAUT." in dealer
    told = "l'arrêt d'urgence a été enfoncé (capot/sécurité, en phase de construction des murs)"
    assert told in dealer.lower() and told in page
    assert "le panneau a été débranché : vérifiez son câble USB" in page
    assert "Trait rouge" not in dealer and "le trait rouge est la brèche" in page.lower()
    assert "Historique des défauts" in page and "État" in page
    french = translations("fr").gettext
    assert french("press SHUFFLE to build the next walls") == (
        "appuyez sur MÉLANGER pour construire les murs suivants"
    )


def test_the_language_is_chosen_on_the_page_and_kept(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    served: Served = serve(tmp_path_factory.mktemp("lang"), Settings())
    try:
        web = served.client()
        assert 'lang="en"' in web.get("/login").body
        chosen = web.get("/language/fr?next=/login")
        assert chosen.status == 303 and chosen.headers["Location"] == "/login"
        form = web.get("/login").body
        assert 'lang="fr"' in form and "Jeton" in form and "Se connecter" in form
        bad = web.login(VIEWER + "nope")
        assert "Ce jeton n'est pas valable pour cette table." in unescape(bad.body)
        web.login(VIEWER)
        page = web.get("/").body
        assert "Connecté comme" in page and "observateur" in page
        assert web.get("/language/de").status == 404
        away = web.get("/language/en?next=https://elsewhere.example/")
        assert away.headers["Location"] == "/"  # back to the page, never elsewhere
        assert "Logged in as" in web.get("/").body
    finally:
        served.server.stop()


def test_the_configuration_chooses_the_language_until_the_page_does(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    served = serve(tmp_path_factory.mktemp("lang"), Settings(language="fr"))
    try:
        web = served.client()
        web.login(TECHNICIAN)
        page = web.get("/").body
        assert 'lang="fr"' in page and "Lancer les vérifications" in page
        web.get("/language/en?next=/")
        assert "Run the checks" in web.get("/").body
    finally:
        served.server.stop()


def test_the_tables_sentences_are_translated_with_their_details() -> None:
    words = TableWords("fr")
    assert words("the table is busy (shuffling)") == "la table est occupée (état : mélange)"
    assert words("the board did not finish building within 49.1 s") == (
        "la carte n'a pas terminé (construction) en 49.1 s"
    )
    assert words("raising set A") == "levée du jeu A"
    assert words("throw 3+4 taken") == "lancer 3+4 pris en compte"
    # a sentence inside a sentence: each translated
    assert words(
        "not cleared, the cause is still there (DEADLINE: the board did not finish lifting "
        "within 7 s); press CLEAR FAULT to go on"
    ) == (
        "non effacé, la cause est toujours là (DEADLINE : la carte n'a pas terminé (levée) en "
        "7 s) ; press CLEAR FAULT to go on"
    )
    assert words("a sentence the table never says") == "a sentence the table never says"
    assert words("") == ""  # nothing said (gettext would give the catalogue's header)
    too_long = "the table is busy (" + "x" * MATCHED_AT_MOST + ")"
    assert words(too_long) == too_long  # shown as it comes, never matched
    assert TableWords("en")("the table is busy (shuffling)") == "the table is busy (shuffling)"


#: English words that no French sentence of the table holds
ENGLISH = re.compile(r"\b(the|while|press|check|then|board's|does not)\b")


def board_faults() -> Iterator[tuple[str, str]]:
    """Every fault the board can report, with each detail it names, where and when."""
    details = [*range(11), 0x20, 0x21, 0x30, 0xEE, codes.INTERNAL_START]
    for code in codes.FAULTS:
        for detail in details:
            for subsystem, phase in zip(codes.SUBSYSTEMS, [*codes.PHASES, 0], strict=False):
                said = "ImportError: no module named 'machine'"
                yield board_fault_words(code, subsystem, phase, detail, said)[1:]
    yield board_fault_words(codes.FAULT_INTERNAL, 0, 0, codes.INTERNAL_START)[1:]


def test_the_boards_faults_are_told_in_french_whole() -> None:
    words = TableWords("fr")
    told = 0
    for text, advice in board_faults():
        for english in (text, advice):
            french = words(english)
            assert french != english
            assert ENGLISH.search(french) is None, (english, french)
            told += 1
    assert told > 1000
    # one whole, with a wall, the subsystem and the phase each translated in its place
    _name, text, advice = board_fault_words(codes.FAULT_WALL_SHORT, codes.SUB_STACKER_HEAD, 2, 3)
    assert words(text) == (
        "il manque des tuiles à un mur (le mur Nord, tête d'empilage, en phase de construction "
        "des murs)"
    )
    assert words(advice) == (
        "comptez les tuiles du jeu ; cherchez une tuile restée dans le disque ou tombée sous la "
        "table, puis appuyez sur EFFACER LE DÉFAUT"
    )


def test_sentences_inside_one_another_are_matched_only_so_deep() -> None:
    words = TableWords("fr")
    deep = ", ".join(["the East wall"] * 12)
    french = words(deep)
    assert french.startswith("le mur Est, le mur Est, ")  # the first ones translated
    assert french.endswith("the East wall, the East wall")  # past the depth, as it came


def test_the_compiled_catalogue_is_the_po_file_compiled() -> None:
    assert (LOCALE / "fr.mo").read_bytes() == compiled("fr"), "run python -m station.lang"


def test_the_running_station_reads_its_words_without_babel() -> None:
    """Babel (36 MB of locale data) is a development tool: the station, its pages in French,
    never loads it."""
    code = (
        "import sys\n"
        "from station.service import Station\n"
        "from station.lang import TableWords, translations\n"
        "assert translations('fr').gettext('State') == 'État'\n"
        "assert TableWords('fr')('raising set A') == 'levée du jeu A'\n"
        "from station.web.page import Renderer\n"
        "Renderer()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'babel'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
