"""The spectator as players read it: names, one numbering rule, pips, the match and the cube on
the board, results and cube actions in words, the match page, strict query parameters and
error pages that keep the server's paths to themselves."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'nardy[web]'")
pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the dev extra)")

from named_bots import NAMED_BOTS
from starlette.testclient import TestClient

from nardy.arena.records.storage import GameRow, open_store
from nardy.core import load_variant
from nardy.core.dice import ScriptedDice
from nardy.core.game import CubeSettings, Game
from nardy.core.notation import BAR, parse_steps
from nardy.web.app import create_app

SVG = "{http://www.w3.org/2000/svg}"


def text_of(html: str) -> str:
    """What a reader sees: the page without its tags and attributes (nor the technical ids,
    which are shown as code for the command line)."""
    body = html.split("<body", 1)[-1]
    body = re.sub(r"<(script|style|desc)[^>]*>.*?</\1>", "", body, flags=re.S)
    body = re.sub(r'<code class="id[^"]*">.*?</code>', "", body, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))


def stored(db: Path, name: str) -> tuple[str, list[GameRow]]:
    store = open_store(str(db), readonly=True)
    try:
        tid = next(t.tournament_id for t in store.tournaments() if t.name == name)
        return tid, store.games(tid, records=True)
    finally:
        store.close()


def game_url(tid: str, gid: str) -> str:
    return f"/t/{quote(tid, safe='')}/g/{quote(gid, safe='')}"


@pytest.fixture(scope="module")
def named(named_db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(named_db))) as c:
        yield c


@pytest.fixture(scope="module")
def every(finished_db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(finished_db))) as c:
        yield c


# -- names ------------------------------------------------------------------------------------------


def test_bots_are_shown_by_name_on_every_page(named: TestClient, named_db: Path) -> None:
    tid, games = stored(named_db, "served")
    first = games[0]
    pages = [
        "/",
        f"/t/{tid}",
        f"/t/{tid}/games",
        f"/t/{tid}/m/{quote(first.unit_id, safe='')}",
        game_url(tid, first.game_id),
    ]
    for url in pages[1:]:
        text = text_of(named.get(url).text)
        for bot_id, name in NAMED_BOTS.items():
            assert bot_id not in text, (url, bot_id)
            assert name in text, (url, name)
    # The ids stay in links and JSON.
    assert 'href="games?bot=local-heur"' in named.get(f"/t/{tid}").text
    assert named.get(f"/api/t/{tid}").json()["names"] == NAMED_BOTS
    listed = named.get(f"/api/t/{tid}/games").json()["games"][0]
    assert NAMED_BOTS[listed["white"]] == listed["white_name"]
    # The Elo plot too.
    plots = re.findall(r'<svg[^>]*class="elo-plot".*?</svg>', named.get(f"/t/{tid}").text, re.S)
    labels = [t for m in plots for t in ET.fromstring(m).itertext()]
    assert "heur" in labels and "local-heur" not in labels


def test_breadcrumbs_name_the_tournament_and_the_bots(named: TestClient, named_db: Path) -> None:
    tid, games = stored(named_db, "served")
    page = named.get(game_url(tid, games[0].game_id)).text
    crumbs = text_of(re.search(r"<nav>(.*?)</nav>", page, re.S).group(1))  # type: ignore[union-attr]
    assert "served" in crumbs and tid not in crumbs
    assert "heur vs rnd" in crumbs or "rnd vs heur" in crumbs
    assert games[0].game_id not in crumbs


# -- one numbering rule -----------------------------------------------------------------------------


def _board(html: str) -> ET.Element:
    return ET.fromstring(re.search(r"<svg.*?</svg>", html, re.S).group(0))  # type: ignore[union-attr]


def test_the_board_is_numbered_as_the_mover_writes_his_play(
    every: TestClient, finished_db: Path
) -> None:
    """For every decision of a game of every variant, the points are numbered in the deciding
    player's coordinates: his checkers sit on the numbers of his own position (the kernel's,
    replayed independently here), and the chosen play's sources are the outlined points."""
    tid, games = stored(finished_db, "every-variant")
    for row in {g.pool: g for g in games}.values():
        record = row.record
        assert record is not None
        variant = load_variant(record["variant"], record.get("options") or {})
        setup = record.get("setup") or {}
        cube = CubeSettings(**setup["cube"]) if "cube" in setup else None
        game = Game(
            variant, ScriptedDice(record["game"]["rolls"]), starter=setup.get("starter"), cube=cube
        )
        answered = [d for d in record["decisions"] if "answer" in d]
        for ply, entry in enumerate(answered[:12], start=1):
            decision = game.decision
            assert decision is not None
            mover = decision.player
            colour = ("white", "black")[mover]
            root = _board(every.get(game_url(tid, row.game_id) + f"?ply={ply}").text)
            assert root.get("data-numbering") == colour
            own = {str(p): n for p, n in enumerate(decision.position.points, start=1) if n > 0}
            seen: dict[str, int] = {}
            for e in root.iter(f"{SVG}circle"):
                if e.get("class") == f"checker {colour}" and e.get("data-point") not in (
                    "bar",
                    "off",
                ):
                    seen[e.get("data-point", "")] = seen.get(e.get("data-point", ""), 0) + 1
            assert seen == own, (row.pool, ply)
            if entry["kind"] == "play" and entry["answer"]:
                sources = {str(s.src) for s in parse_steps(entry["answer"]) if s.src != BAR}
                outlined = {
                    e.get("data-point")
                    for e in root.iter(f"{SVG}polygon")
                    if "last-from" in (e.get("class") or "").split()
                }
                assert outlined == sources, (row.pool, ply, entry["answer"])
            answer: Any = entry["answer"]
            game.decide(answer == "double" if entry["kind"] == "double" else answer)


# -- pips, match, cube ------------------------------------------------------------------------------


def test_the_game_board_shows_pips_score_and_match(named: TestClient, named_db: Path) -> None:
    tid, games = stored(named_db, "served")
    for row in games:
        record = row.record
        assert record is not None
        match = record["setup"]["match"]
        root = _board(named.get(game_url(tid, row.game_id) + "?ply=1").text)
        pips = {
            e.get("class", "").split()[1]: int(e.get("data-pips", "-1"))
            for e in root.iter(f"{SVG}text")
            if (e.get("class") or "").startswith("pips ")
        }
        assert set(pips) == {"white", "black"} and all(p > 0 for p in pips.values())
        scores = {
            e.get("class", "").split()[1]: e
            for e in root.iter(f"{SVG}text")
            if (e.get("class") or "").startswith("score ")
        }
        assert int(scores["white"].get("data-score", "")) == match["score"][0]
        assert int(scores["black"].get("data-score", "")) == match["score"][1]
        lengths = [e.get("data-length") for e in scores.values() if e.get("data-length")]
        assert lengths == ["5"]
        crawford = [e.get("data-crawford") for e in scores.values() if e.get("data-crawford")]
        assert crawford == ["yes" if match["crawford"] else "no"]


def test_a_take_decision_shows_the_cube_on_offer(named_db: Path) -> None:
    from nardy.game_view import game_steps

    _, games = stored(named_db, "served")
    takes = [
        (row, step)
        for row in games
        for step in game_steps(row.record or {}).steps
        if step.kind == "take"
    ]
    if not takes:
        pytest.skip("no double was offered in these matches")
    row, step = takes[0]
    variant = load_variant("backgammon", (row.record or {}).get("options") or {})
    root = ET.fromstring(step.svg(variant))
    cubes = [e for e in root.iter(f"{SVG}g") if "cube" in (e.get("class") or "").split()]
    assert [c.get("class") for c in cubes] == ["cube offered"]
    assert cubes[0].get("data-value") == str(2 * step.cube[0])


# -- words ------------------------------------------------------------------------------------------


def _expected_kind(variant_name: str, off: int, far_back: bool, outside: bool, bar: bool) -> str:
    """RULES.md §6, written out: the name of the win by the loser's borne-off count, a checker
    far back (bar or his 19…24), outside his home (his 7…24) or on the bar."""
    # nackgammon: the example plugin (.ci/run installs it), backgammon's scoring.
    if variant_name in ("backgammon", "hypergammon", "nackgammon"):
        return "single game" if off else "backgammon" if far_back else "gammon"
    if variant_name in ("long", "nardgammon", "mad", "gulbar", "mad_gulbar"):
        return "oin" if off else "koks" if far_back else "mars"
    if variant_name in ("portes", "plakoto"):  # RULES.md §3.12: 1 or 2, no triple game
        return "single game" if off else "gammon"
    if variant_name in ("fevga", "giul"):
        return "single game" if off else "mars"
    if variant_name == "trictrac":
        if off:
            return "single game"
        return "8-point game" if bar else "4-point game" if outside else "2-point game"
    return ""


def test_results_are_written_in_words(every: TestClient, finished_db: Path) -> None:
    tid, games = stored(finished_db, "every-variant")
    for row in games:
        record = row.record
        assert record is not None
        if record["result"]["termination"] == "double_dropped":
            text = text_of(every.get(game_url(tid, row.game_id)).text)
            assert "drops the double" in text and "double_dropped" not in text
            continue
        if record["result"]["termination"] in ("mother", "draw"):  # plakoto, RULES.md §3.12.2
            text = text_of(every.get(game_url(tid, row.game_id)).text)
            expected = "mother rule" if record["result"]["termination"] == "mother" else "A draw"
            assert expected in text, text
            continue
        assert record["result"]["termination"] == "borne_off"
        variant = load_variant(record["variant"], record.get("options") or {})
        setup = record.get("setup") or {}
        cube = CubeSettings(**setup["cube"]) if "cube" in setup else None
        game = Game(
            variant, ScriptedDice(record["game"]["rolls"]), starter=setup.get("starter"), cube=cube
        )
        for entry in record["decisions"]:
            answer: Any = entry["answer"]
            game.decide(answer == "double" if entry["kind"] == "double" else answer)
        assert game.result is not None
        loser = 1 - game.result.winner
        mine = game.position_for(loser)  # the loser's own coordinates
        off, bar = mine.off[0], mine.bar[0]
        far = bar > 0 or any(n > 0 for n in mine.points[18:24])
        outside = bar > 0 or any(n > 0 for n in mine.points[6:24])
        winner = ("White", "Black")[game.result.winner]
        text = text_of(every.get(game_url(tid, row.game_id)).text)
        assert "borne_off" not in text
        kind = _expected_kind(record["variant"], off, far, outside, bar > 0)
        if record["variant"] == "khachapuri":  # per checker: the loser pays 15 − off
            assert f"{winner} (" in text and f"{points(15 - off)}" in text
            continue
        assert kind, record["variant"]
        assert re.search(rf"{winner} \([^)]*\) wins an? {re.escape(kind)}", text), (
            record["variant"],
            kind,
            text[:400],
        )


def points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def test_result_sentences() -> None:
    from nardy.words import result_words

    bg, long, tric = (load_variant(v) for v in ("backgammon", "long", "trictrac"))
    gammon = {"winner": "Black", "points": 8, "multiplier": 2, "termination": "borne_off"}
    assert result_words(gammon, bg, cube=4) == "Black wins a gammon, 2 × cube 4 = 8 points."
    koks = {"winner": "White", "points": 3, "multiplier": 3, "termination": "borne_off"}
    assert (
        result_words(koks, long, names={"White": "heur"}) == "White (heur) wins a koks: 3 points."
    )
    eight = {"winner": "White", "points": 8, "multiplier": 8, "termination": "borne_off"}
    assert "8-point game" in result_words(eight, tric)
    jacoby = {"winner": "White", "points": 1, "multiplier": 2, "termination": "borne_off"}
    assert "Jacoby" in result_words(jacoby, bg, cube=1)
    drop = {"winner": "White", "points": 2, "multiplier": 1, "termination": "double_dropped"}
    assert result_words(drop, bg, cube=2) == "Black drops the double: White wins 2 points."
    late = {"winner": "Black", "points": 1, "multiplier": 1, "termination": "time_forfeit"}
    assert result_words(late, bg) == "White forfeits on time: Black wins 1 point."
    none = {"winner": None, "points": 0, "termination": "aborted", "reason": "shut down"}
    assert result_words(none, bg) == "No result: the game was aborted (shut down)."


def test_cube_actions_are_written_in_words(named: TestClient, named_db: Path) -> None:
    tid, games = stored(named_db, "served")
    seen = set()
    for row in games:
        kinds = {d["kind"] for d in (row.record or {})["decisions"]}
        if not kinds & {"double", "take"}:
            continue
        text = text_of(named.get(game_url(tid, row.game_id)).text)
        for old in ("double: roll", "double: double", "take: take", "take: drop"):
            assert old not in text
        for d in (row.record or {})["decisions"]:
            if d["kind"] == "double":
                words = f"{d['player']} rolls" if d["answer"] == "roll" else "doubles to"
                assert words in text
                seen.add(d["answer"])
            elif d["kind"] == "take":
                assert f"{d['player']} {d['answer']}s" in text
                seen.add(d["answer"])
    assert "roll" in seen  # the heuristic bot is asked before every roll it may double


# -- the match page and match pools -----------------------------------------------------------------


def test_the_match_page_keeps_the_running_score(named: TestClient, named_db: Path) -> None:
    tid, games = stored(named_db, "served")
    units = sorted({g.unit_id for g in games})
    assert len(units) == 2
    for unit in units:
        mine = sorted((g for g in games if g.unit_id == unit), key=lambda g: g.game_no)
        a, b = mine[0].a, mine[0].b
        score = {a: 0, b: 0}
        running = []
        for g in mine:
            assert g.winner is not None
            score[g.white if g.winner == 0 else g.black] += g.points
            running.append(f"{score[a]}-{score[b]}")
        assert max(score.values()) >= 5
        page = named.get(f"/t/{tid}/m/{quote(unit, safe='')}")
        assert page.status_code == 200
        assert re.findall(r'<tr data-game="[^"]+" data-score="([^"]+)"', page.text) == running
        winner = NAMED_BOTS[max(score, key=lambda k: score[k])]
        assert f"{winner} wins the match {max(score.values())}–{min(score.values())}" in page.text
        data = named.get(f"/api/t/{tid}/m/{quote(unit, safe='')}").json()
        assert data["score"] == [score[a], score[b]] and data["length"] == 5
    assert named.get(f"/t/{tid}/m/nope").status_code == 404


def test_match_pools_are_labelled_as_matches(named: TestClient, named_db: Path) -> None:
    tid, _ = stored(named_db, "served")
    page = named.get(f"/t/{tid}").text
    section = text_of(page.split('data-kind="match"', 1)[1])
    assert "Matches" in section and "Match wins ± SE" in section
    assert "mean match result" in section and "points per game" not in section
    # The win rate's SE: two matches, one each or two of one bot.
    assert re.search(r"\d+% ± \d+|100%|0%", section)
    listed = text_of(named.get("/").text)
    assert "2 / 2 matches" in listed


def test_money_pools_keep_games(every: TestClient, finished_db: Path) -> None:
    tid, _ = stored(finished_db, "every-variant")
    page = every.get(f"/t/{tid}").text
    assert 'data-kind="match"' not in page and "points per game" in page
    assert re.search(r"\d+ / \d+ games", text_of(every.get("/").text))


# -- the position page, strict queries, errors, favicon ---------------------------------------------


def test_the_position_command_line_keeps_side_and_mover(every: TestClient) -> None:
    url = "/position/------/-----o/------/-----O?variant=long&side=opponent&mover=black"
    line = text_of(every.get(url).text)
    assert (
        "nardy show '------/-----o/------/-----O' --variant long --side opponent --mover black"
        in (line)
    )
    plain = text_of(every.get("/position/------/-----o/------/-----O?variant=long").text)
    assert "--side" not in plain and "--mover" not in plain


@pytest.mark.parametrize(
    "query",
    [
        "page=0",
        "page=x",
        "page=2",  # one page only
        "page=-1",
        "result=nobody",
        "fault=bad",
    ],
)
def test_bad_games_queries_are_refused(every: TestClient, finished_db: Path, query: str) -> None:
    tid, _ = stored(finished_db, "every-variant")
    answer = every.get(f"/t/{tid}/games?{query}")
    assert answer.status_code == 400 and "Bad request" in answer.text
    assert every.get(f"/api/t/{tid}/games?{query}").status_code == 400


@pytest.mark.parametrize("query", ["side=left", "mover=red", "mover=White", "side=mover&side=x"])
def test_bad_position_queries_are_refused(every: TestClient, query: str) -> None:
    answer = every.get(f"/position/------/-----o/------/-----O?variant=long&{query}")
    assert answer.status_code == 400 and "Bad request" in answer.text


def test_error_pages_keep_the_database_path_to_themselves(tmp_path: Path) -> None:
    secret_dir = tmp_path / "private-dir-1234"
    secret_dir.mkdir()
    db = secret_dir / "arena.db"
    with TestClient(create_app(str(db))) as c:
        db.write_bytes(b"this is not a database" * 100)
        for url in ("/", "/api/tournaments", "/t/x", "/t/x/g/y"):
            answer = c.get(url)
            assert answer.status_code in (404, 503), url
            assert "private-dir-1234" not in answer.text and str(tmp_path) not in answer.text


def test_a_missing_game_names_no_path(every: TestClient, finished_db: Path) -> None:
    tid, _ = stored(finished_db, "every-variant")
    for url in (f"/t/{tid}/g/nope", f"/api/t/{tid}/g/nope", f"/t/{tid}/m/nope"):
        answer = every.get(url)
        assert answer.status_code == 404
        assert str(finished_db.parent) not in answer.text and "arena.db:" not in answer.text


def test_favicon(every: TestClient) -> None:
    icon = every.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    ET.fromstring(icon.text)
    assert '<link rel="icon" href="/static/favicon.svg"' in every.get("/").text
    assert every.get("/static/favicon.svg").status_code == 200
