"""What the page shows, from the station's view of its table, rendered by Jinja templates.

One rendering path: the page at load and every live update are the same sections
(templates/sections.html, one macro each), so the page without JavaScript shows what the
live one does. Jinja escapes every value (autoescape), so a fault's words cannot become HTML.
Every word is the language's (station/lang.py): one template environment per language, with
that language's catalogue installed (Jinja's i18n extension, ``_()`` in the templates).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from station.lang import LANGUAGES, N_, Language, table_words_in, translations
from station.picture import svg
from station.view import Snapshot
from station.web.dealer import dealer_context
from station.web.diag import DiagReport

#: The two views: the technicians' page and the dealer's view.
View = Literal["page", "dealer"]
#: Each view's sections a live update replaces, by name (the templates' macros): a live
#: stream renders its own view's alone.
SECTIONS: dict[View, tuple[str, ...]] = {
    "page": ("summary", "picture", "counters", "versions", "faults"),
    "dealer": ("now", "walls"),
}
#: HELLO keys shown as versions, in this order, with their labels.
VERSION_KEYS = (
    ("firmware", N_("board firmware")),
    ("build", N_("board firmware build")),
    ("protocol", N_("protocol (the board's)")),
    ("serial", N_("board serial")),
)


def package_version() -> str:
    try:
        return importlib.metadata.version("mjtable")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed as a package)"


@dataclass(frozen=True)
class Viewer:
    """Who looks: the role, whether it may see faces and run the checks, its CSRF token."""

    role: str
    faces: bool
    may_diag: bool
    csrf: str
    may_bundle: bool = False  # the support bundle's download button
    may_command: bool = False  # the dealer's touch buttons and the dice entered by hand


@dataclass(frozen=True)
class TableInfo:
    number: str
    name: str
    version: str  # this station's mjtable package


def environment(lang: Language = "en") -> Environment:
    """The templates, in ``lang``."""
    env = Environment(
        loader=PackageLoader("station.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    env.install_gettext_translations(translations(lang), newstyle=True)  # type: ignore[attr-defined]
    env.globals["lang"] = lang
    # the table's words as they come: translated when the catalogue has them, then escaped
    env.filters["tr"] = table_words_in(lang)
    env.filters["when"] = when
    env.filters["sentence"] = sentence
    return env


def sentence(words: str) -> str:
    """Words as a sentence's start: the first letter in capitals, the rest as written."""
    return words[:1].upper() + words[1:]


def when(at: str | None) -> str:
    """An event's UTC time as people read it: ``2026-11-30 20:46:20 UTC``."""
    if not at:
        return ""
    return at.replace("T", " ").split(".")[0].removesuffix("Z") + " UTC"


def context(
    snapshot: Snapshot,
    viewer: Viewer,
    table: TableInfo,
    lang: Language = "en",
    view: View = "page",
) -> dict[str, Any]:
    """Everything the sections of ``view`` read, the words made in Python in ``lang``; the
    dealer's view draws the walls as tile backs, whatever the role."""
    words = translations(lang).gettext
    status = snapshot.status
    board: Mapping[str, Any] = (status.board or {}) if status is not None else {}
    faults = list(reversed(snapshot.faults))  # newest first
    versions = [(label, str(board[key])) for key, label in VERSION_KEYS if board.get(key)]
    picture = snapshot.picture
    faces = viewer.faces and view == "page"
    return {
        "table": table,
        "lang": lang,
        "view": view,
        "viewer": viewer,
        "status": status,
        "core_up": snapshot.core_connected,
        "refused": snapshot.refused,
        "faults": faults,
        "standing": sum(1 for f in faults if f.cleared_at is None),
        "versions": versions,
        "board": board,
        "picture": picture,
        "svg": Markup(svg(picture, faces=faces, _=words)),  # built with html.escape
        "faces_shown": faces and picture is not None and picture.faces is not None,
        "tr": words,  # a language's gettext, for the Python the templates call
        **dealer_context(snapshot, words),
    }


class Renderer:
    """The pages and their sections, in each language; a context says its own (``lang``)."""

    def __init__(self) -> None:
        self.envs = {lang: environment(lang) for lang in LANGUAGES}
        self._sections = {
            lang: env.get_template("sections.html").module for lang, env in self.envs.items()
        }

    def _macro(self, lang: Language, name: str) -> Callable[..., Any]:
        macro: Callable[..., Any] = getattr(self._sections[lang], name)
        return macro

    def section(self, name: str, ctx: Mapping[str, Any]) -> str:
        return str(self._macro(ctx["lang"], name)(ctx))

    def sections(self, ctx: Mapping[str, Any]) -> dict[str, str]:
        return {name: self.section(name, ctx) for name in SECTIONS[ctx["view"]]}

    def page(self, ctx: Mapping[str, Any], diag: DiagReport | None = None) -> str:
        sections = {name: Markup(html) for name, html in self.sections(ctx).items()}
        diag_html = Markup(self.diag(diag, ctx["lang"])) if diag is not None else None
        return (
            self.envs[ctx["lang"]]
            .get_template("page.html")
            .render(ctx, sections=sections, diag=diag, diag_html=diag_html)
        )

    def dealer(self, ctx: Mapping[str, Any]) -> str:
        """The dealer's view (templates/dealer.html): its sections are the page's."""
        sections = {name: Markup(html) for name, html in self.sections(ctx).items()}
        return self.envs[ctx["lang"]].get_template("dealer.html").render(ctx, sections=sections)

    def diag(self, report: DiagReport, lang: Language) -> str:
        return str(self._macro(lang, "diag")(report))

    def login(
        self, *, login_csrf: str, message: str | None, table: TableInfo, lang: Language
    ) -> str:
        return (
            self.envs[lang]
            .get_template("login.html")
            .render(login_csrf=login_csrf, message=message, table=table)
        )
