"""`mjtable hand` for the four variants: verdicts, readings, points, waits, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["hand", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_sichuan_self_drawn_win_with_payment(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys,
        "--variant",
        "sichuan",
        "123m 456m 789p 234s 5s",
        "--win",
        "5s",
        "--from",
        "wall",
        "--point",
        "0.50",
    )
    assert status == 0
    assert "verdict: win (sets and a pair)" in out
    assert "all chows: 1" in out
    assert "points: 2 per payer" in out
    assert "everyone still in the hand pays 2 = 1.00 EUR each" in out


def test_wenzhou_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys,
        "--variant",
        "wenzhou",
        "123m456m789p111s99sFE",
        "--joker",
        "F",
        "--win",
        "E",
        "--from",
        "wall",
        "--leader-streak",
        "1",
        "--json",
    )
    assert status == 0
    data = json.loads(out)
    assert data["verdict"] == "win"
    assert data["hand"]["joker"] == "F"
    assert [ln["name"] for ln in data["lines"]] == ["five sets and a pair", "leader's streak"]
    assert data["points"] == 2
    assert data["payment"] == "self-drawn: every player pays 2"
    assert any(True in g["jokers"] for g in data["decomposition"])


def test_wenzhou_table_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    table = tmp_path / "t.toml"
    table.write_text("five_sets = 7\n")
    status, out, _ = run(
        capsys,
        "--variant",
        "wenzhou",
        "123m456m789p111s99sFE",
        "--joker",
        "F",
        "--win",
        "E",
        "--table",
        str(table),
        "--json",
    )
    assert status == 0
    assert json.loads(out)["points"] == 7


def test_waits_of_a_hand_one_short(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--variant", "sichuan", "1112345678999m", "--waits")
    assert status == 0
    assert "waits on 1m 2m 3m 4m 5m 6m 7m 8m 9m" in out
    status, out, _ = run(capsys, "--variant", "sichuan", "1112345678999m", "--json")
    assert json.loads(out)["waits"] == [f"{n}m" for n in range(1, 10)]


def test_wsom_false_win(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--variant", "wsom", "EEE SSS WWW NNN CF")
    assert status == 0
    assert "verdict: false win" in out
    assert "points" not in out


def test_simplified_melds_and_bonus(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys,
        "--variant",
        "simplified",
        "111m 222m 999m CC 1f",
        "--melds",
        "5555m",
        "--win",
        "C",
        "--order",
        "3",
    )
    assert status == 0
    assert "score: 300" in out


def test_melds_syntax(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys,
        "--variant",
        "sichuan",
        "55s",
        "--melds",
        "123m, 4444m",
        "--melds",
        "[7777p], 222s",
        "--win",
        "5s",
        "--from",
        "wall",
    )
    assert status == 0
    assert "exposed kongs: +2" in out
    assert "concealed kongs: +3" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--variant", "mahjong", "1m"], "unknown variant"),
        (["--variant", "sichuan", "1m 2x"], "cannot read '2x'"),
        (["--variant", "sichuan", "123m E"], "honour"),
        (["--variant", "sichuan", "123m 456m 789p 234s 5s 5s 5s"], "irregular hand: 15 tiles"),
        (["--variant", "sichuan", "11111m 456m 789p 23s"], "5 copies of 1m"),
        (["--variant", "sichuan", "123m 456m 789p 234s 55s", "--waits"], "--waits needs"),
        (["--variant", "sichuan", "123m 456m 789p 234s 55s", "--joker", "5s"], "without jokers"),
        (["--variant", "wenzhou", "123m", "--melds", "124m"], "neither a chow"),
        (["--variant", "sichuan", "123m 456m 789p 234s 55s", "--win", "9s"], "not among"),
        (["--variant", "sichuan", "123m 456m 789p 234s 5s", "--point", "abc"], "--point"),
        (["--variant", "sichuan", "123m 456m 789p 234s 5s", "--order", "7"], "--order"),
        (["--variant", "sichuan", "123m 456m 789p 234s 5s", "--table", "x.toml"], "wenzhou only"),
    ],
)
def test_bad_input_is_one_line_and_status_two(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("mjtable hand: ")
    assert message in err


def test_installed_command_exit_status() -> None:
    exe = Path(sys.executable).with_name("mjtable")
    done = subprocess.run(
        [str(exe), "hand", "--variant", "sichuan", "1m 2m"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "irregular hand" in done.stderr


def test_heavenly_without_win_scores_like_the_hand_record(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The dealt hand counts as self-drawn: (Tout Pung 2 + 1) x 6, paid by everyone."""
    for extra in ((), ("--win", "6s"), ("--win", "6s", "--from", "wall")):
        status, out, _ = run(
            capsys, "--variant", "sichuan", "333m 444m 777p 222s 66s", "--heavenly", *extra
        )
        assert status == 0
        assert "Mah-Jong from the wall: +1" in out and "heavenly hand: x6" in out
        assert "points: 18 per payer" in out
        assert "payment: self-drawn: everyone still in the hand pays 18" in out


def test_a_third_win_in_a_row_is_the_last_the_streak_scores(
    capsys: pytest.CaptureFixture[str],
) -> None:
    hand = ("--variant", "wenzhou", "123m 456m 789p 111s 99s EE", "--joker", "F", "--win", "E")
    status, out, _ = run(capsys, *hand, "--leader-streak", "3")
    assert status == 0 and "leader's streak: x4" in out and "points: 8 per payer" in out


@pytest.mark.parametrize(
    ("melds", "source", "points"),
    [
        ("7777p", "discard", 2 + 2),  # a kong on the table: Tout Pung 2, exposed kong +2
        ("[7777p]", "discard", 2 + 3),
        ("777p", "robbed", 2 * 2),  # robbing a kong: Kong volé x2, no x4
    ],
)
def test_second_heaven_gives_nothing_after_a_kong(
    capsys: pytest.CaptureFixture[str], melds: str, source: str, points: int
) -> None:
    """Annex II: « Dieu gagne en second » ... « si un Kong a été effectué avant, il ne donne
    lieu à aucune attribution »: the hand is scored without the x4, and says why."""
    status, out, _ = run(
        capsys, "--variant", "sichuan", "333m 444m 222s 66s", "--melds", melds, "--win", "6s",
        "--from", source, "--second-heaven", "--json",
    )  # fmt: skip
    data = json.loads(out)
    assert status == 0 and data["verdict"] == "win"
    assert "Dieu gagne en second" not in [ln["name"] for ln in data["lines"]]
    assert data["points"] == points
    assert data["notes"] == [
        "won on the leader's first discard gives nothing: a kong was made before (annex II: « si "
        "un Kong a été effectué avant, il ne donne lieu à aucune attribution »)"
    ]
    status, out, _ = run(
        capsys, "--variant", "sichuan", "333m 444m 222s 66s 777p", "--win", "6s",
        "--second-heaven", "--json",
    )  # fmt: skip
    assert json.loads(out)["points"] == 2 * 4  # no kong: the x4 stands


def test_kong_glory_with_a_kong(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "--variant", "sichuan", "123m 777p 222s 55s", "--melds", "4444m", "--win", "5s",
        "--from", "kong",
    )  # fmt: skip
    assert status == 0
    assert "won on a kong's replacement: x2" in out and "points: 8 per payer" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--variant", "sichuan", "123m 456m 789p 234s 55s", "--win", "5s", "--from", "kong"],
         "a win on a kong replacement needs a kong in the hand"),
        (["--variant", "sichuan", "333m 444m 777p 222s 66s", "--heavenly", "--second-heaven"],
         "two different moments"),
        (["--variant", "sichuan", "333m 444m 777p 222s 66s", "--heavenly", "--win", "6s",
          "--from", "discard"], "complete before the first tile is drawn: it cannot be won on"),
        (["--variant", "sichuan", "333m 444m 777p 222s 66s", "--heavenly", "--win", "6s",
          "--from", "robbed"], "cannot be won by robbing a kong"),
        (["--variant", "wenzhou", "123m 456m 789p 111s 99s F EE", "--joker", "F", "--heavenly"],
         "--heavenly applies to sichuan only, not to a wenzhou hand"),
        (["--variant", "wsom", "123m 456m 789p 234s 55s", "--second-heaven"],
         "--second-heaven applies to sichuan only, not to a wsom hand"),
        (["--variant", "sichuan", "123m 456m 789p 234s 55s", "--robbed-kong-points", "0",
          "--leader-streak", "1"], "--leader-streak applies to wenzhou only"),
        (["--variant", "wenzhou", "123m 456m 789p 111s 99s F EE", "--joker", "F",
          "--not-announced"], "--not-announced applies to simplified only"),
        (["--variant", "simplified", "123m 456p 789s 123s EE", "--robbed-kong-points", "2"],
         "--robbed-kong-points applies to sichuan only, not to a simplified hand"),
        # a fourth win in a row has ended the game: no fifth win to score
        (["--variant", "wenzhou", "123m 456m 789p 111s 99s F EE", "--joker", "F",
          "--leader-streak", "4"], "--leader-streak 4: a leader who has won 4 hands in a row "
         "has already ended the game (« Si le même Leader gagne quatre manches de suite, la "
         "partie est terminée »): his streak before this win is 0 to 3"),
        (["--variant", "wenzhou", "123m 456m 789p 111s 99s F EE", "--joker", "F",
          "--leader-streak", "-1"], "--leader-streak -1: the leader's streak cannot be negative"),
        # « Dieu gagne »: complete before the first draw, so no kong was made
        (["--variant", "sichuan", "333m 444m 222s 66s", "--melds", "7777p", "--heavenly"],
         "a heavenly hand (« Dieu gagne ») is complete before the first tile is drawn from "
         "the wall, so it holds no kong"),
        (["--variant", "sichuan", "333m 444m 222s 66s", "--melds", "[7777p]", "--heavenly",
          "--win", "6s", "--from", "wall"], "so it holds no kong"),
    ],
)  # fmt: skip
def test_refusals_of_the_rules(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("mjtable hand: ")
    assert message in err
    assert "Traceback" not in err


def test_une_tuile_follows_the_builtin_profile(capsys: pytest.CaptureFixture[str]) -> None:
    """The simplified profile's Decision: a two-face wait needs no announcement, a one-face
    wait does (the other reading is tested on the rules, with a profile that says so)."""
    two_faces = ["--variant", "simplified", "111m 456p 789s 23s EE", "--win", "4s"]
    one_face = ["--variant", "simplified", "111m 456p 789s 234s E", "--win", "E"]
    _, out, _ = run(capsys, *two_faces, "--not-announced")
    assert "score: 105" in out
    _, out, _ = run(capsys, *one_face, "--not-announced")
    assert "waiting on one tile, not announced" in out and "score: 0" in out
    _, out, _ = run(capsys, *one_face)
    assert "score: 105" in out


def test_the_variant_defaults_to_wenzhou_as_for_demo_and_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tiles = ("123m 456m 789p 111s 99s EE", "--joker", "F", "--win", "E")
    assert run(capsys, *tiles) == run(capsys, "--variant", "wenzhou", *tiles)


def test_point_without_a_win_is_refused_not_ignored(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "123m 456m 789p 111s 99s EE", "--joker", "F", "--point", "0.5")
    assert status == 2 and out == ""
    assert err == (
        "mjtable hand: --point values a win's payments, and this hand pays nothing: give the "
        "winning tile and where it came from (--win TILE --from discard|wall|kong|robbed)\n"
    )
    won = run(capsys, "123m 456m 789p 111s 99s EE", "--joker", "F", "--win", "E", "--point", "0.5")
    assert won[0] == 0 and "= 1.0 EUR each" in won[1]


#: Lines the seeds name in English already (Sichuan's annex II writes these so).
ENGLISH_NAMES = {"2, 5, 8 Only", "Tail 1-9", "Full flush", "Mah-Jong"}


def test_scoring_lines_are_said_in_english(capsys: pytest.CaptureFixture[str]) -> None:
    """`mjtable hand` words every scoring line in English (the seeds' French names stay the
    lines' codes, in the JSON's ``name``); every line the French-named scorers write has its
    English words, and docs/rules.md lists them."""
    import ast

    from rules.scoring.common import LINE_WORDS

    root = Path(__file__).resolve().parents[2]
    written = {
        node.args[0].value
        for scorer in ("sichuan", "simplified")
        for node in ast.walk(ast.parse((root / "rules/scoring" / f"{scorer}.py").read_text()))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "Line"
        and isinstance(node.args[0], ast.Constant)
    }
    assert written - ENGLISH_NAMES == set(LINE_WORDS)
    hands = [
        ("--variant", "sichuan", "55s", "--melds", "123m, 4444m", "--melds", "777p, 222s",
         "--win", "5s", "--from", "wall"),
        ("--variant", "sichuan", "333m 444m 777p 222s 66s", "--heavenly"),
        ("--variant", "sichuan", "11223355667799s", "--win", "9s"),
        ("--variant", "simplified", "1m2m3m 4m5m6m 7m8m9m 1p1p1p E", "--win", "E", "--from",
         "wall"),
        ("--variant", "simplified", "EEE SSS WWW C", "--melds", "FFFF", "--win", "C"),
    ]  # fmt: skip
    shown = []
    for hand in hands:
        status, out, err = run(capsys, *hand)
        assert status == 0, err
        lines = [line.strip() for line in out.splitlines() if line.startswith("  ")]
        lines = [line for line in lines if not line.startswith("(best of")]
        shown += [line.split(":")[0] for line in lines]
        data = json.loads(run(capsys, *hand, "--json")[1])
        assert [ln["words"] for ln in data["lines"]] == [line.split(":")[0] for line in lines]
    french = [name for name in shown if name in LINE_WORDS]
    assert shown and french == []
    rules = (root / "docs" / "rules.md").read_text(encoding="utf-8")
    for name, words in LINE_WORDS.items():
        assert f"| {name} | {words} |" in rules, name


def test_a_hand_is_said_in_french_with_the_seeds_names(capsys: pytest.CaptureFixture[str]) -> None:
    """`mjtable hand --lang fr`: the report's own words, the verdict and the shape, each line
    (by the seeds' own name where they name it, Sichuan's annex II's English ones as written),
    its note, who pays; a false win says why in French."""
    status, out, _ = run(
        capsys,
        "--variant", "sichuan", "55s", "--melds", "123m, 4444m", "--melds", "777p, 222s",
        "--win", "5s", "--from", "wall", "--point", "0.50", "--lang", "fr",
    )  # fmt: skip
    assert status == 0
    lines = out.splitlines()
    assert "tuile gagnante : 5s, venue : mur" in lines
    assert "verdict : victoire (éléments et une paire)" in lines
    assert "  1 Chow et 3 Pungs : 1" in lines
    assert "  Mah-Jong tiré du mur : +1  (tirée du mur)" in lines
    assert "  Kong exposé : +2  (1 x 2)" in lines
    assert "  Une tuile restante : x2  (une seule tuile restait en main)" in lines
    assert (
        "paiement : tirée du mur : chaque joueur encore dans la partie paie 8 = 4,00 EUR chacun"
        in lines
    )

    status, out, _ = run(capsys, "--variant", "sichuan", "222m 555m 888p 222s 55s", "--lang", "fr")
    assert "  2, 5, 8 Only : 4  (remplace Tout Pung)" in out.splitlines()

    status, out, _ = run(
        capsys, "--variant", "wenzhou", "--joker", "5s", "123m 456m 789m 123p 456p 5p",
        "--win", "5p", "--leader-streak", "1", "--lang", "fr",
    )  # fmt: skip
    lines = out.splitlines()
    assert "  cinq éléments et une paire : 1" in lines
    assert "  série du Leader : x2  (une série de 1)" in lines
    assert "paiement : défausse : seul le joueur qui s'est défaussé paie 4" in lines

    status, out, _ = run(capsys, "--variant", "wsom", "EEE SSS WWW NNN CF", "--lang", "fr")
    assert out.splitlines()[-2:] == [
        "verdict : fausse victoire",
        "remarque : aucune main gagnante, régulière ou irrégulière",
    ]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("--variant", "sichuan", "12x"),
            "impossible de lire '12x' à '12x' : il faut des tuiles comme 1m 2p 3s E C, ou des "
            "suites comme 123m EEE",
        ),
        (
            ("--variant", "sichuan", "123m 456m 789p 234s 5s 5s 5s"),
            "main irrégulière : 15 tuiles là où les règles sichuan en demandent 14 (trop) ; "
            "pénalité : le joueur remet aussitôt sa main au bon nombre de tuiles et ne peut "
            "plus prendre de défausse avant son prochain tirage dans le mur",
        ),
        (
            ("--variant", "sichuan", "EEE 456m 789p 234s 5s"),
            "la main : E est un Honneur, absent du jeu de 108 tuiles des règles sichuan",
        ),
        (
            ("--variant", "sichuan", "456m 789p 234s 5s", "--melds", "1m 2m 4m"),
            "combinaison 1m 2m 4m : ni un Chow (trois tuiles consécutives d'une même famille), "
            "ni un Pung",
        ),
        (("--variant", "wenzhou", "123m"), "les règles wenzhou demandent la face du Joker "
         "(la tuile retournée) : --joker FACE"),
    ],
)  # fmt: skip
def test_a_refused_hand_is_said_in_french(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], said: str
) -> None:
    """The rules' refusals of a hand come in the command's language, each whole (the
    sentence that names what it is about, not a more general one of another part)."""
    status, _, err = run(capsys, *args, "--lang", "fr")
    assert status == 2
    assert err == f"mjtable hand: {said}\n"
