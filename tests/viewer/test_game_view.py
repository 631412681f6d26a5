"""nardy.game_view: a record replayed into decision steps."""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path

import pytest

from nardy.arena.records.storage import open_store
from nardy.core import load_variant
from nardy.core.notation import parse_steps
from nardy.core.record import MatchInfo
from nardy.core.variant import apply_steps
from nardy.game_view import (
    DecisionStep,
    ReplayViewError,
    game_steps,
    renumbered_play,
)


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
    assert MatchInfo().board_score() == (None, 0, False)
    match = MatchInfo(length=5, score=(2, 4), game_no=3, crawford=True)
    assert match.board_score() == ((2, 4), 5, True)


def test_board_cube_owner_is_seen_from_the_decider() -> None:
    variant = load_variant("backgammon")
    start = variant.start_position()
    step = DecisionStep(1, "double", "Black", start, variant.flip(start), (2, "Black"))
    assert step.board_cube() == (2, "mover")
    assert dataclasses.replace(step, cube=(4, "White")).board_cube() == (4, "opponent")
    assert dataclasses.replace(step, cube=(1, None)).board_cube() == (1, None)


CHECKER = re.compile(r'<circle class="checker (white|black)[^"]*" data-point="(\d+)"')


def _first_reply(step: DecisionStep, lines: tuple[str, ...]) -> str | None:
    """The play text of the first forced play of the decider's opponent in ``lines``."""
    other = "Black" if step.player == "White" else "White"
    for line in lines:
        if line.startswith(f"{other} ") and line.endswith(" (forced)") and ": " in line:
            return line[line.rindex(": ") + 2 : -len(" (forced)")]
    return None


def test_then_lines_are_numbered_as_the_board_shown(finished_db: Path) -> None:
    """A forced reply of the opponent is written in the decider's numbers, as the board beside
    it: the checker it moves first is one of the opponent's on the board at that number."""
    checked = renumbered = 0
    for record in records(finished_db):
        replay = game_steps(record)
        for step in replay.steps[:-1]:
            play = _first_reply(step, step.after_shown)
            if play is None or play.startswith(("bar", "(no move)")):
                continue
            raw = _first_reply(step, step.after)
            assert raw is not None and play == renumbered_play(raw, replay.variant.rules.geometry)
            svg = str(step.svg(replay.variant))
            other = "black" if step.player == "White" else "white"
            at = {int(p) for colour, p in CHECKER.findall(svg) if colour == other}
            # (the renumbered text runs the other way: not a play parse_steps reads)
            assert int(play.split()[0].split("/")[0]) in at, (play, raw)
            checked += 1
            renumbered += play != raw
    assert checked and renumbered, "no forced reply of the opponent in the stored games"


def test_renumbered_play() -> None:
    # RULES.md §1.2: the opponent's point p is 25 - p (opposite geometry), p ± 12 (same).
    assert renumbered_play("24/18*(2) 13/11^ bar/22 6/off", "opposite") == (
        "1/7*(2) 12/14^ bar/3 19/off"
    )
    assert renumbered_play("24/18 13/1", "same") == "12/6 1/13"
