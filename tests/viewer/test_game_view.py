"""nardy.game_view: a record replayed into decision steps."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from nardy.arena.storage import open_store
from nardy.core import load_variant
from nardy.core.notation import parse_steps
from nardy.core.variant import apply_steps
from nardy.game_view import DecisionStep, MatchSetup, ReplayViewError, game_steps


def records(db: Path) -> list[dict]:
    store = open_store(str(db), readonly=True)
    try:
        tid = next(t.tournament_id for t in store.tournaments() if t.name == "every-variant")
        return [g.record for g in store.games(tid, records=True) if g.record is not None]
    finally:
        store.close()


def test_steps_follow_the_record(finished_db: Path) -> None:
    for record in records(finished_db):
        replay = game_steps(record)
        variant = load_variant(record["variant"], record["options"])
        answered = [d for d in record["decisions"] if "answer" in d]
        steps = replay.steps
        assert [s.player for s in steps[:-1]] == [d["player"] for d in answered]
        assert [s.kind for s in steps[:-1]] == [d["kind"] for d in answered]
        assert [s.latency_ms for s in steps[:-1]] == [d.get("latency_ms") for d in answered]
        for step in steps[:-1]:
            flip = step.player == "Black"
            assert step.white_view == (variant.flip(step.position) if flip else step.position)
            if step.kind == "play":
                assert (
                    step.choices is not None and step.choices >= 2
                )  # forced plays are no decisions
                assert step.dice and step.segment
                # The chosen play's steps, made on the step's position, are legal with its dice.
                result = apply_steps(step.position, step.steps, pins=variant.rules.hitting.pins)
                assert result in variant.legal_plays(step.position, step.dice)
                assert step.steps == tuple(parse_steps(step.answer or "")) or not step.answer
        end = steps[-1]
        assert end.kind == "end" and end.result == record["result"]
        if record["result"]["termination"] == "borne_off":
            # (a dropped double ends a game without it; N = 15 but for hypergammon, RULES.md §3.11)
            assert variant.checkers in end.position.off


def test_forced_plays_are_listed_between_decisions(finished_db: Path) -> None:
    forced = [
        text
        for record in records(finished_db)
        for step in game_steps(record).steps
        for text in (*step.before, *step.after)
    ]
    assert any(text.endswith("(forced)") for text in forced)


def test_a_record_that_does_not_fit_is_refused(finished_db: Path) -> None:
    record = copy.deepcopy(next(r for r in records(finished_db) if r["variant"] == "backgammon"))
    play = next(d for d in record["decisions"] if d["kind"] == "play")
    play["answer"] = "24/1"
    with pytest.raises(ReplayViewError, match=f"decision {play['seq']}: "):
        game_steps(record)
    del record["game"]
    with pytest.raises(ReplayViewError, match="cannot be replayed"):
        game_steps(record)


def test_board_score_shows_a_match_score_and_none_in_money_play() -> None:
    assert MatchSetup().board_score() == (None, 0, False)
    match = MatchSetup(length=5, score=(2, 4), game_no=3, crawford=True)
    assert match.board_score() == ((2, 4), 5, True)


def test_board_cube_owner_is_seen_from_the_decider() -> None:
    variant = load_variant("backgammon")
    start = variant.start_position()
    step = DecisionStep(1, "double", "Black", start, variant.flip(start), (2, "Black"))
    assert step.board_cube() == (2, "mover")
    assert dataclasses.replace(step, cube=(4, "White")).board_cube() == (4, "opponent")
    assert dataclasses.replace(step, cube=(1, None)).board_cube() == (1, None)
