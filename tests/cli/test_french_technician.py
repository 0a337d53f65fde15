"""The technician's other commands in French: the refusals of every command (argparse's own
and the commands'), `config check`, `audit`, `firmware`, `install`, `station token`, and what
a command says when the service cannot be reached; the same lines in English as before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli import main
from cli.errors import UsageError, Word
from cli.lang import Phrasebook
from cli.parsing import PARSER_WORDS, refusal_in
from tests.audit.chains import write_some
from tests.cli.test_french import _english_left as _english_in_words

CONFIG = """\
[table]
number = 7
name = "Table 7"

[board]
port = "/dev/serial0"

[rules]
profile = "wenzhou"
"""


@pytest.fixture
def french_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A French environment, as a technician's terminal on a French table."""
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "fr_FR.UTF-8")


def _english_left(lines: list[str]) -> list[str]:
    # the options' names (--motor-ms) and the paths (the checkout's, a test's) stay as written
    return _english_in_words([re.sub(r"--[a-z-]+|\S*/\S*", "", line) for line in lines])


def _said(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], list[str]]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out.splitlines(), err.splitlines()


def test_a_refusal_is_its_words_with_their_details_in_either_language() -> None:
    refusal = UsageError(
        "%(path)s is %(kind)s, not a regular file",
        about="--config",
        path="/x",
        kind=Word("a socket"),
    )
    assert str(refusal) == "--config: /x is a socket, not a regular file"
    french = refusal.said(Phrasebook("fr")._)
    assert french == "--config: /x est une socket, pas un fichier ordinaire"


@pytest.mark.parametrize(
    ("args", "english", "french"),
    [
        (
            ["deal", "--leader"],
            "mjtable deal: argument --leader: expected one argument; see mjtable deal --help",
            "mjtable deal: argument --leader : attendu un argument ; voir mjtable deal --help",
        ),
        (
            ["firmware"],
            "mjtable firmware: choose one of: build, image, flash, verify; see mjtable firmware "
            "--help",
            "mjtable firmware: choisissez parmi : build, image, flash, verify ; voir mjtable "
            "firmware --help",
        ),
        (
            ["diag", "--motor-ms", "x"],
            "mjtable diag: argument --motor-ms: invalid int value: 'x'; see mjtable diag --help",
            "mjtable diag: argument --motor-ms : valeur int non valable : 'x' ; voir mjtable "
            "diag --help",
        ),
        (
            ["status", "--frob"],
            "mjtable status: unrecognized arguments: --frob; see mjtable status --help",
            "mjtable status: arguments non reconnus : --frob ; voir mjtable status --help",
        ),
    ],
)
def test_argparse_refusals_follow_the_environment_then_the_option(
    args: list[str],
    english: str,
    french: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LANGUAGE", "en")
    with pytest.raises(SystemExit) as ended:
        main(args)
    assert ended.value.code == 2
    assert capsys.readouterr().err == english + "\n"
    with pytest.raises(SystemExit):
        main([*args, "--lang=fr"])  # asked for on the command line, even where refused
    assert capsys.readouterr().err == french + "\n"
    monkeypatch.setenv("LANGUAGE", "fr")
    with pytest.raises(SystemExit):
        main(args)
    assert capsys.readouterr().err == french + "\n"


def test_every_refusal_of_the_parser_has_its_french() -> None:
    for words in PARSER_WORDS:
        line = refusal_in("fr", words, "mjtable")
        assert line != refusal_in("en", words, "mjtable"), words


@pytest.mark.usefixtures("french_terminal")
@pytest.mark.parametrize(
    ("args", "french"),
    [
        (["diag", "--motor-ms", "0", "--sim"], "--motor-ms doit aller de 1 à 10000"),
        (["config", "check"], "donnez un fichier de configuration FILE, ou --profile PROFILE"),
        (["audit", "verify", "/nonexistent/log"], "pas de journal d'audit à /nonexistent/log"),
        (["run", "--config", "/nonexistent/c.toml"], "pas de configuration à /nonexistent/c.toml"),
        (["station", "token", "--role", "boss"], "--role: attendu l'un de viewer, dealer, "),
        (["throw", "0+3"], "'0+3': un dé montre 1 à 6 (20 au plus)"),
        (["deal", "--random", "--tile-set", "C"], "--tile-set: 'C' n'est ni A ni B"),
        (["hand", "--order", "7", "E1"], "--order ne s'applique qu'à simplified, pas à une main"),
        (["game", "show", "--dir", "/nonexistent/g", "--lang", "fr"], "/nonexistent/g n'existe"),
    ],
)
def test_a_command_s_refusal_is_one_french_line(
    args: list[str], french: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _said(capsys, *args)
    assert status == 2 and out == []
    assert len(err) == 1 and french in err[0], err
    assert _english_left(err) == []


@pytest.mark.usefixtures("french_terminal")
def test_a_service_that_does_not_answer_is_said_in_french(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _, err = _said(capsys, "status", "--socket", str(tmp_path / "api.sock"))
    assert status == 3
    assert err == [
        f"mjtable status: aucun service mjtable ne répond sur {tmp_path / 'api.sock'} : "
        "est-il lancé ? (systemctl status mjtable)"
    ]
    status, _, err = _said(capsys, "shuffle", "--socket", str(tmp_path))
    assert status == 3
    assert err[0].startswith(f"mjtable shuffle: {tmp_path} n'est pas une socket mais un répertoire")


def test_config_check_in_french(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = tmp_path / "config.toml"
    good.write_text(CONFIG)
    status, out, _ = _said(capsys, "config", "check", str(good), "--prefix", str(tmp_path))
    assert status == 0 and out[0] == f"{good}: valid"
    assert "  board      /dev/serial0 at 115200 baud" in out
    status, out, _ = _said(
        capsys, "config", "check", str(good), "--prefix", str(tmp_path), "--lang", "fr"
    )
    assert status == 0 and out[0] == f"{good} : valable"
    assert "  board      /dev/serial0 à 115200 bauds" in out
    assert "  audit      /var/lib/mjtable/audit.jsonl (rotation à 16777216 octets)" in out
    bad = tmp_path / "bad.toml"
    bad.write_text("table = \n")
    status, out, err = _said(capsys, "config", "check", str(bad), "--lang", "fr")
    assert status == 1 and out == []
    assert err[0].startswith(f"{bad}: TOML non valable : ")
    assert err[1] == f"{bad} : non valable (1 problème)"


BAD_CONFIG = """\
[table]
number = 70000
display_name = "x"

[board]
port = "dev/x"

[api]
mode = 0o666
"""


def test_a_configuration_s_problems_in_french_their_keys_as_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(BAD_CONFIG)
    status, _, english = _said(capsys, "config", "check", str(bad))
    assert status == 1
    assert f"{bad}: board.port: expected a device path or a pyserial URL, got 'dev/x': a " \
        "device path is absolute, e.g. /dev/serial0" in english  # fmt: skip
    status, _, err = _said(capsys, "config", "check", str(bad), "--lang", "fr")
    assert status == 1 and len(err) == len(english) == 6
    assert err == [
        f"{bad}: table.number : attendu un nombre entier de 1 à 9999, reçu 70000",
        f"{bad}: table.display_name : clé inconnue ; attendu l'une de : number, name",
        f"{bad}: board.port : attendu un chemin de périphérique ou une URL pyserial, reçu "
        "'dev/x' : un chemin de périphérique est absolu, par ex. /dev/serial0",
        f"{bad}: rules : manquant ; attendu une section [rules]",
        f"{bad}: api.mode : attendu un mode sans droit d'écriture pour les autres, reçu 0o666 : "
        "n'importe qui sur la machine pourrait commander la table (utilisez 0o660 et api.group)",
        f"{bad} : non valable (5 problèmes)",
    ]
    # a command that reads it says its first problem, and how many more
    status, _, err = _said(capsys, "run", "--config", str(bad), "--lang", "fr")
    assert status == 2
    assert err == [
        "mjtable run: table.number : attendu un nombre entier de 1 à 9999, reçu 70000 (4 autres "
        "problèmes ; `mjtable config check` les liste tous)"
    ]
    status, _, err = _said(capsys, "run", "--config", str(bad))
    assert err == [
        "mjtable run: table.number: expected a whole number from 1 to 9999, got 70000 (4 more "
        "problems; `mjtable config check` lists them all)"
    ]


def test_a_configuration_s_warnings_in_french(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    good = tmp_path / "config.toml"
    good.write_text(CONFIG + '[api]\nsocket = "/nonexistent/api.sock"\n')
    _, _, err = _said(
        capsys, "config", "check", str(good), "--prefix", str(tmp_path), "--lang", "fr"
    )
    assert "avertissement : api.socket : le répertoire /nonexistent n'existe pas" in err
    assert _english_left(err) == [], err


def test_audit_verify_and_keygen_in_french_their_verdicts_codes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    write_some(log)
    status, english, _ = _said(capsys, "audit", "verify", str(log))
    status_fr, out, _ = _said(capsys, "audit", "verify", str(log), "--lang", "fr")
    assert status == status_fr == 0
    assert english[0].startswith("OK: 6 records (seq 0..5) in 1 file(s)")
    assert out[0].startswith("OK: 6 enregistrements (seq 0..5) dans 1 fichier(s) (audit.jsonl)")
    # the verdicts' first words are codes, the same in every language (docs/audit.md)
    assert out[1].startswith("UNSEALED-VERIFIED seulement : la chaîne tient")
    assert out[2] == english[-1].replace("head ", "tête ")
    status, out, _ = _said(capsys, "audit", "keygen", str(tmp_path / "k"), "--lang", "fr")
    assert status == 0
    key = tmp_path / "k"
    assert (
        out[0] == f"clé de scellement créée : {key} (époque 0) ; indiquez ce chemin dans audit.key"
    )
    assert out[1].startswith("CLÉ DE VÉRIFICATION")
    assert _english_left(out[:2] + out[3:]) == []


def test_firmware_build_in_french(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = _said(
        capsys, "firmware", "build", "--out", str(tmp_path / "b"), "--lang", "fr"
    )
    assert status == 0
    assert out[0].startswith("construction des fichiers de la carte depuis ")
    assert re.fullmatch(
        rf"\d+ fichiers construits dans {re.escape(str(tmp_path / 'b'))} : micrologiciel "
        r"\S+, build [0-9a-f]{64}",
        out[-1],
    ), out[-1]


def test_install_dry_run_in_french(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = _said(
        capsys, "install", "--prefix", str(tmp_path), "--dry-run", "--lang", "fr"
    )
    assert status == 0
    assert out[0] == "essai à blanc : rien n'est modifié ; voici ce qui serait fait"
    assert "ensuite, sur la table :" in out and "puis vérifiez :" in out
    assert "carte     /dev/serial0, l'UART du Pi (ttyAMA / ttyS0)" in out
    assert f"créer     {tmp_path}/etc/mjtable/config.toml" in out
    notes = [line for line in out if line.startswith("remarque : ")]
    assert len(notes) >= 3, out
    said = [line for line in out if not line.startswith("  ")]  # the commands stay as written
    # and so do the commands quoted and the units' names
    assert _english_left([re.sub(r"`[^`]*`|\S+\.service", "", line) for line in said]) == []


def test_the_firmware_tools_refusals_in_french(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _, err = _said(
        capsys, "firmware", "flash", "--port", str(tmp_path / "ttyACM9"), "--lang", "fr"
    )
    assert status == 1
    assert err == [
        f"mjtable firmware: pas de port {tmp_path / 'ttyACM9'} : la carte est-elle branchée en "
        "USB ? (ls /dev/ttyACM* liste les ports)"
    ]
    # the image build's refusals and steps, as the command passes them on
    from controller.firmware import words

    said = Phrasebook("fr").table(words.OUT_IS_DIRECTORY.format(out=tmp_path))
    assert said == (
        f"{tmp_path} est un répertoire : donnez le fichier UF2 à écrire, par ex. {tmp_path}/x.uf2"
    )
    step = words.BUILDING.format(work=tmp_path, log=tmp_path / "build.log")
    assert Phrasebook("fr").table(step) == (
        f"construction de MicroPython dans {tmp_path} (1 à 4 minutes ; son journal : "
        f"{tmp_path}/build.log)"
    )


BAD_PROFILE = """\
base = "wenzhou"
counting = "tiles"
name = "a b"

[dice]
dice = 9

[deal]
steps = []
"""


def test_a_rule_set_profile_s_problems_in_french_their_fields_as_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(BAD_PROFILE)
    status, _, english = _said(capsys, "config", "check", "--profile", str(bad))
    assert status == 1
    assert english == [
        f"profile {bad}: name: String should match pattern '^[A-Za-z0-9][A-Za-z0-9_.-]*$'",
        f"profile {bad}: counting: Input should be 'pair' or 'tile'",
        f"profile {bad}: dice.dice: Input should be less than or equal to 4",
        f"profile {bad}: deal.steps: Tuple should have at least 1 item after validation, not 0",
        f"{bad}: not valid (4 problems)",
    ]
    status, _, err = _said(capsys, "config", "check", "--profile", str(bad), "--lang", "fr")
    assert status == 1
    assert err == [
        f"profil {bad} : name : le texte doit suivre le motif '^[A-Za-z0-9][A-Za-z0-9_.-]*$'",
        f"profil {bad} : counting : doit valoir 'pair' ou 'tile'",
        f"profil {bad} : dice.dice : doit être inférieur ou égal à 4",
        f"profil {bad} : deal.steps : doit avoir au moins 1 élément, pas 0",
        f"{bad} : non valable (4 problèmes)",
    ]
    # what a profile must hold together, said with the field it is about
    bad.write_text('base = "wenzhou"\n[colline]\nsize = 100\n')
    _, _, english = _said(capsys, "config", "check", "--profile", str(bad))
    _, _, err = _said(capsys, "config", "check", "--profile", str(bad), "--lang", "fr")
    assert english[0] == (
        f"profile {bad}: colline.size: 100 tiles, more than the 71 left after the deal of 65"
    )
    assert err[0] == (
        f"profil {bad} : colline.size : 100 tuiles, plus que les 71 qui restent après la "
        "distribution de 65"
    )


@pytest.mark.parametrize(
    "profile",
    [
        'base = "wenzhou"\ntiles = 108\n',
        'base = "simplified"\n[breach]\nlift_to = [1, 1]\n',
        'base = "wenzhou"\n[announce]\nune_tuile = "ready"\n',
        'base = "wenzhou"\n[replacement]\nsource = "live_end"\n',
        'base = "sichuan"\n[joker]\nkind = "indicator"\n[dice]\nprocedure = "single_die_round"\n',
        'base = "wenzhou"\nbase2 = 1\n[layout]\nall = [2]\nE = [2]\n',
        'base = "wenzhou"\n[dice]\ndice = inf\nfaces = 1e30\n',
        "",
        "tile_set = 3\n",
        "base = 5\n",
    ],
)
def test_every_problem_of_a_profile_reads_french(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, profile: str
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(profile)
    status, _, english = _said(capsys, "config", "check", "--profile", str(bad))
    assert status == 1
    status, _, err = _said(capsys, "config", "check", "--profile", str(bad), "--lang", "fr")
    assert status == 1 and len(err) == len(english)
    assert all(line.startswith(("profil ", f"{bad} :")) for line in err), err
    # the profile's keys stay as the file writes them: "mais tiles indique 108"
    keys = [
        re.sub(r"(mais|de|garder|écrire) tiles\b|^profil \S* : [\w.]+ : ", "", line) for line in err
    ]
    assert _english_left(keys) == [], err
    english_words = re.compile(r"\b(should|than|needs?|only|past|given|keep|expected|levels)\b")
    assert [line for line in keys if english_words.search(line)] == [], err
    for english_line, french_line in zip(english, err, strict=True):  # what is wrong, said
        assert english_line.rpartition(": ")[2] != french_line.rpartition(" : ")[2]


def test_a_profile_s_keys_and_paths_stay_as_written_in_french(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """ "dice" is the key of the file, not the dice: the field a problem is about, and the
    file's path, are never translated; the rule sets' names neither."""
    empty = tmp_path / "dice.toml"
    empty.write_text("")
    _, _, err = _said(capsys, "config", "check", "--profile", str(empty), "--lang", "fr")
    assert f"profil {empty} : dice : champ requis" in err
    status, _, err = _said(capsys, "run", "--sim", "--variant", "foo", "--lang", "fr")
    assert status == 2 and len(err) == 1
    assert "wenzhou, sichuan, wsom, simplified ou le chemin d'un fichier de profil TOML" in err[0]
    assert "caractères" not in err[0]  # whole: an apostrophe inside a word is not a quote


def _broken(lines: list[bytes], how: str) -> list[bytes]:
    """The log's lines broken one way."""
    if how == "line":  # a line that is not a record
        return [lines[0], b'{"seq": 1}', *lines[2:]]
    if how == "gap":  # a record missing
        return [lines[0], *lines[2:]]
    if how == "altered":  # a record's data changed: its own hash no longer matches
        return [lines[0], lines[1].replace(b'"kind":"', b'"kind":"x', 1), *lines[2:]]
    if how == "reordered":
        return [lines[0], lines[2], lines[1], *lines[3:]]
    if how == "json":  # a line cut inside its JSON
        return [lines[0], b'{"seq":2,', *lines[1:]]
    return lines


@pytest.mark.parametrize("how", ["line", "gap", "altered", "reordered", "json", "torn"])
def test_a_broken_audit_log_is_said_in_french(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, how: str
) -> None:
    from tests.audit.chains import rewrite

    log = tmp_path / "audit.jsonl"
    rewrite(log, _broken(write_some(log), how))
    if how == "torn":  # a last line without its newline: the table stopped while writing it
        with log.open("ab") as file:
            file.write(b'{"cycle":"c-1","da')
    status, english, _ = _said(capsys, "audit", "verify", str(log))
    status_fr, french, _ = _said(capsys, "audit", "verify", str(log), "--lang", "fr")
    assert status == status_fr == 1
    broke = [line for line in french if line.startswith("BREAK")]
    assert broke and all(" ligne " in line for line in broke), french
    words = re.compile(
        r"\b(line|record|records|missing|expected|found|not|does|the|at|column|torn|written"
        r"|them|bytes)\b"
    )
    left = [re.sub(r"\b(seq|prev|hash|data|kind|time|torn_tail)\b", "", line) for line in broke]
    assert [line for line in left if words.search(line)] == [], (english, french)
