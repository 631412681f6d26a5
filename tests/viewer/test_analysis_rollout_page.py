"""Rolled-out figures on the spectator's analysis page (issue 39): a play decision is rolled out
on request (the page's link, ``?rollout=1``) by the one rollout there is, kept, and shown beside
the evaluator's figures — in the page and its JSON — whenever the decision is shown again."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'nardy[web]'")

from starlette.testclient import TestClient

from nardy.analysis.game import analyse_game
from nardy.analysis.records import from_arena_record
from nardy.analysis.rollout import roll_decisions
from nardy.analysis.rollout_errors import RolloutSettings, rollout_decision
from nardy.core import load_variant
from nardy.engines import Searcher, make_evaluator
from nardy.web.app import create_app

CHEAP = RolloutSettings(trials=4, truncate=1, seed=3, top=2)
"""Rollouts a test can afford: 4 trials, 1 roll deep."""

ROW = re.compile(
    r'<tr class="([^"]*)"><td class="num">(\d+)</td><td><code>([^<]*)</code>.*?'
    r'<td class="num equity">([-+\d.]+) <span class="sub">± ([\d.]+)</span>'
)


@pytest.fixture(scope="module")
def app(finished_db: Path) -> Iterator[Any]:
    application = create_app(str(finished_db))
    application.state.analyst.rollout_settings = CHEAP
    yield application


@pytest.fixture(scope="module")
def client(app: Any) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="module")
def game(app: Any) -> tuple[str, str, dict[str, Any]]:
    """The tournament id, game id and record of a stored backgammon game."""
    spectator = app.state.spectator
    tournament = next(t for t in spectator.tournaments() if t.name == "every-variant")
    row = next(r for r in spectator.games(tournament.tournament_id) if r.pool == "backgammon")
    stored, _ = spectator.game(tournament.tournament_id, row.game_id)
    assert stored.record is not None
    return tournament.tournament_id, row.game_id, stored.record


def _url(tournament_id: str, game_id: str, query: str, api: bool = False) -> str:
    base = f"/t/{quote(tournament_id, safe='')}/a/{quote(game_id, safe='')}?{query}"
    return ("/api" if api else "") + base


def _analysis(client: TestClient, tournament_id: str, game_id: str) -> Any:
    answer = client.get(_url(tournament_id, game_id, "d=1", api=True))
    assert answer.status_code == 200
    return answer.json()


def test_a_play_decision_rolled_out_shows_its_figures(
    client: TestClient, game: tuple[str, str, dict[str, Any]]
) -> None:
    tournament_id, game_id, record = game
    data = _analysis(client, tournament_id, game_id)
    starts = roll_decisions(from_arena_record(game_id, record))
    number = next(
        d["number"]
        for d in data["decisions"]
        if d["kind"] == "play" and d["choices"] >= 3 and d["number"] in starts
    )
    before = client.get(_url(tournament_id, game_id, f"d={number}"))
    assert before.status_code == 200
    assert 'class="ranking rollout"' not in before.text
    link = re.search(r'<p class="rollout-link"><a href="([^"]+)"', before.text)
    assert link is not None
    assert html.unescape(link.group(1)).endswith("&rollout=1")

    page = client.get(html.unescape(link.group(1)))
    assert page.status_code == 200
    assert 'class="ranking rollout"' in page.text
    assert "Rolled out: 4 trials a play, truncated after 1 rolls" in page.text
    rows = ROW.findall(page.text.split('class="ranking rollout"', 1)[1].split("</table>", 1)[0])
    # The figures are the rollout's own: the same decision rolled out here, with the same
    # settings and the page's evaluator (neural), gives them.
    decision = next(d for d in data["decisions"] if d["number"] == number)
    variant = load_variant("backgammon")
    searcher = Searcher(variant, make_evaluator("neural", variant))
    analysed = analyse_game(from_arena_record(game_id, record), searcher, 0)
    expected = rollout_decision(
        analysed.decisions[number - 1], starts[number], searcher, 0, CHEAP
    ).played_json(decision["played"])
    assert [(int(rank), play) for _, rank, play, _, _ in rows] == [
        (p["rank"], p["play"]) for p in expected["plays"]
    ]
    for (_, _, _, equity, se), p in zip(rows, expected["plays"], strict=True):
        assert float(equity) == pytest.approx(p["equity"], abs=5e-4)
        assert float(se) == pytest.approx(p["se"], abs=5e-4)
    # The play made is among them, marked.
    assert any(
        "played" in classes and play == decision["played"] for classes, _, play, _, _ in rows
    )

    # Kept: shown again without asking, in the page and in its JSON, and not rolled out anew.
    kept = app_rollouts(client)
    again = client.get(_url(tournament_id, game_id, f"d={number}"))
    assert 'class="ranking rollout"' in again.text
    assert app_rollouts(client) == kept
    api = client.get(_url(tournament_id, game_id, f"d={number}", api=True)).json()
    shown = next(d for d in api["decisions"] if d["number"] == number)
    assert json.dumps(shown["rollout"]["plays"]) == json.dumps(expected["plays"])
    # The other decisions have none.
    assert sum("rollout" in d for d in api["decisions"]) == 1


def app_rollouts(client: TestClient) -> int:
    return len(client.app.state.analyst.rollouts)  # type: ignore[attr-defined]


def test_a_decision_that_cannot_be_rolled_out_says_so(
    client: TestClient, game: tuple[str, str, dict[str, Any]]
) -> None:
    tournament_id, game_id, _ = game
    data = _analysis(client, tournament_id, game_id)
    forced = next((d for d in data["decisions"] if d.get("choices", 0) < 2), None)
    if forced is None:
        pytest.skip("the game has no forced play")
    page = client.get(_url(tournament_id, game_id, f"d={forced['number']}"))
    assert 'class="rollout-link"><a' not in page.text  # no link to a rollout
    page = client.get(_url(tournament_id, game_id, f"d={forced['number']}&rollout=1"))
    assert page.status_code == 200
    assert "This decision cannot be rolled out" in page.text
    assert 'class="ranking rollout"' not in page.text


def test_a_bad_rollout_query_is_refused(
    client: TestClient, game: tuple[str, str, dict[str, Any]]
) -> None:
    tournament_id, game_id, _ = game
    answer = client.get(_url(tournament_id, game_id, "d=1&rollout=yes"))
    assert answer.status_code == 400
