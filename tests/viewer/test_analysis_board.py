"""The analysis board (nardy/web/board.py, docs/play.md "The analysis board"): its API answers what
``nardy.analysis.hint.hint`` answers for the same query, bad queries are a 400 with the reason,
the shareable URL reproduces the analysis, and in a real browser (the installed ``nardy web``) a
position edited by clicks gets a ranking, at desktop and phone widths.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the dev extra)")

from starlette.testclient import TestClient

from nardy.analysis.hint import hint
from nardy.core import load_variant
from nardy.core.gnubg import parse_position_text
from nardy.core.jsonl import parse_segment
from nardy.web.app import create_app

OPENING = "4HPwATDgc/ABMA"  # gnubg's Position ID of backgammon's opening


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "arena.db"))) as c:
        yield c


def _expected(variant_name: str, position: str, dice: str, ply: int, evaluator: str) -> Any:
    variant = load_variant(variant_name)
    steps = parse_segment({"dice": [int(dice[0]), int(dice[1])]}) if dice else None
    found = hint(
        variant, parse_position_text(position, variant), dice=steps, ply=ply, evaluator=evaluator
    )
    return found.to_json()


@pytest.mark.parametrize(
    ("variant", "position", "dice", "ply", "evaluator", "best"),
    [
        ("backgammon", OPENING, "31", 0, "heuristic", "8/5 6/5"),
        ("backgammon", "b----E/-C---e/E---c-/e----B", "65", 1, "heuristic", None),
        ("long", "------/-----o/------/-----O", "65", 1, "heuristic", None),
        ("long", "------/-----o/------/-----O", "43", 0, "neural", None),
        ("plakoto", "o-----/------/------/-----O", "64", 0, "heuristic", None),
        ("backgammon", OPENING, "", 0, "heuristic", None),  # the cube decision only
    ],
)
def test_the_api_answers_what_hint_answers(
    client: TestClient,
    variant: str,
    position: str,
    dice: str,
    ply: int,
    evaluator: str,
    best: str | None,
) -> None:
    query = {"variant": variant, "position": position, "ply": str(ply), "evaluator": evaluator}
    if dice:
        query["dice"] = dice
    r = client.get("/api/board", params=query)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer.pop("svg").startswith("<svg")
    url = answer.pop("url")
    assert answer == _expected(variant, position, dice, ply, evaluator)
    assert url.startswith("/board?")
    if dice:
        assert answer["plays"] and answer["dice"] is not None
    else:
        assert answer["plays"] == [] and answer["cube"] is not None  # backgammon has a cube
    if best is not None:
        assert answer["plays"][0]["play"] == best


def test_the_cube_owner_decides_whether_the_mover_may_double(client: TestClient) -> None:
    base = {"position": OPENING, "evaluator": "heuristic"}
    mine = client.get("/api/board", params={**base, "cube_owner": "mover"}).json()
    theirs = client.get("/api/board", params={**base, "cube_owner": "opponent"}).json()
    assert mine["cube"] is not None and theirs["cube"] is None


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ({"variant": "tavli", "position": OPENING}, "tavli is a match of"),
        ({"variant": "nosuch", "position": OPENING}, "?variant= must be one of"),
        ({"position": "zzz"}, "not a backgammon position"),
        ({"position": OPENING[:-1] + "X"}, "not a backgammon position"),
        ({"position": '{"points": [1]}'}, "not a backgammon position"),
        # 16 White checkers: the variant's rules refuse it (Variant.validate).
        (
            {
                "position": json.dumps(
                    {"points": [16] + [0] * 22 + [-15], "bar": [0, 0], "off": [0, 0]}
                )
            },
            "16",
        ),
        ({"position": "[" * 5000}, "longer than"),
        ({"position": OPENING, "ply": "3"}, "?ply= must be a whole number from 0 to 2"),
        ({"position": OPENING, "ply": "-1"}, "?ply="),
        ({"position": OPENING, "dice": "71"}, "?dice= must be two dice"),
        ({"position": OPENING, "dice": "6"}, "?dice="),
        ({"position": OPENING, "evaluator": "foo"}, "?evaluator= must be one of"),
        ({"position": OPENING, "cube_owner": "me"}, "?cube_owner="),
        ({}, "?position= is required"),
        # The game is over: nobody has a checker left to play.
        ({"position": "------/------/------/------", "dice": "65"}, ""),
    ],
)
def test_a_bad_query_is_a_400_with_its_reason(
    client: TestClient, query: dict[str, str], words: str
) -> None:
    r = client.get("/api/board", params={"evaluator": "heuristic", **query})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert words in error and "\n" not in error and "Traceback" not in error and error
    if query:  # the page says the same, as a page
        page = client.get("/board", params={"evaluator": "heuristic", **query})
        assert page.status_code == 400 and "Traceback" not in page.text
        assert str(escape(error)) in page.text
        # A position refused (or one the engine cannot answer about) is shown on the board's
        # own page, with the form to mend it; another bad parameter is the error page.
        about_the_position = "variant" not in query and (
            not error.startswith("?") or error.startswith("?position=")
        )
        assert ('id="board-form"' in page.text) == about_the_position, error


def test_a_parameter_given_twice_is_refused(client: TestClient) -> None:
    r = client.get(f"/api/board?position={OPENING}&ply=0&ply=1")
    assert r.status_code == 400 and "given 2 times" in r.json()["error"]


def _page_plays(html: str) -> list[tuple[str, str]]:
    table = html.split('id="ranking"', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<td><code>([^<]*)</code>.*?</td><td class=\"num\">([^<]*)</td>", table)


def test_the_shareable_url_reproduces_the_analysis(client: TestClient) -> None:
    query = {"variant": "long", "position": "------/-----o/------/-----O", "dice": "65"}
    answer = client.get("/api/board", params={**query, "ply": "1", "evaluator": "heuristic"}).json()
    url = answer["url"]
    parsed = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    assert parsed["dice"] == ["65"] and parsed["ply"] == ["1"] and parsed["variant"] == ["long"]
    page = client.get(url)
    assert page.status_code == 200
    shown = _page_plays(page.text)
    assert shown == [(p["play"], format(p["equity"], "+.3f")) for p in answer["plays"]]
    assert f'href="{url.replace("&", "&amp;")}"' in page.text  # the page links to itself
    # The same URL's query, asked of the API, is the same analysis.
    again = client.get("/api" + url).json()
    assert again == answer


def test_a_pasted_gnubg_id_and_its_nardy_id_are_one_position(client: TestClient) -> None:
    a = client.get(
        "/api/board", params={"position": OPENING, "dice": "31", "evaluator": "heuristic"}
    )
    nardy_id = a.json()["position"]
    assert nardy_id != OPENING
    b = client.get(
        "/api/board", params={"position": nardy_id, "dice": "31", "evaluator": "heuristic"}
    )
    assert a.json() == b.json()


def test_the_editor_endpoint(client: TestClient) -> None:
    variant = load_variant("backgammon")
    start = client.get("/api/board/position", params={"action": "start"}).json()
    assert start["id"] == variant.start_position().id()
    moved = "-b---E/-C---e/E---c-/e----B"
    flipped = client.get("/api/board/position", params={"action": "flip", "position": moved})
    expected = variant.flip(variant.position_from_id(moved))
    assert flipped.json()["id"] == expected.id()
    back = client.get(
        "/api/board/position", params={"action": "flip", "position": flipped.json()["id"]}
    )
    assert back.json()["id"] == variant.position_from_id(moved).id()
    clear = client.get("/api/board/position", params={"variant": "long", "action": "clear"})
    assert clear.json()["position"] == {"points": [0] * 24, "bar": [0, 0], "off": [0, 0]}
    assert clear.json()["problem"].startswith("not yet a legal long position")
    # A draft is drawn as it is, with the reason; too many checkers is not a draft.
    draft = {"points": [3] + [0] * 23, "bar": [0, 0], "off": [0, 0]}
    shown = client.get("/api/board/position", params={"position": json.dumps(draft)}).json()
    assert shown["position"] == draft and "checkers" in shown["problem"]
    assert start["problem"] == ""
    draft["points"][0] = 16
    over = client.get("/api/board/position", params={"position": json.dumps(draft)})
    assert over.status_code == 400 and "not a backgammon position" in over.json()["error"]
    bad = client.get("/api/board/position", params={"position": '{"points": 3}'})
    assert bad.status_code == 400 and "not a backgammon position" in bad.json()["error"]
    page = client.get("/board")
    assert page.status_code == 200 and 'href="/board"' in page.text and "tavli" not in page.text


# -- in a browser ---------------------------------------------------------------------------------

from spectator_browser import browser_page, spectator, why_no_browser  # noqa: E402


def _shot(page: Any, tmp_path: Path, name: str) -> None:
    """A screenshot to look at: in ``$NARDY_BOARD_SHOTS`` when set, else the test's folder."""
    folder = Path(os.environ.get("NARDY_BOARD_SHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def _settled(page: Any) -> None:
    page.wait_for_selector("#board-form:not([data-busy])", state="attached")


def _click(page: Any, point: int, button: str = "left") -> None:
    # A checker lies on its point: the click lands on what is on top, as a person's does.
    page.locator(f"#board polygon.point[data-point='{point}']").click(force=True, button=button)
    _settled(page)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(why_no_browser() is not None, reason=str(why_no_browser()))
@pytest.mark.parametrize("width", [1280, 390])
def test_a_position_edited_by_clicks_gets_a_ranking(tmp_path: Path, width: int) -> None:
    with spectator(tmp_path / "arena.db") as base, browser_page((width, 900)) as page:
        page.goto(base + "/board")
        page.wait_for_selector("#board svg")
        page.click("#clear")
        _settled(page)
        assert json.loads(page.input_value("#position"))["off"] == [0, 0]  # a draft, as JSON
        assert "not yet a legal backgammon position" in page.inner_text("#error")
        assert page.inner_text("#left-0") == "15"
        for _ in range(3):
            _click(page, 6)  # White (to move) on his 6-point
        _click(page, 8)
        page.check("input[name=edit][value=opponent]")
        _click(page, 19)
        _click(page, 19)
        _click(page, 6)  # refused: White's point
        assert "other side's checkers" in page.inner_text("#error")
        page.check("input[name=edit][value=mover]")
        _click(page, 8, button="right")  # removes White's checker from the 8-point
        _click(page, 5)
        page.click("button[data-side='1'][data-where='bar'][data-delta='1']")  # Black on the bar
        _settled(page)
        assert page.inner_text("#bar-1") == "1" and page.inner_text("#left-0") == "11"
        # The rest borne off: a legal position at last, shown by its id.
        for side, count in ((0, 11), (1, 12)):
            for _ in range(count):
                page.click(f"button[data-side='{side}'][data-where='off'][data-delta='1']")
                _settled(page)
        assert page.inner_text("#left-0") == "0" and page.inner_text("#off-1") == "12"
        assert page.inner_text("#error") == ""
        position_id = page.input_value("#position")
        position = load_variant("backgammon").position_from_id(position_id)
        expected = [0] * 24
        expected[5], expected[4], expected[18] = 3, 1, -2
        assert list(position.to_json()["points"]) == expected
        assert position.to_json()["bar"] == [0, 1]
        page.select_option("#dice", "31")
        page.select_option("#evaluator", "heuristic")
        page.select_option("#ply", "1")
        page.click("#analyse")
        page.wait_for_selector("#ranking")
        shown = [
            (
                row.query_selector("td:nth-child(2) code").inner_text(),
                row.query_selector("td:nth-child(3)").inner_text(),
            )
            for row in page.query_selector_all("#ranking tbody tr")
        ]
        answer = _expected("backgammon", position_id, "31", 1, "heuristic")
        assert shown == [(p["play"], format(p["equity"], "+.3f")) for p in answer["plays"]]
        assert page.inner_text("#position-id") == position_id
        _shot(page, tmp_path, f"board-{width}")
        # The shared link opens the same analysis in a fresh page.
        share = page.get_attribute("#share", "href")
        assert share is not None
        page.goto(base + share)
        page.wait_for_selector("#ranking")
        assert len(page.query_selector_all("#ranking tbody tr")) == len(shown)
        if width < 500:  # nothing wider than the phone's screen
            assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(why_no_browser() is not None, reason=str(why_no_browser()))
def test_another_variant_swapped_and_analysed(tmp_path: Path) -> None:
    long = load_variant("long")
    with spectator(tmp_path / "arena.db") as base, browser_page((1280, 900)) as page:
        page.goto(base + "/board")
        page.wait_for_selector("#board svg")
        page.select_option("#variant", "long")  # its starting position, drawn by the server
        page.wait_for_function("document.querySelector('#board svg').dataset.variant === 'long'")
        _settled(page)
        assert page.input_value("#position") == long.start_position().id()
        assert not page.is_visible("#bar-counter-0")  # long nardy has no bar
        page.check("input[name=edit][value=remove]")
        _click(page, 24)  # one of White's head checkers off the board: a draft of 14
        assert "not yet a legal long position" in page.inner_text("#error")
        page.check("input[name=edit][value=mover]")
        _click(page, 19)
        moved = long.position_from_id(page.input_value("#position"))
        points = [0] * 24
        points[23], points[18], points[11] = 14, 1, -15
        assert list(moved.to_json()["points"]) == points, page.inner_text("#error")
        page.click("#swap")
        _settled(page)
        swapped = page.input_value("#position")
        assert swapped == long.flip(moved).id() != moved.id()
        page.select_option("#dice", "53")
        page.select_option("#evaluator", "heuristic")
        page.click("#analyse")
        page.wait_for_selector("#ranking")
        answer = _expected("long", swapped, "53", 0, "heuristic")
        plays = [
            c.inner_text() for c in page.query_selector_all("#ranking tbody td:nth-child(2) code")
        ]
        assert plays == [p["play"] for p in answer["plays"]]
        assert page.inner_text("#equity").startswith(format(answer["equity"], "+.3f"))
