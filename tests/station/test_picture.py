"""The table's picture: four walls as the dealt state's manifest builds them, the breach and the
joker where the deal put them, the ring's geometry as docs/table.md draws it, and no face
unless asked."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from controller.cycle.reports import DealtEvent
from rules.deal import deal
from rules.dice import throws_from_dice
from rules.profiles import load_profile
from rules.words import SEATS, seat_at
from station.picture import Picture, picture_of, svg
from tests.support.deals import shuffled_manifest

NS = {"s": "http://www.w3.org/2000/svg"}
TILE = re.compile(r"\b([1-9][mps]|[1-8]f)\b")


def dealt_event(variant: str, dice: list[list[int]], seed: int = 5) -> DealtEvent:
    profile = load_profile(variant)
    throws = throws_from_dice(profile, "E", dice)
    state = deal(profile, shuffled_manifest(profile, seed), "E", throws, cycle_id="c-000042")
    return DealtEvent(at="2026-11-30T20:46:20.975Z", cycle="c-000042", dealt=state)


def parse(text: str) -> ET.Element:
    return ET.fromstring(text)


def box(rect: ET.Element) -> tuple[float, float, float, float]:
    x, y = float(rect.get("x", 0)), float(rect.get("y", 0))
    return x, y, x + float(rect.get("width", 0)), y + float(rect.get("height", 0))


def stacks_of(root: ET.Element, wall: str) -> list[ET.Element]:
    (group,) = root.findall(f"s:g[@data-wall='{wall}'][@class='wall']", NS)
    rects = [r for r in group.findall("s:rect", NS) if "stack" in r.get("class", "").split()]
    return sorted(rects, key=lambda r: int(r.get("data-stack", 0)))


def all_text(root: ET.Element) -> str:
    return " ".join(root.itertext())


@pytest.mark.parametrize(
    ("variant", "dice", "stacks", "half"),
    [("wenzhou", [[3, 4], [5, 6]], 17, False), ("sichuan", [[2, 5], [4, 1]], 14, True)],
)
def test_four_walls_the_breach_and_the_joker_without_faces(
    variant: str, dice: list[list[int]], stacks: int, half: bool
) -> None:
    event = dealt_event(variant, dice)
    dealt = event.dealt
    picture = picture_of(event, faces=False)
    assert picture.faces is None and picture.joker_face is None  # nothing kept to leak
    root = parse(svg(picture, faces=True))  # even asked: a picture without faces has none
    for seat in SEATS:
        rects = stacks_of(root, seat)
        assert [int(r.get("data-stack", 0)) for r in rects] == list(range(1, stacks + 1))
        halves = ["half" in r.get("class", "") for r in rects]
        assert halves == [len(s) == 1 for s in dealt.manifest.walls[seat]]
        assert halves[-1] is half  # Sichuan: the single tile at the wall's left end
    (breach,) = root.findall("s:g[@class='breach']", NS)
    assert (breach.get("data-wall"), breach.get("data-stack"), breach.get("data-tier")) == (
        dealt.breach.wall,
        str(dealt.breach.stack),
        dealt.breach.tier,
    )
    jokers = root.findall("s:g[@class='joker']", NS)
    if dealt.joker is None:
        assert jokers == []
    else:
        (joker,) = jokers
        pos = dealt.joker.position
        assert (joker.get("data-wall"), joker.get("data-stack")) == (pos.wall, str(pos.stack))
        (circle,) = joker.findall("s:circle", NS)
        x0, y0, x1, y1 = box(stacks_of(root, pos.wall)[pos.stack - 1])
        assert x0 < float(circle.get("cx", 0)) < x1 and y0 < float(circle.get("cy", 0)) < y1
    assert root.findall(".//s:text[@class='face']", NS) == []
    assert TILE.findall(all_text(root)) == []
    assert "drawn as backs" in all_text(root)


def test_faces_only_when_kept_and_asked() -> None:
    event = dealt_event("wenzhou", [[3, 4], [5, 6]])
    picture = picture_of(event, faces=True)
    shown = parse(svg(picture, faces=True))
    faces = shown.findall(".//s:text[@class='face']", NS)
    assert len(faces) == 4 * 17
    walls = event.dealt.manifest.walls
    assert faces[0].text == "/".join(walls["E"][0])
    joker = event.dealt.joker
    assert joker is not None and joker.face in all_text(shown)
    hidden = parse(svg(picture, faces=False))  # a role that may not see them
    assert hidden.findall(".//s:text[@class='face']", NS) == []
    assert TILE.findall(all_text(hidden)) == []


def centre(rect: ET.Element) -> tuple[float, float]:
    x0, y0, x1, y1 = box(rect)
    return (x0 + x1) / 2, (y0 + y1) / 2


def test_the_ring_runs_leftward_and_the_breach_opens_toward_the_next_stack() -> None:
    root = parse(
        svg(picture_of(dealt_event("wenzhou", [[3, 4], [5, 6]]), faces=False), faces=False)
    )
    for w in range(4):
        seat, before = seat_at(w), seat_at(w - 1)
        # the left end of wall w touches the right end of wall w-1 (docs/table.md section 2)
        end, start = centre(stacks_of(root, seat)[-1]), centre(stacks_of(root, before)[0])
        far = centre(stacks_of(root, seat)[0])
        near = abs(end[0] - start[0]) + abs(end[1] - start[1])
        assert near < abs(far[0] - start[0]) + abs(far[1] - start[1])
        assert near <= 2 * 20  # at the corner: within two stacks' length
    # East at the bottom, South at its right: the seat at the right hand is s+1
    east, south = centre(stacks_of(root, "E")[0]), centre(stacks_of(root, "S")[0])
    assert east[1] > south[1] and south[0] > east[0]
    for event in (dealt_event("wenzhou", [[d, 6], [5, 6]]) for d in range(1, 7)):
        picture = picture_of(event, faces=False)
        root = parse(svg(picture, faces=False))
        b = event.dealt.breach
        rects = stacks_of(root, b.wall)
        (line,) = root.findall("s:g[@class='breach']/s:line", NS)
        lx = (float(line.get("x1", 0)) + float(line.get("x2", 0))) / 2
        ly = (float(line.get("y1", 0)) + float(line.get("y2", 0))) / 2
        here = centre(rects[b.stack - 1])
        if b.stack < len(rects):
            after = centre(rects[b.stack])  # the next stack leftward
            assert min(here[0], after[0]) <= lx <= max(here[0], after[0])
            assert min(here[1], after[1]) <= ly <= max(here[1], after[1])


def test_no_deal_seen_draws_four_empty_walls() -> None:
    root = parse(svg(None, faces=True))
    walls = root.findall("s:g[@class='wall']", NS)
    assert [w.get("data-wall") for w in walls] == list(SEATS)
    for wall in walls:
        assert len(wall.findall("s:rect[@class='wall-unknown']", NS)) == 1
    assert root.findall("s:g[@class='breach']", NS) == []
    assert "no deal seen" in all_text(root)


def test_text_in_the_picture_is_escaped() -> None:
    picture = picture_of(dealt_event("wenzhou", [[3, 4], [5, 6]]), faces=False)
    odd = Picture(**{**picture.__dict__, "cycle": "<script>x</script>"})
    text = svg(odd, faces=False)
    assert "<script>" not in text and "&lt;script&gt;" in text
