"""The technician's commands in French (cli/lang.py): `mjtable status`, the commands' results
and `mjtable diag` say every word of their own and of the table's in French with ``--lang fr``
or a French environment, the same lines as in English otherwise."""

from __future__ import annotations

import re

import pytest

from cli import build_parser
from cli.audit import audit_summary
from cli.client_words import format_event
from cli.diag_report import audit_lines, motor_line, sensor_lines
from cli.lang import ENGLISH, Phrasebook, chosen, environment_lang
from controller.cycle.diagnosis import motor_result, sensors
from protocol import codes
from protocol import messages as m
from tests.support.commands import mjtable

#: English words none of the French lines may hold (the protocol's names aside)
ENGLISH_WORDS = re.compile(
    r"\b(the|while|press|check|then|none|tiles|standing|reading|motor|limit|level|"
    r"waiting|cover|closed|refused|ok|chain holds)\b"
)
FRENCH = Phrasebook("fr")


def _english_left(lines: list[str]) -> list[str]:
    # the protocol's own names (TILE_COUNT, MOTOR_TEST) and the command lines stay as written
    return [
        line
        for line in lines
        if ENGLISH_WORDS.search(re.sub(r"\b[A-Z_]{3,}\b|mjtable [a-z -]+", "", line))
    ]


def test_the_language_is_the_option_then_the_environment_s_then_english() -> None:
    parser = build_parser()
    assert chosen(parser.parse_args(["status", "--lang", "fr"])) == "fr"
    assert environment_lang({"LANGUAGE": "fr:en", "LANG": "en_GB.UTF-8"}) == "fr"
    assert environment_lang({"LC_ALL": "", "LANG": "fr_FR.UTF-8"}) == "fr"
    assert environment_lang({"LANG": "de_DE.UTF-8"}) == "en"
    assert environment_lang({}) == "en"


def test_a_board_in_fault_is_diagnosed_in_french_with_its_details() -> None:
    currents = [0] * codes.MOTOR_COUNT
    currents[codes.MOTOR_CHAIN] = codes.NO_CURRENT
    currents[codes.MOTOR_DICE] = 380
    data = m.SensorData(
        codes.STATE_FAULT, codes.FAULT_TILE_COUNT, 0, (17, 16, 17, 17), 1, 30, currents, 245
    )
    report = sensors(data).model_dump()
    english = "\n".join(sensor_lines(report, ENGLISH))
    assert english == "\n".join(sensor_lines(report))  # English: the lines as they were
    assert "TILE_COUNT: the tile count at the reader does not match" in english
    lines = sensor_lines(report, FRENCH)
    said = "\n".join(lines)
    assert "  état         défaut : arrêtée sur un défaut\n" in said
    assert "  défaut       TILE_COUNT : le nombre de tuiles" in said
    assert "convoyeur à chaîne : pas de mesure (sa mesure de courant est en panne)" in said
    assert "moteur des dés 380 mA" in said and "24.5 °C" in said
    assert _english_left(lines) == []


@pytest.mark.parametrize(
    ("current", "french"),
    [
        (400, "bon (seuil d'effort"),
        (2000, "PAS BON, grippé ou bloqué : au-dessus de sa limite de 1700 mA pendant"),
        (1200, "PAS BON, en effort : au-dessus de son seuil d'effort de 1020 mA pendant"),
        (900, "PAS BON : la carte a arrêté l'essai"),
    ],
)
def test_each_verdict_of_a_motor_test_is_french(current: int, french: str) -> None:
    ok = current == 400
    entry = motor_result(
        codes.MOTOR_SHUFFLE_DISC, 1000, m.MotorResult(codes.MOTOR_SHUFFLE_DISC, current, int(ok))
    )
    line = motor_line(1, codes.MOTOR_COUNT, entry.model_dump(), FRENCH)
    assert line.startswith("  [1/9] disque de mélange ") and french in line, line
    assert _english_left([line]) == []


def test_a_refused_motor_test_says_why_in_french() -> None:
    refused = m.Refused(m.MotorTest.TYPE, codes.REFUSE_ESTOP_HELD, 0)
    entry = motor_result(codes.MOTOR_DICE, 1000, refused).model_dump()
    line = motor_line(9, codes.MOTOR_COUNT, entry, FRENCH)
    assert line == "  [9/9] moteur des dés         refusé : l'arrêt d'urgence est maintenu"


def test_the_audit_log_s_verdict_is_french(tmp_path: object) -> None:
    missing = audit_summary("/nonexistent/audit.jsonl", 5)
    lines = audit_lines(missing, FRENCH)
    assert lines[0] == "journal d'audit /nonexistent/audit.jsonl"
    assert lines[1].startswith("  verdict      illisible : ")


def test_diag_of_the_simulated_board_with_its_motors_is_french_throughout() -> None:
    done = mjtable("diag", "--sim", "--motors", "--lang", "fr")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "versions" and lines[3].startswith("carte sur ")
    assert "capteurs" in lines and "essais des moteurs, 1000 ms chacun" in lines
    tests = [line for line in lines if line.startswith("  [")]
    assert len(tests) == codes.MOTOR_COUNT and all(" bon (seuil d'effort " in t for t in tests)
    assert _english_left(lines) == [], "\n".join(lines)


AT = "2026-01-01T00:00:00.000Z"


@pytest.mark.parametrize(
    ("event", "french"),
    [
        (
            {"type": "phase", "cycle": None, "state": "ready", "previous": "building"},
            "phase         construction -> prête",
        ),
        (
            {"type": "progress", "cycle": "c-1", "phase": "shuffling", "percent": 40},
            "progress      mélange 40%",
        ),
        (
            {"type": "throw", "cycle": "c-1", "by": "S", "dice": [3, 4], "purpose": "wall",
             "source": "board"},
            "throw         S a lancé 3+4 = 7 pour ",
        ),
        (
            {"type": "fault", "code": "ESTOP", "source": "board", "phase": "shuffling",
             "message": "the emergency stop was pressed (cover/safety)",
             "advice": "make the table safe, release the emergency stop, then press CLEAR FAULT"},
            "ESTOP de board pendant mélange : ",
        ),
        ({"type": "fault_cleared", "state": "idle"}, "défaut effacé ; état au repos"),
        (
            {"type": "throw_wanted", "cycle": "c-1", "by": "E", "count": 2, "purpose": "wall"},
            "en attente du lancer de 2 dés par E pour ",
        ),
        ({"type": "dealt", "cycle": "c-2", "dealt": {"b": 1, "a": 2}}, "donne publiée (a, b)"),
        ({"type": "link", "up": True, "reason": "HELLO answered"}, "liaison avec la carte établie"),
        (
            {"type": "panel", "panel": {"connected": True, "serial": "P1"}},
            "panneau de boutons connecté (n° de série P1)",
        ),
        (
            {"type": "button", "action": "deal", "source": "panel", "accepted": False,
             "reason": "the next walls are not built yet: press SHUFFLE first"},
            "deal de panel refusé : ",
        ),
    ],
)  # fmt: skip
def test_watch_says_each_event_in_french(event: dict[str, object], french: str) -> None:
    line = format_event({"at": AT, **event}, FRENCH)
    english = format_event({"at": AT, **event})
    assert english == format_event({"at": AT, **event}, ENGLISH) and english != line
    assert line.startswith(AT) and french in line, line
    assert _english_left([line.replace("HELLO answered", "")]) == [], line


def test_the_demo_and_its_picture_are_french_throughout() -> None:
    done = mjtable("demo", "--speed", "0", "--seed", "3", "--lang", "fr")
    assert done.returncode == 0, done.stderr
    said = done.stderr.splitlines()
    assert said[0].startswith("mjtable demo: wenzhou sur la carte simulée à ")
    assert "  · E lance 3+4 (le mur désigné)" in said and "  · distribuée" in said
    assert said[-1].startswith("mjtable demo: 1 cycle(s) distribué(s) en ")
    picture = done.stdout.splitlines()
    assert picture[1] == "meneur E ; lancers : E 3+4, W 5+3"
    assert "mur W" in picture and any(line.startswith("  pile ") for line in picture)
    assert any(line.startswith("  E (meneur, 17) : ") for line in picture)
    assert _english_left(said + picture) == [], "\n".join(said + picture)
