"""The station, like the gateway, imports only the API client, its watcher and the message
models they speak (tests/gateway/test_boundary.py), plus its web library and templates; and
the gateway, which keeps the floor, neither imports the station nor loads the web library."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.gateway.test_boundary import ALLOWED_OTHERS, ALLOWED_OURS, imports

STATION = Path(__file__).resolve().parents[2] / "station"
#: the web library and its templates; Babel, imported by station/lang.py's development
#: functions alone (tests/station/test_lang.py: the running station never loads it)
WEB_LIBRARIES = {"aiohttp", "jinja2", "markupsafe", "babel"}
#: what station/lang.py reads besides for the technician's commands and its catalogue maker
#: (development: `python -m station.lang`): a configuration's sentences and its keys'
#: descriptions, a rule-set profile's, a hand's score's, the audit log's checks', the
#: installer's and the firmware tools' sentences, which the commands say; only inside those
#: functions, which the running station never calls
CATALOGUE_ONLY = {
    "controller.firmware.words",
    "controller.service.config",
    "controller.service.config_words",
    "controller.service.install_words",
    "rules.profile_words",
    "rules.score_words",
    "rules.hand_words",
    "rules.record_words",
    "rules.game_words",
    "controller.audit.words",
}
CATALOGUE_FUNCTIONS = {"command_words", "passed_on_sentences"}
#: of those, what the running station loads anyway: a hand's refusals, with the rules' hand
#: (rules/hand.py), which the dealt states' models import
LOADED_WITH_THE_RULES = {"rules.hand_words"}


def test_only_the_api_client_its_models_and_the_web_library() -> None:
    wrong = []
    paths = sorted(STATION.glob("*.py")) + sorted((STATION / "web").glob("*.py"))
    assert len(paths) >= 8
    for path in paths:
        for name in imports(path):
            top = name.split(".")[0]
            if top in {"station", "__future__"} or top in sys.stdlib_module_names:
                continue
            if name in ALLOWED_OURS or top in ALLOWED_OTHERS | WEB_LIBRARIES:
                continue
            if path.name == "lang.py" and name in CATALOGUE_ONLY:
                continue  # inside the catalogue maker alone: the next test
            wrong.append(f"{path.relative_to(STATION)}: {name}")
    assert not wrong, wrong


def test_the_configuration_s_words_are_read_by_the_catalogue_maker_alone() -> None:
    tree = ast.parse((STATION / "lang.py").read_text(encoding="utf-8"))
    makers = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name in CATALOGUE_FUNCTIONS
    ]
    assert len(makers) == len(CATALOGUE_FUNCTIONS)
    inside = {id(node) for maker in makers for node in ast.walk(maker)}
    outside = [
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in CATALOGUE_ONLY
        and id(node) not in inside
    ]  # fmt: skip
    assert outside == []
    code = (
        "import sys, station.service, station.web.app\n"
        "print(sorted(m for m in %r if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code % (sorted(CATALOGUE_ONLY - LOADED_WITH_THE_RULES),)],
        capture_output=True, text=True,
        check=True, cwd=STATION.parent,
    )  # fmt: skip
    assert done.stdout.strip() == "[]"  # the running station loads neither


def test_the_gateway_loads_neither_the_station_nor_the_web_library() -> None:
    code = (
        "import sys, gateway.service\n"
        "print(sorted(m for m in ('aiohttp', 'jinja2', 'station') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        cwd=STATION.parent,
    )  # fmt: skip
    assert done.stdout.strip() == "[]"
