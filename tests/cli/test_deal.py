"""`mjtable deal`: JSON and picture output, the two throw forms, errors, the schema file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cli as cli
from rules.deal import deal
from rules.dealt import DealtState, Throw, dealt_state_schema
from rules.profiles import load_profile
from tests.support.deals import shuffled_manifest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _only_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    # The dispatcher is the real one; only the list of subcommands is narrowed to this one.
    monkeypatch.setattr(cli, "SUBCOMMANDS", (cli.deal.register,))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(["deal", *argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def manifest_file(tmp_path: Path) -> Path:
    path = tmp_path / "walls.json"
    path.write_text(shuffled_manifest(load_profile("wenzhou"), 21).model_dump_json(), "utf-8")
    return path


def test_json_output(capsys: pytest.CaptureFixture[str], manifest_file: Path) -> None:
    status, out, err = run(
        capsys, "--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+6",
        "--manifest", str(manifest_file), "--json",
    )  # fmt: skip
    assert (status, err) == (0, "")
    data = json.loads(out)
    for key in ("variant", "leader", "throws", "designated_wall", "joker", "breach", "hands",
                "colline", "live_wall", "hand_positions", "colline_positions",
                "live_wall_positions", "manifest", "tile_set", "profile", "cycle_id"):  # fmt: skip
        assert key in data
    assert data["variant"] == "wenzhou" and data["leader"] == "E"
    assert data["throws"] == [{"by": "E", "dice": [3, 4]}, {"by": "W", "dice": [5, 6]}]
    assert data["designated_wall"] == "W"
    assert data["breach"] == {"wall": "S", "stack": 1, "tier": "bottom"}
    assert data["joker"]["position"] == {"wall": "W", "stack": 7, "tier": "top"}
    assert [len(data["hands"][s]) for s in "ESWN"] == [17, 16, 16, 16]
    assert len(data["colline"]) == 16 and len(data["live_wall"]) == 55
    manifest = shuffled_manifest(load_profile("wenzhou"), 21)
    expected = deal(
        load_profile("wenzhou"),
        manifest,
        "E",
        [Throw(by="E", dice=[3, 4]), Throw(by="W", dice=[5, 6])],
    )
    assert out == expected.to_json() + "\n"
    assert DealtState.model_validate(data) == expected


def test_picture_output(capsys: pytest.CaptureFixture[str], manifest_file: Path) -> None:
    status, out, _ = run(
        capsys, "--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+6",
        "--manifest", str(manifest_file),
    )  # fmt: skip
    assert status == 0
    lines = out.splitlines()
    assert "designated wall W; count 18 stacks; breach after S1 bottom" in lines
    joker = shuffled_manifest(load_profile("wenzhou"), 21).walls["W"][6][0]
    assert f"joker: {joker}, turned at W7 top" in lines
    wall_s = lines.index("wall S")
    assert lines[wall_s + 1].split()[:3] == ["stack", "1|", "2"]
    # S1 went to the colline, S2 and S3 to the leader E.
    assert lines[wall_s + 4].split()[1:4] == ["cc|", "EE", "EE"]
    wall_w = lines.index("wall W")
    top_row = lines[wall_w + 2].split()
    assert top_row[7] == f"{joker}*"
    assert any(line.startswith("  E (leader, 17): ") for line in lines)


def test_simplified_both_throw_forms(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "simple.json"
    path.write_text(shuffled_manifest(load_profile("simplified"), 5).model_dump_json(), "utf-8")
    _, short, _ = run(
        capsys, "--variant", "simplified", "--leader", "W", "--throws", "6,4+5",
        "--manifest", str(path), "--json",
    )  # fmt: skip
    status, full, err = run(
        capsys,
        "--variant",
        "simplified",
        "--throws",
        "3,5,6,2,4+5",
        "--manifest",
        str(path),
        "--json",
    )
    assert (status, err) == (0, "")
    a, b = json.loads(short), json.loads(full)
    assert a["hands"] == b["hands"] and a["leader"] == b["leader"] == "W"
    assert [t["by"] for t in b["throws"]] == ["E", "S", "W", "N", "W"]
    # With a tie: E and S tie on 5, re-throw 2 and 6, S is player A.
    _, tie, _ = run(
        capsys, "--variant", "simplified", "--throws", "5,5,3,1,2,6,3+4", "--manifest", str(path),
        "--json",
    )  # fmt: skip
    c = json.loads(tie)
    assert c["leader"] == "S" and c["designated_wall"] == "S"
    assert c["breach"] == {"wall": "S", "stack": 13, "tier": "bottom"}  # 6 + 3 + 4


def test_random_is_deterministic_per_seed(capsys: pytest.CaptureFixture[str]) -> None:
    outs = []
    for _ in range(2):
        status, out, err = run(capsys, "--variant", "sichuan", "--random", "--seed", "42", "--json")
        assert (status, err) == (0, "")
        outs.append(out)
    assert outs[0] == outs[1]
    data = json.loads(outs[0])
    state = deal(
        load_profile("sichuan"),
        DealtState.model_validate(data).manifest,
        data["leader"],
        [Throw.model_validate(t) for t in data["throws"]],
    )
    assert state.to_json() + "\n" == outs[0]
    _, other, _ = run(capsys, "--variant", "sichuan", "--random", "--seed", "43", "--json")
    assert other != outs[0]
    status, out, err = run(capsys, "--variant", "simplified", "--random")
    assert status == 0 and err.startswith("mjtable deal: seed ")
    assert "simplified (profile simplified 1)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--leader", "E"], "give --manifest FILE and --throws A+B[,C+D...], or --random"),
        (["--variant", "mahjong"], "unknown profile 'mahjong'"),
        (["--variant", "wenzhou", "--leader", "X", "--throws", "3+4,5+6", "--manifest", "M"],
         "unknown seat 'X'"),
        (["--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+x", "--manifest", "M"],
         "--throws: throw 2 '5+x' is not dice"),
        (["--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+7", "--manifest", "M"],
         "throw 2 (5+7): die 7 is out of range 1..6"),
        (["--variant", "wenzhou", "--leader", "E", "--throws", "3+4", "--manifest", "M"],
         "the throws are incomplete: W throws 2 dice for the breach"),
        (["--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+6"],
         "give --manifest FILE and --throws"),
        (["--variant", "wenzhou", "--throws", "3+4,5+6", "--manifest", "M"],
         "the leader must be named for wenzhou"),
        (["--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+6", "--manifest", "BAD"],
         "manifest: walls: wall S stack 2: unknown tile 'Z'"),
        (["--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+6", "--manifest", "FIVE"],
         "manifest: tile 1m appears 5 times, the set has 4"),
        (["--variant", "wenzhou", "--leader", "E", "--throws", "3+4,5+6", "--manifest", "nope"],
         "--manifest: no such file: nope"),
        (["--variant", "wenzhou", "--random", "--seed", "x"], "--seed: 'x' is not an integer"),
        (["--variant", "wenzhou", "--random", "--throws", "3+4,5+6"], "--random makes its own"),
        (["--variant", "simplified", "--random", "--leader", "E"], "the single-die round picks"),
        (["--variant", "wenzhou", "--random", "--tile-set", "C"], "--tile-set: 'C' is not A or B"),
        (["--variant", "simplified", "--leader", "E", "--throws", "3,5,6,2,4+5", "--manifest", "S"],
         "leader E does not match the throws"),
    ],
)  # fmt: skip
def test_errors_are_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    wenzhou = shuffled_manifest(load_profile("wenzhou"), 2).model_dump()
    files = {"M": wenzhou}
    bad = json.loads(json.dumps(wenzhou))
    bad["walls"]["S"][1][0] = "Z"
    files["BAD"] = bad
    five = json.loads(json.dumps(wenzhou))
    spot = next(st for st in five["walls"]["N"] if "1m" not in st)
    spot[0] = "1m"
    files["FIVE"] = five
    files["S"] = shuffled_manifest(load_profile("simplified"), 2).model_dump()
    args = []
    for a in argv:
        if a in files:
            path = tmp_path / f"{a}.json"
            path.write_text(json.dumps(files[a]), "utf-8")
            a = str(path)
        args.append(a)
    status, out, err = run(capsys, *args)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("mjtable deal: ")
    assert "Traceback" not in err
    assert message in err


def test_partly_unknown_manifest_is_accepted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = shuffled_manifest(load_profile("wenzhou"), 2).model_dump()
    data["walls"]["E"][6][0] = "?"
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(data), "utf-8")
    status, out, _ = run(
        capsys, "--variant", "wenzhou", "--leader", "E", "--throws", "1+4,1+1", "--manifest",
        str(path), "--json",
    )  # fmt: skip
    assert status == 0
    # E throws 1+4 = 5: his own wall; then 1+1: T = 7, E7 top is the first colline tile.
    assert json.loads(out)["colline"][0] == "?"


def test_schema_file_is_what_the_model_generates(capsys: pytest.CaptureFixture[str]) -> None:
    committed = (ROOT / "docs" / "schema" / "dealt-state.json").read_text("utf-8")
    assert committed == dealt_state_schema()
    status, out, _ = run(capsys, "--schema")
    assert status == 0 and out == committed
    schema = json.loads(committed)
    assert schema["title"] == "DealtState"
    assert {"variant", "leader", "throws", "breach", "hands", "live_wall"} <= set(
        schema["required"]
    )


def test_the_variant_defaults_to_wenzhou_as_for_demo_and_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "--random", "--seed", "3")
    assert status == 0 and out.startswith("wenzhou (profile wenzhou 1)")
