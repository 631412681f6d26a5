"""nardy.analysis: N-ply against brute force, ranking, luck (exactly zero in expectation),
the unbiased luck-adjusted estimator, cube decisions and `nardy analyze` on real records."""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from nardy.analysis.cube import analyse_cube, probabilities_from_equity
from nardy.analysis.game import mark
from nardy.bots import make_bot
from nardy.bots.base import Bot
from nardy.cli import cli
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings, Game, PlayDecision
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.engines import MoveFilter, Searcher, make_evaluator
from nardy.engines.evaluator import Evaluator, Probabilities
from nardy.engines.search import ROLLS

NO_FILTER = MoveFilter(extra=10_000, threshold=math.inf)


class HashEvaluator:
    """A deliberately bad evaluator: a fixed pseudo-random equity in ±1 per position."""

    name = "hash"

    def afterstate_equities(self, positions: Sequence[Position]) -> np.ndarray:
        return np.array(
            [
                int.from_bytes(hashlib.blake2b(p.id().encode(), digest_size=4).digest(), "big")
                / 2**31
                - 1.0
                for p in positions
            ]
        )

    def probabilities(self, position: Position) -> Probabilities | None:
        return None


def _bearoff(variant: Variant, mover: dict[int, int], opponent: dict[int, int]) -> Position:
    return Position.from_sides(
        mover,
        {25 - p: n for p, n in opponent.items()},
        checkers=variant.checkers,
    )


@pytest.fixture(scope="module")
def backgammon() -> Variant:
    return load_variant("backgammon")


def _v0(variant: Variant, evaluator: Evaluator, afterstate: Position) -> float:
    """The brute-force 0-ply value: the exact game value when the game is over."""
    if afterstate.off[0] == variant.checkers:
        return float(variant.game_value(variant.loser_side(afterstate, 1)))
    return float(evaluator.afterstate_equities([afterstate])[0])


def _brute(
    variant: Variant,
    evaluator: Evaluator,
    afterstate: Position,
    ply: int,
    *,
    choose_at_0: bool = False,
) -> float:
    """``V_ply`` by plain recursion over the 36 ordered rolls, no batching: each reply the best
    by ``V_{ply-1}``, or (``choose_at_0``) the best by ``V_0`` valued at ``V_{ply-1}``."""
    if ply == 0 or afterstate.off[0] == variant.checkers:
        return _v0(variant, evaluator, afterstate)
    opponent = variant.flip(afterstate)
    total = 0.0
    for a in range(1, 7):
        for b in range(1, 7):
            dice = (a, b) if a != b else (a,) * 4
            results = [play.result for play in variant.legal_plays(opponent, dice)]
            if choose_at_0:
                best = max(results, key=lambda r: _v0(variant, evaluator, r))
                total += _brute(variant, evaluator, best, ply - 1, choose_at_0=True)
            else:
                total += max(_brute(variant, evaluator, r, ply - 1) for r in results)
    return -total / 36


@pytest.mark.parametrize("ply", [1, 2])
def test_n_ply_agrees_with_brute_force(backgammon: Variant, ply: int) -> None:
    evaluator = HashEvaluator()
    searcher = Searcher(backgammon, evaluator, NO_FILTER, NO_FILTER)
    gnubg_style = Searcher(backgammon, evaluator)
    afterstates = [
        _bearoff(backgammon, {1: 1, 3: 1}, {2: 2}),
        _bearoff(backgammon, {4: 1, 6: 1}, {1: 1, 5: 1}),
        _bearoff(backgammon, {2: 2}, {6: 1, 4: 1}),
    ]
    got = searcher.values(afterstates, ply)
    for position, value in zip(afterstates, got, strict=True):
        assert value == pytest.approx(_brute(backgammon, evaluator, position, ply), abs=1e-12)
    # The default: replies chosen at 0-ply, valued at ply - 1.
    got = gnubg_style.values(afterstates, ply)
    for position, value in zip(afterstates, got, strict=True):
        expected = _brute(backgammon, evaluator, position, ply, choose_at_0=True)
        assert value == pytest.approx(expected, abs=1e-12)


def test_filtered_search_keeps_what_gnubg_keeps() -> None:
    values = np.array([0.1, 0.5, 0.45, 0.2, 0.34, 0.33])
    # The best, then up to `extra` more within `threshold` of it.
    assert MoveFilter(extra=8, threshold=0.16).keep(values) == [1, 2, 4]
    assert MoveFilter(extra=1, threshold=0.16).keep(values) == [1, 2]


@pytest.mark.parametrize("name", ["khachapuri", "long", "backgammon"])
def test_a_filtered_ranking_puts_the_plays_searched_deeper_first(name: str) -> None:
    # gnubg lists the moves of its deepest evaluation first: a play the filter left at 0-ply must
    # not outrank the searched ones because the search lowered their (optimistic) values.
    variant = load_variant(name)
    searcher = Searcher(variant, make_evaluator("neural", variant))
    # Seed 4: with khachapuri's shipped net the case the order is for comes up in its second
    # decision (seed 3 met it with the net before, not with this one).
    game = Game(variant, SeededDice(4), cube=CubeSettings())
    bots = (make_bot("neural", 1), make_bot("neural", 2))
    for colour, bot in enumerate(bots):
        bot.start_game(variant, colour)
    left_above = 0  # decisions where a 0-ply value stands above the best searched one
    # khachapuri's 1-ply ranking takes seconds a decision (long's and backgammon's a tenth): its
    # first 4 decisions, the second of which has the case the order is for.
    for _ in range(4 if name == "khachapuri" else 12):
        decision = game.decision
        assert isinstance(decision, PlayDecision)
        ranking = searcher.rank(decision.position, decision.segment.dice, 1)
        candidates = [r for r in ranking if r.candidate]
        assert ranking[0].ply == 1
        assert [r.ply for r in candidates] == sorted((r.ply for r in candidates), reverse=True)
        best = ranking[0].equity
        assert best == max(r.equity for r in ranking if r.ply == 1 and r.candidate)
        left_above += any(r.ply == 0 and r.equity > best for r in candidates)
        game.decide(bots[decision.player].choose_play(decision))
    if name == "khachapuri":
        assert left_above > 0  # the case the order is for came up


@pytest.mark.parametrize("name", ["backgammon", "long", "giul", "gulbar"])
def test_ranking_best_is_the_argmax(name: str) -> None:
    variant = load_variant(name)
    searcher = Searcher(variant, make_evaluator("heuristic", variant))
    rng = random.Random(3)
    position = variant.start_position()
    for _ in range(12):  # walk a random game, ranking each segment
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        dice = dice if dice[0] != dice[1] else (dice[0],) * 4
        plays = variant.legal_plays(position, dice)
        ranking = searcher.rank(position, dice)
        direct = searcher.values([p.result for p in plays])
        assert ranking[0].equity == pytest.approx(float(direct.max()))
        assert sorted(r.index for r in ranking) == list(range(len(plays)))
        assert [r.equity for r in ranking] == sorted((r.equity for r in ranking), reverse=True)
        assert ranking[0].loss == 0 and all(r.loss >= 0 for r in ranking)
        position = variant.flip(rng.choice(list(plays)).result)
        if variant.is_finished(variant.flip(position)):
            break


def _expected_luck(searcher: Searcher, position: Position, turns: int) -> float:
    """E[the mover's luck minus the opponent's] over ``turns`` turns of best play, enumerated."""
    variant = searcher.variant
    total = 0.0
    values = searcher.roll_values(position)
    mean = sum(w * values[r] for r, w in ROLLS)
    for roll, weight in ROLLS:
        luck = values[roll] - mean
        later = 0.0
        if turns > 1:
            dice = roll if roll[0] != roll[1] else (roll[0],) * 4
            best = searcher.rank(position, dice)[0]
            after = variant.legal_plays(position, dice)[best.index].result
            if not variant.is_finished(after):
                later = -_expected_luck(searcher, variant.flip(after), turns - 1)
        total += weight * (luck + later)
    return total


@pytest.mark.parametrize("evaluator", ["heuristic", "hash"])
def test_luck_is_zero_in_expectation_exactly(backgammon: Variant, evaluator: str) -> None:
    chosen: Evaluator = (
        HashEvaluator() if evaluator == "hash" else make_evaluator(evaluator, backgammon)
    )
    searcher = Searcher(backgammon, chosen)
    position = _bearoff(backgammon, {1: 1, 4: 1, 6: 1}, {2: 1, 3: 2})
    assert _expected_luck(searcher, position, 3) == pytest.approx(0.0, abs=1e-12)
    # And a single roll's luck is not identically zero (the test could fail).
    assert max(abs(searcher.luck(position, r)) for r, _ in ROLLS) > 0.01


@pytest.mark.parametrize("name", ["giul", "gulbar", "mad"])
def test_luck_of_turn_plans_averages_to_zero(name: str) -> None:
    # Progressions and re-rolls: the luck of the 21 rolls weighted by their chances is 0, and the
    # mean of the roll values is the 1-ply equity.
    variant = load_variant(name)
    searcher = Searcher(variant, make_evaluator("heuristic", variant))
    position = variant.start_position()
    lucks = {roll: searcher.luck(position, roll) for roll, _ in ROLLS}
    assert sum(w * lucks[r] for r, w in ROLLS) == pytest.approx(0.0, abs=1e-12)
    values = searcher.roll_values(position)
    assert searcher.equity(position, 1) == pytest.approx(sum(w * values[r] for r, w in ROLLS))
    assert len({round(v, 9) for v in lucks.values()}) > 1


def _simulate(
    variant: Variant, searcher: Searcher, start: Position, rng: random.Random
) -> tuple[float, float]:
    """One game from ``start`` (first mover's view) played by the heuristic evaluation's best
    plays: (points of the first mover, his luck minus the opponent's)."""
    policy = Searcher(variant, make_evaluator("heuristic", variant))
    position, sign, luck = start, 1.0, 0.0
    while True:
        roll = (rng.randint(1, 6), rng.randint(1, 6))
        luck += sign * searcher.luck(position, roll)
        dice = roll if roll[0] != roll[1] else (roll[0],) * 4
        index = policy.best_play(position, dice)
        after = variant.legal_plays(position, dice)[index].result
        if variant.is_finished(after):
            value = variant.game_value(variant.loser_side(after, 1))
            return sign * value, luck
        position, sign = variant.flip(after), -sign


@pytest.mark.parametrize(
    "games", [pytest.param(200, id="200"), pytest.param(3000, id="3000", marks=pytest.mark.slow)]
)
def test_luck_adjusted_estimator_is_unbiased(backgammon: Variant, games: int) -> None:
    # A short race played many times: the adjusted result (points − luck) has the same mean as the
    # raw one whatever the evaluator — with a deliberately bad one too (it only reduces less).
    start = _bearoff(backgammon, {1: 2, 5: 1, 6: 1}, {1: 1, 3: 1, 6: 2})
    rng = random.Random(11)
    for evaluator in (make_evaluator("heuristic", backgammon), HashEvaluator()):
        searcher = Searcher(backgammon, evaluator)
        pairs = [_simulate(backgammon, searcher, start, rng) for _ in range(games)]
        lucks = np.array([luck for _, luck in pairs])
        # E[luck] = 0: the mean luck is within 4 standard errors of 0.
        se = lucks.std(ddof=1) / math.sqrt(games)
        assert abs(lucks.mean()) < 4 * se, (evaluator.name, lucks.mean(), se)


def test_cube_decisions_follow_the_take_and_double_points() -> None:
    assert analyse_cube(probabilities_from_equity(0.0), "centre").best == "no double"
    assert analyse_cube(probabilities_from_equity(0.5), "centre").best == "double, take"
    assert analyse_cube(probabilities_from_equity(0.7), "centre").best == "double, pass"
    # A pass costs the taker 1 at most; taking a hopeless double costs more.
    hopeless = analyse_cube(probabilities_from_equity(0.9), "centre")
    assert hopeless.take_loss(True) > 0.16 and hopeless.take_loss(False) == 0.0
    assert hopeless.double_loss(False) > 0 and hopeless.double_loss(True) == 0.0


def test_marks_use_gnubgs_thresholds() -> None:
    assert [mark(x) for x in (0.0, 0.039, 0.04, 0.08, 0.159, 0.16, 1.0)] == [
        None,
        None,
        "doubtful",
        "error",
        "error",
        "blunder",
        "blunder",
    ]


def _play(tmp_path: Path, variant: str, *extra: str) -> Path:
    out = tmp_path / f"{variant}.jsonl"
    result = CliRunner().invoke(
        cli,
        [
            "play",
            "-v",
            variant,
            "--bots",
            "neural,heuristic",
            "--games",
            "1",
            "--seed",
            "5",
            "--jsonl",
            str(out),
            "-q",
            "--json",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("variant", ["backgammon", pytest.param("giul", marks=pytest.mark.slow)])
def test_analyze_a_play_record(tmp_path: Path, variant: str) -> None:
    record_path = _play(tmp_path, variant)
    record = json.loads(record_path.read_text().splitlines()[0])
    result = CliRunner().invoke(cli, ["analyze", str(record_path), "--json", "--show", "all"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)  # (stderr: the warning that neural judges itself)
    (game,) = report["games"]
    plays = [d for d in game["decisions"] if d["kind"] == "play"]
    # Every play of the record is a decision, in order, with what was played.
    assert [d["played"] for d in plays] == [
        e["play"] for e in record["events"] if e["kind"] == "play"
    ]
    for d in plays:
        assert d["loss"] == pytest.approx(max(0.0, d["equity_best"] - d["equity_played"]), abs=1e-4)
        assert d["ranking"][0]["play"] == d["best"]
    winner = record["result"]["winner"]
    players = game["players"]
    sign = 1 if winner == "White" else -1
    white, black = players["White"], players["Black"]
    assert white["points"] == sign * record["result"]["points"]
    assert white["luck_adjusted"] == pytest.approx(
        white["points"] - white["luck"] + black["luck"], abs=1e-3
    )
    lucks = [d["luck"] for d in game["decisions"] if "luck" in d]
    assert lucks and any(abs(x) > 0 for x in lucks)
    assert set(report["bots"]) == {"neural", "heuristic"}


def test_analyze_mat_and_arena_records(tmp_path: Path) -> None:
    mat = tmp_path / "game.mat"
    runner = CliRunner()
    done = runner.invoke(
        cli,
        [
            "play",
            "-v",
            "backgammon",
            "--bots",
            "heuristic,random",
            "--games",
            "1",
            "--seed",
            "2",
            "--match",
            "3",
            "--mat",
            str(mat),
            "--jsonl",
            str(tmp_path / "m.jsonl"),
            "-q",
            "--json",
        ],
    )
    assert done.exit_code == 0, done.output
    result = runner.invoke(cli, ["analyze", str(mat), "--json", "--evaluator", "heuristic"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["games"] and all(g["complete"] for g in report["games"])
    # An arena record holds the kernel record under "game".
    line = json.loads((tmp_path / "m.jsonl").read_text().splitlines()[0])
    arena = {
        "game_id": "g1",
        "variant": line["variant"],
        "options": line["options"],
        "white": {"name": "alpha"},
        "black": {"name": "beta"},
        "result": {"winner": line["result"]["winner"], "points": line["result"]["points"]},
        "decisions": [],
        "game": {"rolls": line["rolls"], "events": line["events"]},
    }
    path = tmp_path / "arena.json"
    path.write_text(json.dumps(arena))
    result = runner.invoke(cli, ["analyze", str(path), "--evaluator", "heuristic", "-q"])
    assert result.exit_code == 0, result.output
    assert "alpha" in result.output and "beta" in result.output
    # The table of `nardy arena standings --analysis` (nardy.analysis.report), the same columns.
    wide = runner.invoke(
        cli, ["analyze", str(path), "--evaluator", "heuristic", "-q"], env={"COLUMNS": "200"}
    )
    assert "luck-adjusted/game" in wide.output and "??/?/?!" in wide.output
    # The same game stored in a tournament database.
    from nardy.arena.records.storage import GameRow, open_store

    db = tmp_path / "arena.db"
    store = open_store(db)
    store.open_tournament("t1", "ladder", {}, {}, 1)
    winner = 0 if line["result"]["winner"] == "White" else 1
    row = GameRow(
        "t1",
        "g1",
        "u1",
        "main",
        "alpha",
        "beta",
        0,
        0,
        0,
        "alpha",
        "beta",
        1,
        winner,
        line["result"]["points"],
        "borne_off",
        0.0,
    )
    store.save_game(row, arena)
    store.close()
    result = runner.invoke(
        cli,
        ["analyze", "--db", str(db), "--tournament", "t1", "--evaluator", "heuristic", "--json"],
    )
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.output)["bots"]) == {"alpha", "beta"}
    result = runner.invoke(cli, ["analyze", "--db", str(db), "--tournament", "nope"])
    assert result.exit_code != 0 and "no tournament 'nope'" in result.output


def test_analyze_rejects_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hello": 1}\n')
    result = CliRunner().invoke(cli, ["analyze", str(bad)])
    assert result.exit_code != 0 and "neither" in result.output
    assert "Traceback" not in result.output
    result = CliRunner().invoke(cli, ["analyze"])
    assert result.exit_code != 0 and "RECORD" in result.output


@pytest.mark.parametrize(
    ("variant_name", "search_net"),
    [
        ("fevga", "neural"),  # an outcome net ships: its value net's refit is not its own
        ("long", "neural"),  # the same
        ("backgammon", "neural"),  # a refit ships, not flagged: the search reads the play net
        ("mad", "neural"),  # no refit ships
    ],
)
def test_neural_bot_takes_a_search_depth(variant_name: str, search_net: str) -> None:
    """``neural:1`` chooses the 1-ply search's best play, searching over the shipped net's
    self-consistent refit where one ships flagged for search, else over the shipped net."""
    from nardy.bots import make_bot
    from nardy.bots.neural import NeuralBot

    options = {"cube": False} if variant_name == "backgammon" else None  # plays only
    variant = load_variant(variant_name, options)
    bot = make_bot("neural:1", 3)
    assert bot.name == "neural:1"
    bot.start_game(variant, 0)
    assert isinstance(bot, NeuralBot)
    assert (bot.search_weights() is not None) == (search_net == "neural-consistent")
    searcher = Searcher(variant, make_evaluator(search_net, variant))
    _plays_the_searchers_choice(bot, searcher, seed=4, decisions=6)
    with pytest.raises(ValueError, match="ply 0-3"):
        make_bot("neural:7")


def test_neural_bot_searches_over_a_weights_file(tmp_path: Path) -> None:
    """``neural:PLY:FILE`` searches ``PLY`` deep over the net in FILE (not the shipped one): its
    choices are the 1-ply ranking's over that file, and differ from ``neural:1``'s somewhere."""
    from nardy.bots.neural import NeuralBot
    from nardy.engines.net import shipped_weights

    variant = load_variant("long")
    other = shipped_weights("long").with_name("long.value.npz")  # the first round's value net
    bot = make_bot(f"neural:1:{other}", 3)
    assert isinstance(bot, NeuralBot)
    assert (bot.name, bot.ply, bot.weights_path) == ("neural:1", 1, other)
    shipped = make_bot("neural:1", 3)
    bot.start_game(variant, 0)
    shipped.start_game(variant, 0)
    searcher = Searcher(variant, make_evaluator(f"neural:{other}", variant))
    assert _plays_the_searchers_choice(bot, searcher, seed=5, decisions=8, beside=shipped) > 0


def _plays_the_searchers_choice(
    bot: Bot, searcher: Searcher, *, seed: int, decisions: int, beside: Bot | None = None
) -> int:
    """Play a game by ``bot`` until ``decisions`` choices among two plays or more, each checked to
    be ``searcher``'s 1-ply best; returns at how many of them ``beside`` chose otherwise."""
    game = Game(searcher.variant, SeededDice(seed))
    checked = differ = 0
    while game.decision is not None and checked < decisions:
        decision = game.decision
        assert isinstance(decision, PlayDecision)
        index = bot.choose_play(decision)
        if len(decision.plays) > 1:
            segment = decision.segment
            ranking = searcher.rank(decision.position, segment.dice, 1, kind=segment.kind)
            assert index == ranking[0].index
            if beside is not None:
                differ += index != beside.choose_play(decision)
            checked += 1
        game.decide(index)
    assert checked == decisions
    return differ


def test_gnubg_evaluator_agrees_with_gnubgs_own_choice() -> None:
    # Cross-check: nardy's 0-ply ranking with the gnubg evaluator against gnubg's own move choice
    # (findbestmoves, cubeless 0-ply) on the decisions of heuristic-vs-random games.
    pytest.importorskip("gnubg")
    from nardy.bots import HeuristicBot, RandomBot
    from nardy.bots.gnubg_bot import GnubgBot
    from nardy.core.dice import SeededDice
    from nardy.core.game import CubeSettings, Game

    variant = load_variant("backgammon")
    searcher = Searcher(variant, make_evaluator("gnubg", variant))
    gnubg = GnubgBot(0, 0, cubeful=False)
    same = tied = total = 0
    for seed in range(5):
        game = Game(variant, SeededDice(seed), cube=CubeSettings())
        bots = (HeuristicBot(seed, variant=variant), RandomBot(seed))
        while game.decision is not None:
            decision = game.decision
            if len(decision.plays) > 1:
                total += 1
                ranking = searcher.rank(decision.position, decision.segment.dice)
                theirs = gnubg.choose_play(decision)
                if decision.plays[ranking[0].index].result == decision.plays[theirs].result:
                    same += 1
                elif next(r for r in ranking if r.index == theirs).loss < 1e-6:
                    tied += 1  # equal equities (e.g. every play loses the same gammon)
            game.decide(bots[decision.player].choose_play(decision))
    assert total > 100
    # Measured: 230 the same and 5 ties (equal equities up to gnubg's float32) of 235.
    assert same + tied == total
    assert same >= 0.95 * total
    # The opening 3-1 at 0-ply: gnubg makes the 5 point.
    assert searcher.rank(variant.start_position(), (3, 1))[0].text == "8/5 6/5"


@settings(max_examples=12, deadline=None)
@given(
    name=st.sampled_from(["backgammon", "long", "fevga", "giul", "mad", "trictrac"]),
    seed=st.integers(0, 10**6),
    turns=st.integers(0, 30),
)
def test_luck_averages_to_zero_anywhere(name: str, seed: int, turns: int) -> None:
    # From any position reached by random play: the roll-weighted luck is 0, the best roll's
    # luck is ≥ 0 and the worst's ≤ 0, and the pre-roll 1-ply equity is the mean roll value.
    variant = load_variant(name)
    searcher = Searcher(variant, make_evaluator("heuristic", variant))
    rng = random.Random(seed)
    position = variant.start_position()
    for _ in range(turns):
        a, b = rng.randint(1, 6), rng.randint(1, 6)
        plays = variant.legal_plays(position, (a, b) if a != b else (a,) * 4)
        after = rng.choice(list(plays)).result
        if variant.is_finished(after):
            break
        position = variant.flip(after)
    values = searcher.roll_values(position)
    mean = sum(w * values[r] for r, w in ROLLS)
    lucks = [searcher.luck(position, r) for r, _ in ROLLS]
    assert sum(w * luck for (_, w), luck in zip(ROLLS, lucks, strict=True)) == pytest.approx(
        0.0, abs=1e-9
    )
    assert max(lucks) >= -1e-12 and min(lucks) <= 1e-12
    assert searcher.equity(position, 1) == pytest.approx(mean, abs=1e-9)


@pytest.mark.parametrize("name", ["backgammon", "long"])
def test_opening_throw_luck_is_zero_in_expectation(name: str) -> None:
    # Every opening throw (and, where the starter rolls anew, every first roll) replayed through
    # analyse_game: White's luck minus Black's (what the adjusted result subtracts) averages to
    # exactly 0 over them, though the starter's luck is not 0.
    from nardy.analysis.game import analyse_game
    from nardy.analysis.records import game_input
    from nardy.core.game import CubeSettings
    from nardy.core.record import Event, GameRecord, Setup

    variant = load_variant(name)
    searcher = Searcher(variant, make_evaluator("heuristic", variant))
    start = variant.start_position()
    numbers_used = variant.rules.turn.opening == "numbers_used"
    first_rolls = [None] if numbers_used else [(a, b) for a in range(1, 7) for b in range(1, 7)]
    total, lucks = 0.0, set()
    for white in range(1, 7):
        for black in range(1, 7):
            if white == black:
                continue
            starter = 0 if white > black else 1
            for first in first_rolls:
                roll = (white, black) if starter == 0 else (black, white)
                played = roll if first is None else first
                dice = played if played[0] != played[1] else (played[0],) * 4
                text = variant.legal_plays(start, dice)[0].text
                rolls = [(white, black)] + ([] if first is None else [first]) + [(1, 2)]
                record = GameRecord(
                    variant.name,
                    variant.options,
                    tuple(rolls),
                    (Event("play", starter, play=text),),
                    setup=Setup(None, CubeSettings()),
                )
                game = game_input("opening", record)
                analysis = analyse_game(game, searcher)
                assert not analysis.complete
                net = analysis.players[0].luck - analysis.players[1].luck
                total += net / (30 * len(first_rolls))
                lucks.add(round(analysis.players[starter].luck, 9))
    assert total == pytest.approx(0.0, abs=1e-12)
    assert len(lucks) > 1


@pytest.mark.parametrize(
    ("name", "seed"), [("backgammon", 5), pytest.param("long", 2, marks=pytest.mark.slow)]
)
def test_adjusted_result_is_skill_plus_evaluator_inconsistency(name: str, seed: int) -> None:
    # Without a cube the luck telescopes (docs/analysis.md, "why the ratio"): a player's
    # luck-adjusted result is the opponent's total loss minus his own plus, for every turn's
    # afterstate a (not the final one), ±(V0(a) − V1(a)): − on his turns, + on the opponent's.
    # Every roll's luck, the opening's included, must be counted for this to hold.
    from nardy.analysis.game import analyse_game
    from nardy.analysis.records import from_kernel_record
    from nardy.bots import make_bot, play_game
    from nardy.core.dice import SeededDice
    from nardy.core.game import CubeSettings

    variant = load_variant(name)
    bots = (make_bot("heuristic", seed), make_bot("random", seed))
    record = play_game(variant, bots, SeededDice(seed), cube=CubeSettings()).record()
    game = from_kernel_record("g", record, ("heuristic", "random"), CubeSettings())
    searcher = Searcher(variant, make_evaluator("heuristic", variant))
    analysis = analyse_game(game, searcher)
    assert analysis.complete
    plays = [d for d in analysis.decisions if d.kind == "play"]
    inconsistency = [0.0, 0.0]
    for decision in plays[:-1]:
        position = Position.from_id(decision.position, variant.checkers)
        after = variant.legal_plays(position, decision.dice).find(decision.played).result
        v0, v1 = (float(searcher.values([after], ply)[0]) for ply in (0, 1))
        inconsistency[decision.player] += v0 - v1
    white, black = analysis.players
    assert white.adjusted == pytest.approx(
        black.total_loss - white.total_loss - inconsistency[0] + inconsistency[1], abs=1e-9
    )
    assert abs(white.luck - black.luck) > 0.1  # the luck was not 0 to begin with


def test_analysis_without_luck_rates_the_same_decisions() -> None:
    # luck_ply=None (error rates alone, benchmarks/measure_error_order.py) skips the rolls' luck
    # and nothing else: the same decisions, losses and marks, and no luck anywhere.
    from nardy.analysis.game import analyse_game
    from nardy.analysis.records import from_kernel_record
    from nardy.bots import make_bot, play_game
    from nardy.core.dice import SeededDice
    from nardy.core.game import CubeSettings

    variant = load_variant("backgammon")
    bots = (make_bot("heuristic", 3), make_bot("random", 3))
    record = play_game(variant, bots, SeededDice(3), cube=CubeSettings()).record()
    game = from_kernel_record("g", record, ("heuristic", "random"), CubeSettings())
    searcher = Searcher(variant, make_evaluator("heuristic", variant))
    with_luck, without = analyse_game(game, searcher), analyse_game(game, searcher, luck_ply=None)
    assert [(d.played, d.loss, d.mark) for d in without.decisions] == [
        (d.played, d.loss, d.mark) for d in with_luck.decisions
    ]
    assert all(d.luck is None for d in without.decisions)
    assert any(d.luck is not None for d in with_luck.decisions)
    for a, b in zip(with_luck.players, without.players, strict=True):
        assert (b.total_loss, b.decisions, b.luck) == (a.total_loss, a.decisions, 0.0)
        assert b.adjusted == b.points


@pytest.mark.parametrize("ply", [0, 1])
def test_a_mother_end_is_valued_exactly_at_every_ply(ply: int) -> None:
    """RULES.md PL-05: with 6-5, ``7/1^`` and ``6/1^`` pin Black's lone mother while White's own
    24-point is empty, which ends the game at once, 2 points to White (§3.12.2). The search values
    those plays at exactly +2 and does not look past the end (1-ply used to ask the ended
    position for the opponent's plays: "the game is over: the mother rule ended it")."""
    import rules_cases as rc

    (case,) = [c for c in rc.load_cases() if c["id"] == "PL-05"]
    variant = load_variant("plakoto")
    position = Position.from_json(rc.case_position(case))
    searcher = Searcher(variant, make_evaluator("neural", variant))
    ranked = {play.text.replace("^", ""): play for play in searcher.rank(position, (6, 5), ply)}
    assert ranked["7/1"].equity == ranked["6/1"].equity == 2.0
    assert ranked["7/2 6/off"].equity < 2.0
