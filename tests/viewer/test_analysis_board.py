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


# -- the variant's options, pinned checkers --------------------------------------------------------

# Plakoto: White's stack of one on his point 1 pins Black's mother (Black's checker on Black's own
# point 24, RULES.md §3.12.2); White still has 14 checkers on his own point 24.
MOTHER_PINNED = {
    "points": [1, 0, 0, 0, 0, -14] + [0] * 17 + [14],
    "bar": [0, 0],
    "off": [0, 0],
    "pinned": [1],
}


def test_the_variants_options_decide_the_answer(client: TestClient) -> None:
    """``?options=`` (RULES.md §3.12.2's mother option): under ``standard`` play goes on (White
    keeps checkers on his 24), under ``simple`` a pinned mother has ended the game, under
    ``off`` the mother is one more checker. The shared URL carries the options."""
    query = {
        "variant": "plakoto",
        "position": json.dumps(MOTHER_PINNED),
        "dice": "31",
        "evaluator": "heuristic",
    }
    standard = client.get("/api/board", params=query)
    assert standard.status_code == 200 and "options" not in standard.json()["url"]
    simple = client.get("/api/board", params={**query, "options": "mother=simple"})
    assert simple.status_code == 400 and "mother rule" in simple.json()["error"]
    off = client.get("/api/board", params={**query, "options": "mother=off"}).json()
    assert "options=mother%3Doff" in off["url"]
    expected = hint(
        load_variant("plakoto", {"mother": "off"}),
        parse_position_text(json.dumps(MOTHER_PINNED), load_variant("plakoto")),
        dice=parse_segment({"dice": [3, 1]}),
        evaluator="heuristic",
    ).to_json()
    assert [p["play"] for p in off["plays"]] == [p["play"] for p in expected["plays"]]
    again = client.get(off["url"].replace("/board", "/api/board", 1)).json()
    assert again["plays"] == off["plays"]
    # The cube settings are options too: long nardy's cube is off unless asked for.
    long = {"variant": "long", "position": "------/-----o/------/-----O", "evaluator": "heuristic"}
    assert client.get("/api/board", params=long).json()["cube"] is None
    cubed = client.get("/api/board", params={**long, "options": "cube=true"}).json()
    assert cubed["cube"]["action"] and "options=cube%3Dtrue" in cubed["url"]
    for options, words in (
        ("mother=bogus", "must be one of standard | simple | off"),
        ("cube=true", "plakoto has no option 'cube'"),
        ("match_length=3", "match_length is a match's"),
        ("mother", "name=value"),
    ):
        r = client.get("/api/board", params={**query, "options": options})
        assert r.status_code == 400 and words in r.json()["error"], (options, r.text)


def test_a_draft_with_a_pinned_checker(client: TestClient) -> None:
    """The editor keeps a pinned checker in a draft (counted for the side it belongs to) and
    draws it; a pin beneath nothing, or in a variant that pins nothing, is refused."""
    draft = {**MOTHER_PINNED, "points": [1, 0, 0, 0, 0, -10] + [0] * 17 + [14]}
    shown = client.get(
        "/api/board/position", params={"variant": "plakoto", "position": json.dumps(draft)}
    ).json()
    assert shown["position"]["pinned"] == [1] and 'class="checker black pinned"' in shown["svg"]
    assert "the opponent has 11 checkers" in shown["problem"]  # 10 on the board, 1 pinned
    for variant, bad, words in (
        ("plakoto", {**draft, "pinned": [2]}, "not a plakoto position"),
        ("backgammon", draft, "backgammon pins no checker"),
    ):
        r = client.get(
            "/api/board/position", params={"variant": variant, "position": json.dumps(bad)}
        )
        assert r.status_code == 400 and words in r.json()["error"], r.text


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


def _drag(page: Any, start: str, end: str, touch: bool) -> None:
    """Drag from the middle of ``start``'s element to ``end``'s, by the mouse or by a finger
    (Chromium's touch events, which become pointer events of type touch)."""
    a = page.locator(start).first.bounding_box()
    b = page.locator(end).first.bounding_box()
    x0, y0 = a["x"] + a["width"] / 2, a["y"] + a["height"] * 0.8
    x1, y1 = b["x"] + b["width"] / 2, b["y"] + b["height"] * 0.8
    if touch:
        cdp = page.context.new_cdp_session(page)
        cdp.send(
            "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y0}]}
        )
        for k in range(1, 6):
            x, y = x0 + (x1 - x0) * k / 5, y0 + (y1 - y0) * k / 5
            cdp.send(
                "Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]}
            )
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    else:
        page.mouse.move(x0, y0)
        page.mouse.down()
        page.mouse.move(x1, y1, steps=5)
        page.mouse.up()
    _settled(page)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(why_no_browser() is not None, reason=str(why_no_browser()))
@pytest.mark.parametrize(("width", "touch"), [(1280, False), (390, True)])
def test_checkers_dragged_a_pin_entered_and_the_options_set(
    tmp_path: Path, width: int, touch: bool
) -> None:
    """On the page: a checker dragged from point to point and onto the bar (mouse at 1280 px,
    a finger at 390), plakoto chosen, a checker pinned beneath a stack, its mother option set,
    and the analysis asked for with them."""
    from playwright.sync_api import sync_playwright
    from spectator_browser import CHROMIUM_FLAGS, chromium_path

    with spectator(tmp_path / "arena.db") as base, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS
        )
        try:
            context = browser.new_context(
                viewport={"width": width, "height": 900}, has_touch=touch, is_mobile=touch
            )
            page = context.new_page()
            page.goto(base + "/board")
            page.wait_for_selector("#board svg")
            backgammon = load_variant("backgammon")
            # White's 6-point to his 5-point, then a checker of the 8-point onto the bar.
            _drag(
                page,
                "#board polygon.point[data-point='6']",
                "#board polygon.point[data-point='5']",
                touch,
            )
            moved = backgammon.position_from_id(page.input_value("#position")).to_json()
            assert moved["points"][5] == 4 and moved["points"][4] == 1, moved
            _drag(page, "#board polygon.point[data-point='8']", "#board rect.bar", touch)
            assert page.inner_text("#bar-0") == "1"
            moved = backgammon.position_from_id(page.input_value("#position")).to_json()
            assert moved["points"][7] == 2 and moved["bar"] == [1, 0], moved
            _shot(page, tmp_path, f"board-dragged-{width}")
            # Plakoto: its options on the form, a pin entered by the pin tool.
            page.select_option("#variant", "plakoto")
            _settled(page)
            assert page.is_visible("#pin-mode") and page.is_visible("#variant-options")
            page.select_option("#variant-options [data-option='mother']", "off")
            _settled(page)
            _drag(
                page,
                "#board polygon.point[data-point='24']",
                "#board polygon.point[data-point='13']",
                touch,
            )
            page.check("input[name=edit][value=remove]")
            _click(page, 1)  # one of Black's back among those to place
            assert page.inner_text("#left-1") == "1"
            assert not page.query_selector("#board .checker.pinned")
            page.check("input[name=edit][value=pin]")
            _click(page, 13)  # that Black checker pinned beneath White's one on point 13
            assert page.query_selector("#board .checker.black.pinned")
            assert page.inner_text("#left-1") == "0" and page.inner_text("#error") == ""
            position = load_variant("plakoto").position_from_id(page.input_value("#position"))
            assert position.pinned == (13,) and position.points[12] == 1, position
            page.select_option("#dice", "31")
            page.select_option("#evaluator", "heuristic")
            page.click("#analyse")
            page.wait_for_selector("#ranking")
            assert "options=mother%3Doff" in page.url
            assert page.input_value("#variant-options [data-option='mother']") == "off"
            assert page.query_selector("#board .checker.pinned")
            _shot(page, tmp_path, f"board-plakoto-pin-{width}")
            if width < 500:
                assert page.evaluate("document.documentElement.scrollWidth") <= width
        finally:
            browser.close()
