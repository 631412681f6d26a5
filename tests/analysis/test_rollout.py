"""Rollouts (nardy.analysis.rollout, `nardy rollout`): seeded, variance-reduced, exact where the
game is decided, and one clear error for bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from nardy.analysis.records import RecordError, read_records
from nardy.analysis.rollout import record_decision, rollout
from nardy.cli import cli
from nardy.core.errors import NardyError
from nardy.core.plugins import load_variant
from nardy.core.position import Position
from nardy.engines.evaluator import make_evaluator
from nardy.engines.search import Searcher

BACKGAMMON = load_variant("backgammon")
LONG = load_variant("long")


def test_same_seed_same_rollout_other_seed_other() -> None:
    start = BACKGAMMON.start_position()
    kwargs = {"evaluator": "heuristic", "trials": 4, "truncate": 2, "top": 2}
    first = rollout(BACKGAMMON, start, (3, 1), seed=7, **kwargs)  # type: ignore[arg-type]
    again = rollout(BACKGAMMON, start, (3, 1), seed=7, **kwargs)  # type: ignore[arg-type]
    other = rollout(BACKGAMMON, start, (3, 1), seed=8, **kwargs)  # type: ignore[arg-type]
    assert first.to_json() == again.to_json()
    assert first.to_json()["plays"] != other.to_json()["plays"]


def test_truncated_at_once_is_the_evaluators_value() -> None:
    # Truncated after 0 rolls, each trial is the opponent's 0-ply equity on roll, from the mover's
    # side: exactly the evaluator's value of the play's result, with no spread.
    start = LONG.start_position()
    found = rollout(LONG, start, (6, 5), evaluator="neural", trials=4, truncate=0, top=2)
    searcher = Searcher(LONG, make_evaluator("neural", LONG))
    plays = LONG.legal_plays(start, (6, 5))
    for play in found.plays:
        expected = float(searcher.values([plays[play.index].result], 0)[0])
        assert play.equity(False) == pytest.approx(expected, abs=1e-9)
        assert play.se(False) == 0.0


def test_variance_reduction_lowers_the_se_of_the_same_trials() -> None:
    # 48 trials 4 rolls deep of the two best plays: the SEs' ratios are 0.14 and 0.13 with the
    # net that learnt its forced turns (0.39 and 0.33 with the 128-unit net before it, 0.75 and
    # 0.73 where only 0.3 of the luck is taken off), the raw paired difference's SE 0.75 of the
    # unpaired one; 6 rolls deep and 3 plays took three times as long.
    found = rollout(
        BACKGAMMON,
        BACKGAMMON.start_position(),
        (4, 2),
        evaluator="neural",
        trials=48,
        truncate=4,
        top=2,
    )
    for play in found.plays:
        assert play.se(True) < 0.7 * play.se(False), (play.se(True), play.se(False))
    # The same dice for every play: the difference between two plays' results is known better
    # than either play on its own would let it be. (Once the luck is taken off, what is left of
    # each trial is mostly the net's own inconsistency, which the shared dice do not pair.)
    best, second = found.ranked()[:2]
    paired = found.difference_se(best, second, reduced=False)
    assert paired < math.hypot(best.se(False), second.se(False))


def test_certain_win_and_certain_loss_are_exact() -> None:
    # The mover bears off his last two checkers; the opponent has none off: a gammon, 2 points.
    win = Position.from_sides({1: 2}, {24: 15}, off=(13, 0))
    found = rollout(BACKGAMMON, win, (2, 1), evaluator="neural", trials=6)
    assert [p.equity() for p in found.plays] == [2.0]
    assert found.plays[0].se() == 0.0
    # The mover cannot get off; the opponent bears off his last checker whatever he rolls, with
    # the mover's checkers in his home board: a backgammon, 3 points (RULES.md §2.6).
    loss = Position.from_sides({23: 15}, {24: 1}, off=(0, 14))
    found = rollout(BACKGAMMON, loss, (2, 1), evaluator="neural", trials=6, top=5)
    for play in found.plays:
        assert play.equity(False) == -3.0
        assert play.equity(True) == pytest.approx(-3.0, abs=1e-9)


def test_bad_input_raises() -> None:
    start = BACKGAMMON.start_position()
    with pytest.raises(ValueError, match="two dice"):
        rollout(BACKGAMMON, start, (7, 1), evaluator="heuristic")
    with pytest.raises(ValueError, match="unknown evaluator"):
        rollout(BACKGAMMON, start, (3, 1), evaluator="nonesuch")
    finished = Position.from_sides({}, {24: 15}, off=(15, 0))
    with pytest.raises(NardyError):
        rollout(BACKGAMMON, finished, (3, 1), evaluator="heuristic")


def _record(tmp_path: Path) -> Path:
    out = tmp_path / "games.jsonl"
    tail = ["--jsonl", str(out), "-q"]
    result = CliRunner().invoke(
        cli,
        ["play", "-v", "long", "--bots", "heuristic,random", "--games", "1", "--seed", "3", *tail],
    )
    assert result.exit_code == 0, result.output
    return out


def test_record_decision_is_the_recorded_position_and_roll(tmp_path: Path) -> None:
    path = _record(tmp_path)
    (game,) = read_records(path)
    position, roll = record_decision(game, 1)
    # The first decision: the first roll after the opening throw, from the start position.
    events = json.loads(path.read_text().splitlines()[0])["events"]
    first = next(event for event in events if event["kind"] == "roll")
    assert position == LONG.start_position()
    assert list(roll) == first["dice"]
    with pytest.raises(RecordError, match="no decision 100000"):
        record_decision(game, 100000)


def test_cli_rollout_json_and_text(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["rollout", "4HPwATDgc/ABMA", "--dice", "3", "1", "--evaluator", "heuristic"]
    args += ["--trials", "4", "--truncate", "2", "--top", "2", "-q"]
    result = runner.invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["trials"] == 4 and len(data["plays"]) == 2 and data["dice"] == [3, 1]
    assert data["plays"][0]["equity"] >= data["plays"][1]["equity"]
    text = runner.invoke(cli, args)
    assert text.exit_code == 0 and "± " in text.output
    # A position id that starts with "-" is the POSITION, not an option.
    long_start = ["rollout", "------/-----o/------/-----O", "-v", "long", "--dice", "6", "5"]
    result = runner.invoke(cli, [*long_start, "--trials", "2", "--truncate", "1", "-q", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["plays"][0]["play"] == "24/18/13"
    record = _record(tmp_path)
    tail = ["--trials", "2", "--truncate", "1", "--json", "-q"]
    result = runner.invoke(
        cli,
        ["rollout", "--record", str(record), "--decision", "1", "--evaluator", "heuristic", *tail],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["variant"] == "long"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nonsense", "--dice", "3", "1"], "POSITION"),
        (["4HPwATDgc/ABMA", "--dice", "3", "1", "--evaluator", "nonesuch"], "unknown evaluator"),
        (["4HPwATDgc/ABMA"], "--dice"),
        (["4HPwATDgc/ABMA", "--dice", "3", "1", "-v", "nonesuch"], "--variant"),
    ],
)
def test_cli_bad_input_one_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["rollout", *args, "-q"])
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) <= 3


@pytest.mark.parametrize(
    "name",
    [
        "trictrac",
        "nardgammon",
        "mad",
        "gulbar",
        "mad_gulbar",
        "khachapuri",
        "fevga",
        "giul",
        "hypergammon",
        "portes",
        "plakoto",
    ],
)
def test_every_variant_rolls_out_a_double(name: str) -> None:
    # A double: re-rolls, progressions and handed-over steps are played by the kernel's turns.
    variant = load_variant(name)
    found = rollout(
        variant, variant.start_position(), (3, 3), evaluator="heuristic", trials=2, truncate=3
    )
    assert found.trials == 2 and found.plays
    assert all(math.isfinite(p.equity()) for p in found.plays)


@pytest.mark.parametrize("name", ["khachapuri", "backgammon"])
def test_keeping_the_first_rolls_luck_changes_no_trial(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The values of the throws from a trial's first rolls are kept and met again by later trials
    # (Searcher.throw_luck, remember); valued again at every throw, each trial is the same.
    import nardy.analysis.rollout as rollouts

    variant = load_variant(name)
    start = variant.start_position()
    kwargs = {"evaluator": "heuristic", "trials": 36, "truncate": 3, "top": 2, "seed": 3}
    kept = rollout(variant, start, (4, 4), **kwargs).to_json()  # type: ignore[arg-type]
    monkeypatch.setattr(rollouts, "_SHARED_ROLLS", 0)
    valued_again = rollout(variant, start, (4, 4), **kwargs).to_json()  # type: ignore[arg-type]
    assert kept == valued_again
    assert all(p["equity"] != p["plain_equity"] for p in kept["plays"])  # the luck was counted
