"""Formats outside the kernel with pinned checkers (RULES.md §3.12.2): ``nardy plays --jsonl``
writes them in every result (both writers, the fast one and answer_query's dicts, agree); gnubg's
Position ID and the ``.mat`` format refuse what gnubg cannot express, with a clear error."""

from __future__ import annotations

import io
import json
import random

import pytest
from click.testing import CliRunner
from pinned_positions import pinned_positions

from nardy.cli import cli
from nardy.core import Position, load_variant
from nardy.core.dice import SeededDice
from nardy.core.errors import GameStateError
from nardy.core.game import Game, PlayDecision
from nardy.core.gnubg import GnubgFormatError, position_id_of
from nardy.core.jsonl import answer_query, parse_segment, run_jsonl_stream
from nardy.core.mat import mat_game
from nardy.core.record import of_game


def _queries() -> list[dict[str, object]]:
    return [
        {"id": i, "position": p.to_json(), "dice": dice}
        for i, p in enumerate(pinned_positions()[:40])
        for dice in ([6, 5], [3, 3])
    ]


def test_plays_jsonl_keeps_pinned_checkers_in_every_result() -> None:
    plakoto = load_variant("plakoto")
    queries = _queries()
    out = io.StringIO()
    data = "".join(json.dumps(q) + "\n" for q in queries).encode()
    stats = run_jsonl_stream(plakoto, io.BytesIO(data), out)
    assert (stats.queries, stats.errors) == (len(queries), 0)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    with_pins = 0
    for query, answer in zip(queries, answers, strict=True):
        # The fast writer says exactly what the plain dicts say.
        assert answer == answer_query(plakoto, query)
        position = Position.from_json(query["position"])
        expected = {p.result for p in plakoto.legal_plays(position, parse_segment(query))}
        got = {Position.from_json(play["result"], 15) for play in answer["plays"]}
        assert got == expected
        for play in answer["plays"]:
            result = Position.from_json(play["result"])
            assert result.checkers == 15 and result.flip("opposite").checkers == 15
            with_pins += bool(play["result"].get("pinned"))
    assert with_pins > 100


def test_the_plays_command_reads_and_writes_pins() -> None:
    query = _queries()[0]
    result = CliRunner().invoke(
        cli, ["plays", "--variant", "plakoto", "--jsonl"], input=json.dumps(query) + "\n"
    )
    assert result.exit_code == 0, result.output
    (answer,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert answer == answer_query(load_variant("plakoto"), query)
    assert any("pinned" in play["result"] for play in answer["plays"])


def test_gnubg_position_id_refuses_pinned_checkers() -> None:
    position = Position.from_sides({5: 1, 1: 13}, {20: 7, 21: 7}, pinned=[5], off=(1, 0))
    with pytest.raises(GnubgFormatError, match="cannot hold pinned checkers"):
        position_id_of(position)
    # The same board without the pin is a gnubg position (a plakoto start, too).
    assert len(position_id_of(load_variant("plakoto").start_position())) == 14


def _finished(name: str, seed: int) -> Game:
    rng = random.Random(seed)
    game = Game(load_variant(name), SeededDice(seed))
    while not game.is_over:
        decision = game.decision
        assert isinstance(decision, PlayDecision)  # no cube in the tavli family
        game.decide(rng.randrange(len(decision.plays)))
    return game


@pytest.mark.parametrize(
    ("name", "why"), [("plakoto", "pinning"), ("portes", "gnubg scores a backgammon 3")]
)
def test_mat_export_refuses_the_tavli_games(name: str, why: str) -> None:
    with pytest.raises(GameStateError, match=why):
        mat_game(of_game(_finished(name, 4)), (0, 0))


@pytest.mark.parametrize("name", ["plakoto", "portes"])
def test_play_refuses_mat_for_the_tavli_games(name: str, tmp_path: object) -> None:
    result = CliRunner().invoke(
        cli, ["play", "--variant", name, "--games", "1", "--mat", f"{tmp_path}/x.mat"]
    )
    assert result.exit_code == 2
    assert "the .mat format holds backgammon and hypergammon only" in result.output
    assert "Traceback" not in result.output
