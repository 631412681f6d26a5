"""The one game record (nardy.core.record): its JSON-lines and .mat codecs give back today's bytes,
and its replayer refuses a record the kernel does not play as recorded."""

from __future__ import annotations

import dataclasses
import gzip
import json
import random
from pathlib import Path

import pytest

from nardy.core import load_variant, variant_names
from nardy.core.dice import SeededDice
from nardy.core.game import Game
from nardy.core.gnubg import parse_mat, write_mat
from nardy.core.mat import from_mat, mat_record
from nardy.core.match import Match
from nardy.core.plugins import DEFAULT_PLUGINS
from nardy.core.record import (
    TERMINATION,
    GameRecord,
    MatchInfo,
    RecordError,
    Replay,
    from_json,
    of_game,
    outcome_of,
    replay,
)

DATA = Path(__file__).parents[1] / "data" / "records"


def _lines(name: str) -> list[str]:
    with gzip.open(DATA / name, "rt", encoding="utf-8") as file:
        return [line.rstrip("\n") for line in file if line.strip()]


PLAY = _lines("play.jsonl.gz")
ARENA = _lines("arena.jsonl.gz")


@pytest.mark.parametrize("number", range(len(PLAY)))
def test_play_line_round_trips_byte_for_byte(number: int) -> None:
    line = PLAY[number]
    record = from_json(json.loads(line))
    assert record.line() == line
    assert replay(record).is_over


@pytest.mark.parametrize("number", range(len(ARENA)))
def test_arena_record_round_trips_byte_for_byte(number: int) -> None:
    line = ARENA[number]
    record = from_json(json.loads(line))
    assert record.is_arena and record.setup is not None
    assert json.dumps(record.to_json(), separators=(",", ":")) == line
    replay(record)


def test_the_shipped_records_cover_every_variant() -> None:
    """Every built-in variant (an installed plugin, such as CI's example nackgammon, ships no
    record here) has shipped records: its own games, or a match variant's games by theirs."""
    played = {json.loads(line)["variant"] for line in PLAY}
    built_in = [m.rsplit(".", 1)[1] for m in DEFAULT_PLUGINS]
    match_games = {name for v in built_in for name in load_variant(v).info.cycle}
    single = {v for v in built_in if not load_variant(v).info.cycle}
    assert single | match_games <= played


def _random_game(variant_name: str, seed: int) -> Game:
    rng = random.Random(seed)
    variant = load_variant(variant_name)
    if variant.info.cycle:
        match = Match.of(variant, 3)
        game = match.new_game(SeededDice(seed))
    else:
        game = Game(variant, SeededDice(seed))
    while game.decision is not None:
        decision = game.decision
        kind = type(decision).__name__
        if kind == "PlayDecision":
            game.decide(rng.randrange(len(decision.plays)))  # type: ignore[union-attr]
        elif kind == "DoubleDecision":
            game.decide(rng.random() < 0.2)
        else:
            game.decide("take")
    return game


@pytest.mark.parametrize("variant", sorted(variant_names()))
def test_every_variant_round_trips_and_replays(variant: str) -> None:
    for seed in range(3):
        game = _random_game(variant, seed)
        assert game.result is not None
        record = of_game(game, seed=seed, index=seed, outcome=outcome_of(game.result))
        assert record.kernel_json() == game.record()
        line = record.line()
        result = json.loads(line)["result"]
        assert result["termination"] == TERMINATION[game.result.reason]
        assert result["multiplier"] == game.result.base_value
        again = from_json(json.loads(line))
        assert again == record
        assert again.line() == line
        replayed = replay(again)
        assert replayed.record() == game.record()


def _tampered(line: str, change: str) -> GameRecord:
    data = json.loads(line)
    events = data["events"]
    if change == "play":
        # The first decided play becomes another player's first play's text: no longer legal.
        plays = [e for e in events if e["kind"] == "play" and e["play"] and e["choices"] > 1]
        first, other = plays[0], next(p for p in plays if p["play"] != plays[0]["play"])
        first["play"] = "24/1" if first["play"] != "24/1" else other["play"]
    else:
        data["rolls"][3] = [data["rolls"][3][0] % 6 + 1, data["rolls"][3][1]]
    return from_json(data)


def test_replay_refuses_an_illegal_play_with_one_line() -> None:
    record = _tampered(PLAY[0], "play")
    with pytest.raises(RecordError) as error:
        replay(record)
    message = str(error.value)
    # It names the decision, the play and its dice: "decision 1: Black's play '24/1' with 6-2: …".
    assert "\n" not in message and message.startswith("decision ")
    assert "play '24/1' with " in message


def test_replay_refuses_wrong_dice_with_one_line() -> None:
    record = _tampered(PLAY[0], "dice")
    with pytest.raises(RecordError) as error:
        replay(record)
    assert "\n" not in str(error.value)


def test_replay_refuses_a_changed_log() -> None:
    data = json.loads(PLAY[1])
    choices = next(e for e in data["events"] if e["kind"] == "play")
    choices["choices"] += 1
    with pytest.raises(RecordError, match=r"^event \d+ differs"):
        replay(from_json(data))


def test_replay_steps_stop_at_each_decision_in_its_position() -> None:
    record = from_json(json.loads(PLAY[0]))
    run = Replay(record)
    steps = list(run)
    decided = [e for e in record.events if e.kind == "play" and e.choices > 1]
    assert len([s for s in steps if s.action is not None and s.action.kind == "play"]) == len(
        decided
    )
    assert all(s.answer is not None for s in steps)
    assert run.game.is_over
    every = list(Replay(record, auto_forced=False))
    assert len([s for s in every if s.action is not None]) == len(record.actions())


def test_from_json_refuses_what_is_not_a_record() -> None:
    with pytest.raises(RecordError, match="neither"):
        from_json({"variant": "backgammon"})
    data = json.loads(PLAY[0])
    data["events"][0]["kind"] = "teleport"
    with pytest.raises(RecordError, match="unknown event kind 'teleport'"):
        from_json(data)


def test_mat_export_from_records_is_unchanged() -> None:
    """The .mat that `nardy play --mat` wrote for the first match of the shipped backgammon match
    (tests/data/records/match-bg-1.mat), written again from the records of its games."""
    records = [from_json(json.loads(line)) for line in PLAY]
    match = [r for r in records if r.match.length and r.variant == "backgammon" and r.index == 0]
    assert match
    players = (match[0].players[0].name, match[0].players[1].name)
    text = write_mat(mat_record(match, players, match[0].match.length))
    assert text == (DATA / "match-bg-1.mat").read_text(encoding="utf-8")


def test_mat_reads_back_into_records_that_write_the_same_mat() -> None:
    text = (DATA / "match-bg-1.mat").read_text(encoding="utf-8")
    parsed = parse_mat(text)
    records = from_mat(parsed, "match-bg-1.mat")
    assert [r.match.score for r in records] == [g.score_before for g in parsed.games]
    again = write_mat(mat_record(records, parsed.players, parsed.match_length))
    assert again == text
    for record in records:
        game = Replay(record).run()
        assert game.is_over and game.result is not None
        assert record.outcome is not None and game.result.winner == record.outcome.winner


def test_match_info_post_crawford() -> None:
    assert not MatchInfo().post_crawford
    assert MatchInfo(5, (4, 2), crawford=True).board_score() == ((4, 2), 5, True)
    assert not MatchInfo(5, (4, 2), crawford=True).post_crawford
    assert MatchInfo(5, (4, 2)).post_crawford
    assert not MatchInfo(1).post_crawford  # a 1-point match has no Crawford game
    assert MatchInfo(5, (1, 2)).away(1) == 3
    assert dataclasses.replace(MatchInfo(), length=3).board_score() == ((0, 0), 3, False)
