"""The spectator's analysis page: the equity graph, the marks, the best play, the luck; its
cache; what it refuses (no evaluator, games the spectator does not show)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'nardy[web]'")

from shipped_nets import hide_shipped_net
from starlette.testclient import TestClient

from nardy.analysis.game import GameAnalysis, analyse_game
from nardy.analysis.records import from_arena_record
from nardy.arena.records.storage import GameRow, open_store
from nardy.core import load_variant
from nardy.core.notation import parse_steps
from nardy.engines import Searcher, make_evaluator
from nardy.svg import board
from nardy.web.analysis_view import Coalescing
from nardy.web.app import create_app
from nardy.web.data import NotFound

# gnubg's thresholds on the equity lost (arSkillLevel): doubtful 0.04, bad 0.08, very bad 0.16.
THRESHOLDS = ((0.16, "blunder"), (0.08, "error"), (0.04, "doubtful"))

DOT = re.compile(r'<circle class="decision [^"]*" data-decision="(\d+)" data-mark="(\w+)"')
LUCK = re.compile(r'<rect class="luck (white|black)" data-decision="(\d+)" data-luck="([-\d.]+)"')


def _shortest(db: Path, variant: str) -> tuple[str, GameRow]:
    """The tournament id and the stored game of ``variant`` with the fewest decisions."""
    store = open_store(str(db), readonly=True)
    try:
        tournament_id = next(
            t.tournament_id for t in store.tournaments() if t.name == "every-variant"
        )
        rows = [r for r in store.games(tournament_id, records=True) if r.pool == variant]
    finally:
        store.close()
    assert rows, variant
    return tournament_id, min(rows, key=lambda r: len((r.record or {})["decisions"]))


@pytest.fixture(scope="module")
def client(finished_db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(finished_db))) as c:
        yield c


@pytest.fixture(scope="module")
def game(finished_db: Path) -> tuple[str, GameRow, GameAnalysis]:
    """A short backgammon game and its analysis made here, by nardy.analysis directly."""
    tournament_id, row = _shortest(finished_db, "backgammon")
    assert row.record is not None
    variant = load_variant("backgammon")
    analysis = analyse_game(
        from_arena_record(row.game_id, row.record),
        Searcher(variant, make_evaluator("neural", variant)),
    )
    assert analysis.decisions
    return tournament_id, row, analysis


def _url(tournament_id: str, game_id: str, api: bool = False, query: str = "") -> str:
    base = f"/t/{quote(tournament_id, safe='')}/a/{quote(game_id, safe='')}"
    return ("/api" if api else "") + base + (f"?{query}" if query else "")


def test_one_dot_per_decision_marked_as_the_analysis_marks_it(
    client: TestClient, game: tuple[str, GameRow, GameAnalysis]
) -> None:
    tournament_id, row, analysis = game
    page = client.get(_url(tournament_id, row.game_id))
    assert page.status_code == 200
    dots = DOT.findall(page.text)
    assert [int(n) for n, _ in dots] == [d.number for d in analysis.decisions]
    assert [m for _, m in dots] == [d.mark or "none" for d in analysis.decisions]
    for decision, (_, shown) in zip(analysis.decisions, dots, strict=True):
        # The marks are gnubg's thresholds on the equity lost, for the decisions that count.
        expected = next((name for t, name in THRESHOLDS if decision.loss >= t - 1e-12), None)
        assert shown == ((expected if decision.counted else None) or "none")
    # One luck bar per roll whose luck the analysis measured, signed from White's side.
    bars = LUCK.findall(page.text)
    lucky = [d for d in analysis.decisions if d.luck is not None]
    assert [int(n) for _, n, _ in bars] == [d.number for d in lucky]
    for (colour, _, luck), decision in zip(bars, lucky, strict=True):
        assert colour == ("white", "black")[decision.player]
        assert float(luck) == pytest.approx(decision.luck, abs=1e-4)


def test_the_json_twin_gives_white_s_equity_and_the_game_page_s_step(
    client: TestClient, game: tuple[str, GameRow, GameAnalysis]
) -> None:
    tournament_id, row, analysis = game
    answer = client.get(_url(tournament_id, row.game_id, api=True))
    assert answer.status_code == 200
    body = answer.json()
    assert body["evaluator"] == "neural" and body["ply"] == 0
    assert len(body["decisions"]) == len(analysis.decisions)
    for item, decision in zip(body["decisions"], analysis.decisions, strict=True):
        sign = 1 if decision.player == 0 else -1
        assert item["white_equity"] == pytest.approx(sign * decision.equity_played, abs=1e-5)
        assert item["mark"] == decision.mark
    # Every decision a bot was asked is the analysed decision at that step of the game page;
    # the others are plays with a single choice (the arena plays them by itself).
    steps = client.get(f"/api/t/{quote(tournament_id, safe='')}/g/{quote(row.game_id)}").json()
    asked = [s for s in steps["steps"] if s["kind"] != "end"]
    linked = [item for item in body["decisions"] if item["step"] is not None]
    assert [item["step"] for item in linked] == [s["number"] for s in asked]
    for item in linked:
        step = asked[item["step"] - 1]
        assert (step["kind"], step["player"], step["position"]) == (
            item["kind"],
            item["player"],
            item["position"],
        )
    assert all(
        item["kind"] == "play" and item["choices"] == 1
        for item in body["decisions"]
        if item["step"] is None
    )


def test_a_match_game_s_plays_are_linked_to_their_steps(named_db: Path) -> None:
    """In match play the analysis leaves the cube actions out; every play a bot was asked is
    still the analysed decision at its step."""
    store = open_store(str(named_db), readonly=True)
    try:
        tournament_id = store.tournaments()[0].tournament_id
        row = store.games(tournament_id)[0]
    finally:
        store.close()
    with TestClient(create_app(str(named_db))) as c:
        body = c.get(_url(tournament_id, row.game_id, api=True)).json()
        steps = c.get(f"/api/t/{quote(tournament_id)}/g/{quote(row.game_id, safe='')}").json()
    plays = [s for s in steps["steps"] if s["kind"] == "play"]
    linked = {item["step"]: item for item in body["decisions"] if item["step"] is not None}
    assert {s["number"] for s in plays} <= set(linked)
    for number, item in linked.items():
        step = steps["steps"][number - 1]
        assert (step["kind"], step["player"], step["position"], step["dice"]) == (
            item["kind"],
            item["player"],
            item["position"],
            item.get("dice"),
        )


def test_the_best_play_is_drawn_beside_the_play_made(
    client: TestClient, game: tuple[str, GameRow, GameAnalysis]
) -> None:
    tournament_id, row, analysis = game
    missed = next(
        (d for d in analysis.decisions if d.kind == "play" and d.best != d.played and d.played),
        None,
    )
    assert missed is not None, "the game has no play other than the best"
    page = client.get(_url(tournament_id, row.game_id, query=f"d={missed.number}")).text
    board_svg = page[page.index('<div class="board">') :]
    best = re.findall(r'class="arrow best" data-step="([^"]+)"', board_svg)
    made = re.findall(r'class="arrow" data-step="([^"]+)"', board_svg)
    assert best == [f"{s.src}/{s.dst}" for s in parse_steps(missed.best)]
    assert made == [f"{s.src}/{s.dst}" for s in parse_steps(missed.played)]
    assert missed.best in page and f'data-mark="{missed.mark or "none"}"' in page
    # The current decision is the graph's cursor.
    assert f'class="decision {missed.mark or "none"} current" data-decision="{missed.number}"' in (
        page
    )


def test_the_svg_board_draws_a_second_play_dashed() -> None:
    bg = load_variant("backgammon")
    svg = board(bg.start_position(), bg, last_play="13/7 13/8", best_play="24/18 13/8")
    assert re.findall(r'class="arrow best" data-step="([^"]+)"', svg) == ["24/18", "13/8"]
    assert re.findall(r'class="arrow" data-step="([^"]+)"', svg) == ["13/7", "13/8"]
    assert 'stroke-dasharray="12 7"' in svg and 'id="nardy-arrowhead-best"' in svg


def test_the_game_page_links_to_its_analysis(
    client: TestClient, game: tuple[str, GameRow, GameAnalysis]
) -> None:
    tournament_id, row, _ = game
    page = client.get(f"/t/{quote(tournament_id, safe='')}/g/{quote(row.game_id, safe='')}")
    assert f'href="{_url(tournament_id, row.game_id)}"' in page.text


def test_a_variant_without_an_evaluator_says_so(
    client: TestClient, finished_db: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hide_shipped_net(monkeypatch, "hypergammon", tmp_path)  # as a plugin variant without a net
    tournament_id, row = _shortest(finished_db, "hypergammon")
    page = client.get(_url(tournament_id, row.game_id))
    assert page.status_code == 404
    assert "No analysis" in page.text and "hypergammon" in page.text
    answer = client.get(_url(tournament_id, row.game_id, api=True))
    assert answer.status_code == 404 and "hypergammon" in answer.json()["error"]


def test_gnubg_only_for_backgammon_and_when_installed(
    client: TestClient, finished_db: Path, game: tuple[str, GameRow, GameAnalysis]
) -> None:
    tournament_id, row, _ = game
    answer = client.get(_url(tournament_id, row.game_id, query="evaluator=gnubg"))
    try:
        import gnubg  # noqa: F401
    except ImportError:
        assert answer.status_code == 404 and "pip install" in answer.text
    else:
        assert answer.status_code == 200 and 'class="evaluator">gnubg' in answer.text
    long_id, long_row = _shortest(finished_db, "long")
    answer = client.get(_url(long_id, long_row.game_id, query="evaluator=gnubg"))
    assert answer.status_code == 404 and "backgammon only" in answer.text


def test_a_plugin_evaluator_is_offered_and_used(
    client: TestClient, game: tuple[str, GameRow, GameAnalysis], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An evaluator a plugin registers is offered by name and analyses the game; an argument
    (``name:ARG``) is never taken from the query."""
    from nardy.engines import evaluator as evaluators

    tournament_id, row, _ = game
    url = _url(tournament_id, row.game_id, query="evaluator=toy")
    assert client.get(url).status_code == 400  # not registered yet
    # The plugin: the heuristic's evaluation under another name (the pages do not offer it
    # under its own).
    monkeypatch.setitem(
        evaluators._REGISTRY,
        "toy",
        lambda variant, argument: evaluators.HeuristicEvaluator(variant),
    )
    page = client.get(url)
    assert page.status_code == 200 and 'class="evaluator">toy' in page.text
    assert ">toy</a>" in client.get(_url(tournament_id, row.game_id)).text  # offered beside neural
    body = client.get(_url(tournament_id, row.game_id, api=True, query="evaluator=toy")).json()
    assert body["evaluator"] == "toy"
    variant = load_variant("backgammon")
    assert row.record is not None
    expected = analyse_game(
        from_arena_record(row.game_id, row.record),
        Searcher(variant, make_evaluator("heuristic", variant)),
    )
    for item, decision in zip(body["decisions"], expected.decisions, strict=True):
        sign = 1 if decision.player == 0 else -1
        assert item["white_equity"] == pytest.approx(sign * decision.equity_played, abs=1e-5)
    query = "evaluator=" + quote("toy:x")
    assert client.get(_url(tournament_id, row.game_id, query=query)).status_code == 400


@pytest.mark.parametrize("query", ["evaluator=heuristic", "d=0", "d=9999", "d=x", "d=1&d=2"])
def test_strict_query(
    client: TestClient, game: tuple[str, GameRow, GameAnalysis], query: str
) -> None:
    tournament_id, row, _ = game
    assert client.get(_url(tournament_id, row.game_id, query=query)).status_code == 400


def test_a_game_the_spectator_withholds_is_not_analysed(
    finished_db: Path, game: tuple[str, GameRow, GameAnalysis], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page asks the spectator's own game access (which seals the games of unfinished
    duplicate rounds): what it withholds is a 404, and no analysis is made or cached."""
    tournament_id, row, _ = game
    app = create_app(str(finished_db))
    spectator, analyst = app.state.spectator, app.state.analyst

    def sealed(tid: str, game_id: str) -> Any:
        raise NotFound(f"no game {game_id!r} in tournament {tid}")

    monkeypatch.setattr(spectator, "game", sealed)
    with TestClient(app) as c:
        for api in (False, True):
            answer = c.get(_url(tournament_id, row.game_id, api=api))
            assert answer.status_code == 404
            assert "equity" not in answer.text and "decision" not in answer.text
    assert analyst.computed == 0 and len(analyst.results) == 0


def test_a_sealed_round_s_game_has_no_analysis(tmp_path: Path) -> None:
    """A running duplicate-dice tournament: the game of an unfinished round is not shown, nor
    analysed (the spectator's sealing, nardy.arena.service.public)."""
    pytest.importorskip(
        "nardy.arena.service.public", reason="sealed rounds come with the arena ledger"
    )
    from nardy.arena.competition.schedule import parse_definition
    from nardy.arena.competition.tournament import Tournament
    from nardy.arena.records.storage import SqliteStore

    d = parse_definition(
        {"name": "secret", "bots": ["heuristic", "random"], "variant": "backgammon", "games": 4}
    )
    full = SqliteStore(tmp_path / "all.db")
    Tournament(d, full).run()
    rows = full.games(d.tournament_id, records=True)
    full.close()
    store = SqliteStore(tmp_path / "running.db")
    store.open_tournament(d.tournament_id, d.name, d.to_json(), d.identity(), d.total_units)
    store.commit_dice(d.tournament_id, "sha256-v1", "0" * 64, "1" * 64)  # type: ignore[attr-defined]
    store.set_status(d.tournament_id, "running")
    first = rows[0]
    assert first.record is not None
    store.save_game(first, first.record)  # one game of a round of two: the round is sealed
    store.close()
    app = create_app(str(tmp_path / "running.db"))
    with TestClient(app) as c:
        game_page = c.get(f"/t/{quote(d.tournament_id)}/g/{quote(first.game_id, safe='')}")
        assert game_page.status_code == 404
        for api in (False, True):
            assert c.get(_url(d.tournament_id, first.game_id, api=api)).status_code == 404
        # Nor is it in the tournament's analysis.
        body = _finished_job(c, d.tournament_id)
        assert body["games"] == 0 and body["pools"] == []
    assert app.state.analyst.computed == 0


def test_concurrent_requests_for_one_game_make_one_analysis(
    finished_db: Path, game: tuple[str, GameRow, GameAnalysis]
) -> None:
    tournament_id, row, analysis = game
    app = create_app(str(finished_db))
    analyst = app.state.analyst
    assert row.record is not None
    results: list[GameAnalysis] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(
                analyst.analyse(tournament_id, row.game_id, row.record, "neural")
            )
        )
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert analyst.computed == 1 and len(results) == 6
    assert all(r is results[0] for r in results)
    assert [d.mark for d in results[0].decisions] == [d.mark for d in analysis.decisions]
    app.state.spectator.close()


def test_the_cache_is_bounded_coalesces_and_does_not_keep_errors() -> None:
    cache: Coalescing[int, int] = Coalescing(2)
    started, release = threading.Event(), threading.Event()
    calls: list[int] = []

    def slow() -> int:
        calls.append(1)
        started.set()
        release.wait(5)
        return 42

    out: list[int] = []
    first = threading.Thread(target=lambda: out.append(cache.get(1, slow)))
    first.start()
    started.wait(5)
    waiters = [threading.Thread(target=lambda: out.append(cache.get(1, slow))) for _ in range(3)]
    for t in waiters:
        t.start()
    release.set()
    for t in [first, *waiters]:
        t.join()
    assert out == [42] * 4 and len(calls) == 1
    cache.get(2, lambda: 2)
    cache.get(3, lambda: 3)  # evicts 1, the least recently used
    assert len(cache) == 2 and 1 not in cache and 3 in cache

    def broken() -> int:
        raise ValueError("no evaluator")

    with pytest.raises(ValueError):
        cache.get(4, broken)
    assert 4 not in cache and cache.get(4, lambda: 4) == 4
    with pytest.raises(ValueError):
        Coalescing(0)


# -- a tournament's analysed standings ------------------------------------------------------------


def _finished_job(client: TestClient, tournament_id: str) -> dict[str, Any]:
    url = f"/api/t/{quote(tournament_id, safe='')}/analysis"
    deadline = time.monotonic() + 60
    while True:
        body: dict[str, Any] = client.get(url).json()
        if body["finished"] or time.monotonic() > deadline:
            return body
        time.sleep(0.1)


def _showing(
    finished_db: Path, monkeypatch: pytest.MonkeyPatch, game_ids: list[str]
) -> tuple[Any, str, list[str]]:
    """An app whose spectator shows only ``game_ids`` of the every-variant tournament (as if
    the others were sealed); the ids of the records it is asked for."""
    app = create_app(str(finished_db))
    spectator = app.state.spectator
    tournament_id = next(
        t.tournament_id for t in spectator.tournaments() if t.name == "every-variant"
    )
    shown = [r for r in spectator.games(tournament_id) if r.game_id in game_ids]
    monkeypatch.setattr(spectator, "games", lambda tid: shown)
    asked: list[str] = []
    real_game = spectator.game

    def game(tid: str, game_id: str) -> Any:
        asked.append(game_id)
        return real_game(tid, game_id)

    monkeypatch.setattr(spectator, "game", game)
    return app, tournament_id, asked


def test_a_tournament_s_analysis_per_bot_of_the_shown_games(
    finished_db: Path,
    game: tuple[str, GameRow, GameAnalysis],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Analysed in the background, the shown games only, each bot's numbers as nardy.analysis
    gives them; the tournament page links to it."""
    _, row, analysis = game
    app, tournament_id, asked = _showing(finished_db, monkeypatch, [row.game_id])
    expected = {p.name: p for p in analysis.players}
    with TestClient(app) as c:
        assert f'href="/t/{tournament_id}/analysis"' in c.get(f"/t/{tournament_id}").text
        body = _finished_job(c, tournament_id)
        assert body["error"] is None and body["games"] == body["done"] == 1
        assert asked == [row.game_id]
        [pool] = body["pools"]
        assert pool["pool"] == "backgammon" and pool["games"] == 1
        assert set(pool["bots"]) == set(expected)
        for name, bot in pool["bots"].items():
            assert bot["error_rate"] == pytest.approx(expected[name].error_rate, abs=1e-5)
            assert bot["luck_adjusted_per_game"] == pytest.approx(expected[name].adjusted, abs=1e-4)
            assert bot["points_per_game"] == expected[name].points
        page = c.get(f"/t/{tournament_id}/analysis").text
        assert 'http-equiv="refresh"' not in page and page.count("<tr data-bot=") == 2
        assert pool["self_judged"] == [] and "self-judged" not in page


def test_a_bot_judged_by_its_own_net_is_named_under_its_pool(
    finished_db: Path,
    game: tuple[str, GameRow, GameAnalysis],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``neural`` graded by ``neural`` shows PR 0.0 and ranks first: the page says why (issue
    37). The stored bots are heuristic and random, so the heuristic stands in for it here."""
    _, row, _ = game
    app, tournament_id, _ = _showing(finished_db, monkeypatch, [row.game_id])
    monkeypatch.setattr("nardy.web.app.judges_itself", lambda bot, evaluator: bot == "heuristic")
    with TestClient(app) as c:
        [pool] = _finished_job(c, tournament_id)["pools"]
        assert pool["self_judged"] == ["heuristic"]
        page = c.get(f"/t/{tournament_id}/analysis").text
        assert (
            'class="warn self-judged" data-pool="backgammon">heuristic: judged by its own net'
            in page
        )


def test_a_pool_without_an_evaluator_is_left_out_saying_why(
    finished_db: Path,
    game: tuple[str, GameRow, GameAnalysis],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    hide_shipped_net(monkeypatch, "hypergammon", tmp_path)  # as a plugin variant without a net
    _, row, _ = game
    _, hyper = _shortest(finished_db, "hypergammon")
    app, tournament_id, _ = _showing(finished_db, monkeypatch, [hyper.game_id, row.game_id])
    with TestClient(app) as c:
        body = _finished_job(c, tournament_id)
        assert body["finished"] and body["error"] is None
        assert list(body["pools_left_out"]) == ["hypergammon"]
        assert "hypergammon" in body["pools_left_out"]["hypergammon"]
        assert [p["pool"] for p in body["pools"]] == ["backgammon"]
        page = c.get(f"/t/{tournament_id}/analysis")
        assert page.status_code == 200 and 'class="error pool-error"' in page.text
        assert c.get(f"/t/{tournament_id}/analysis?evaluator=x").status_code == 400


def _attr(page: str, element_id: str, name: str) -> str:
    """An attribute of the element with ``id=element_id`` (the step's box)."""
    tag = re.search(rf'<div class="step" id="{element_id}"[^>]*>', page)
    assert tag is not None, element_id
    found = re.search(rf'\b{name}="([^"]*)"', tag.group(0))
    assert found is not None, name
    return found.group(1)


@pytest.fixture(scope="module")
def forced_game(finished_db: Path) -> tuple[str, GameRow, GameAnalysis]:
    """The shortest backgammon game with a forced play (a decision no bot was asked), and its
    analysis made here."""
    store = open_store(str(finished_db), readonly=True)
    try:
        tournament_id = next(
            t.tournament_id for t in store.tournaments() if t.name == "every-variant"
        )
        rows = [r for r in store.games(tournament_id, records=True) if r.pool == "backgammon"]
    finally:
        store.close()
    variant = load_variant("backgammon")
    searcher = Searcher(variant, make_evaluator("neural", variant))
    for row in sorted(rows, key=lambda r: len((r.record or {})["decisions"])):
        assert row.record is not None
        analysis = analyse_game(from_arena_record(row.game_id, row.record), searcher)
        if len(analysis.decisions) > len(row.record["decisions"]):
            return tournament_id, row, analysis
    pytest.fail("no stored backgammon game has a forced play")


def test_one_numbering_of_moves_between_the_game_page_and_the_analysis(
    client: TestClient, forced_game: tuple[str, GameRow, GameAnalysis]
) -> None:
    """A number names one move on both pages: the analysis links decision N to the game page's
    step N and names it N; the game page's step N links to the analysis at N, which shows the
    same position; a forced play (no step of its own) says so; old ?d= links still open."""
    tournament_id, row, analysis = forced_game
    body = client.get(_url(tournament_id, row.game_id, api=True)).json()
    plies = [item["step"] for item in body["decisions"]]
    assert None in plies, "the game has no forced play"
    game_base = f"/t/{quote(tournament_id, safe='')}/g/{quote(row.game_id, safe='')}"
    for decision, ply in zip(analysis.decisions, plies, strict=True):
        page = client.get(_url(tournament_id, row.game_id, query=f"d={decision.number}")).text
        assert _attr(page, "analysed", "data-position") == decision.position
        if ply is None:
            assert "forced play" in page and "no decision" in page
            assert 'class="permalink"' not in page
            continue
        assert f'<span class="where">decision {ply} of ' in page
        # analysis → game page: the link lands on the same position, at the same number.
        link = re.search(r'<a class="permalink" href="([^"]+)">in the game</a>', page)
        assert link is not None
        assert link.group(1).replace("&amp;", "&") == f"{game_base}?ply={ply}"
        shown = client.get(link.group(1).replace("&amp;", "&")).text
        assert _attr(shown, "step", "data-position") == decision.position
        assert _attr(shown, "step", "data-ply") == str(ply)
        assert f"decision {ply} of " in shown
        # game page → analysis: its link opens the same decision.
        back = re.search(r'<a class="analysis-step" href="([^"]+)"', shown)
        assert back is not None
        assert back.group(1) == _url(tournament_id, row.game_id, query=f"ply={ply}")
        again = client.get(back.group(1)).text
        assert _attr(again, "analysed", "data-decision") == str(decision.number)
        assert _attr(again, "analysed", "data-position") == decision.position
        # The analysis's own links to it use the game page's number.
        assert f'href="{_url(tournament_id, row.game_id, query=f"ply={ply}")}"' in page


@pytest.mark.parametrize("query", ["ply=0", "ply=9999", "ply=x", "ply=1&d=1"])
def test_strict_ply_query(
    client: TestClient, game: tuple[str, GameRow, GameAnalysis], query: str
) -> None:
    tournament_id, row, _ = game
    assert client.get(_url(tournament_id, row.game_id, query=query)).status_code == 400


def test_a_registered_quantity_is_a_column_of_both_analysis_pages(
    finished_db: Path,
    game: tuple[str, GameRow, GameAnalysis],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """nardy.analysis.quantities: the game's and the tournament's analysis pages show a
    registered quantity per player, as nardy.analysis gives it."""
    from nardy.analysis.quantities import Quantity, register_quantity, unregister_quantity

    _, row, analysis = game
    mean_loss = Quantity("mean_loss", "mean loss", lambda d: d.loss if d.counted else None, 4)
    app, tournament_id, _ = _showing(finished_db, monkeypatch, [row.game_id])
    register_quantity(mean_loss)
    try:
        with TestClient(app) as c:
            page = c.get(_url(tournament_id, row.game_id)).text
            _finished_job(c, tournament_id)
            table = c.get(f"/t/{tournament_id}/analysis").text
    finally:
        unregister_quantity(mean_loss.name)
    cells = re.findall(r'<td class="num quantity">([^<]*)</td>', page)
    assert cells == [f"{p.error_rate:.4f}" for p in analysis.players]
    assert '<th class="num quantity">mean loss</th>' in page
    by_bot = re.findall(r'<tr data-bot="([^"]+)">.*?<td class="num quantity">([^<]*)</td>', table)
    assert dict(by_bot) == {p.name: f"{p.error_rate:.4f}" for p in analysis.players}
