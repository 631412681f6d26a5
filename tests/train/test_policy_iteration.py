"""Policy-iteration training (`nardy train --method policy-iteration`): samples, fit, determinism."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="training needs numpy (pip install 'nardy[neural]')")

from nardy.bots import HeuristicBot  # noqa: E402
from nardy.bots.neural import NeuralBot  # noqa: E402
from nardy.core import load_variant  # noqa: E402
from nardy.core.dice import SeededDice  # noqa: E402
from nardy.core.game import CubeSettings, Game  # noqa: E402
from nardy.encoding import encode  # noqa: E402
from nardy.engines.net import PRIOR_SCALE, ValueNet, scale_for  # noqa: E402
from nardy.train.policy_iteration import (  # noqa: E402
    IterationConfig,
    Samples,
    fit,
    game_seed,
    initial_net,
    play_samples,
    train,
)


def _heuristic_game(variant_name: str, seed: int) -> tuple[list[tuple[int, object]], Game]:
    """The same self-play game played independently (one heuristic bot for both sides), and the
    chosen results that end their mover's turn, read from the game's record: the event after the
    play is the opponent's roll or the game's end. Not a sample: a play followed
    by the same player's next stage or re-roll, or by a transfer of steps (§2.8–§2.10)."""
    variant = load_variant(variant_name)
    bot = HeuristicBot(seed)
    bot.bind(variant)
    game = Game(variant, SeededDice(seed), cube=CubeSettings())
    made: list[tuple[int, object, int]] = []
    while (decision := game.decision) is not None:
        index = bot.choose_play(decision)
        made.append((decision.player, decision.plays[index].result, len(game.events)))
        game.decide(index)
    chosen: list[tuple[int, object]] = []
    for mover, result, logged in made:
        assert game.events[logged].kind == "play" and game.events[logged].player == mover
        following = game.events[logged + 1] if logged + 1 < len(game.events) else None
        ends = following is None or following.kind == "end"
        if ends or (following.kind == "roll" and following.player != mover):
            chosen.append((mover, result))
    return chosen, game


@pytest.mark.parametrize("variant_name", ["long", "backgammon", "khachapuri", "giul", "gulbar"])
def test_samples_are_the_chosen_results_with_the_movers_points(variant_name: str) -> None:
    """Iteration 0 is heuristic self-play: one sample per decision whose result ends the turn, the
    chosen result's encoding and the points its mover won (+) or lost (−) ÷ the variant's scale."""
    variant = load_variant(variant_name)
    samples = play_samples(variant, None, seed=5, iteration=0, games=range(2, 4))
    offset = 0
    for index in (2, 3):
        chosen, game = _heuristic_game(variant_name, game_seed(5, 0, index))
        result = game.result
        assert result is not None
        rows = slice(offset, offset + len(chosen))
        assert list(samples.games[rows]) == [index] * len(chosen)
        for row, (mover, position) in enumerate(chosen, start=offset):
            expected = result.points / scale_for(variant) * (1 if mover == result.winner else -1)
            assert samples.targets[row] == pytest.approx(expected)
            assert np.array_equal(samples.inputs[row, :-1], encode(position).astype(np.float32))
            prior = HeuristicBot(0, variant=variant).evaluate(position) / PRIOR_SCALE
            assert samples.inputs[row, -1] == pytest.approx(prior, rel=1e-6)
        offset += len(chosen)
    assert offset == len(samples.targets)


def test_fit_lowers_the_held_out_error_and_keeps_the_best_epoch() -> None:
    """A target the network can represent (a function of the board) is learnt; the kept epoch is
    the one of lowest held-out error."""
    rng = np.random.default_rng(0)
    inputs = (rng.random((4_000, 197)) < 0.3).astype(np.float32)
    targets = np.tanh(inputs[:, :20].sum(axis=1) - 6.0).astype(np.float32)
    samples = Samples(inputs, targets, np.arange(4_000) // 10)
    net = initial_net(samples, 16, seed=1)
    config = IterationConfig("long", epochs=5, learning_rate=3e-3)
    fitted, losses, kept = fit(net, samples, config, np.random.default_rng(2))
    assert len(losses) == 6 and kept == int(np.argmin(losses))
    assert losses[kept] < 0.5 * losses[0]
    held_out = samples.games % 20 == 0
    errors = fitted.values(inputs[held_out].astype(np.float64)) - targets[held_out]
    assert float(np.mean(errors**2)) == pytest.approx(losses[kept], rel=1e-6)


@pytest.mark.slow  # training
def test_training_is_deterministic_resumable_and_independent_of_workers(tmp_path: Path) -> None:
    variant = load_variant("khachapuri")
    config = IterationConfig("khachapuri", iterations=2, games=12, seed=3, epochs=2, eval_games=0)
    whole = train(variant, config, tmp_path / "a.npz")
    in_two = train(variant, config, tmp_path / "b.npz", workers=2)
    train(variant, replace(config, iterations=1), tmp_path / "c.npz")
    resumed = train(variant, config, tmp_path / "c.npz", resume=True)
    for other in (in_two, resumed):
        for key, array in whole.params().items():
            assert np.array_equal(array, other.params()[key]), key
    assert resumed.meta["iterations_done"] == 2 and resumed.meta["games"] == 24
    assert [item["policy"] for item in resumed.meta["history"]] == [
        "heuristic",
        "network of iteration 1",
    ]
    # The written file is a weights file the bot loads.
    loaded = ValueNet.load(tmp_path / "a.npz")
    assert np.array_equal(loaded.w, whole.w) and loaded.meta["method"] == "policy-iteration"
    with pytest.raises(ValueError, match="games=12, not 13"):
        train(variant, replace(config, games=13), tmp_path / "c.npz", resume=True)


def _nardy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nardy", *args], capture_output=True, text=True, check=False
    )


@pytest.mark.slow  # training
def test_train_command_by_policy_iteration(tmp_path: Path) -> None:
    out = tmp_path / "k.npz"
    done = _nardy(
        "train", "--variant", "khachapuri", "--games", "6", "--eval-games", "2",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "khachapuri iteration 1/1" in done.stderr
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["method"] == "policy-iteration" and meta["games"] == 6
    # The command's defaults are the documented recipe (docs/bots.md), those of IterationConfig.
    recipe = IterationConfig("khachapuri")
    assert (recipe.iterations, recipe.hidden, recipe.epochs) == (1, 128, 8)
    for key in ("iterations", "hidden", "epochs", "batch", "learning_rate", "explore"):
        assert meta["config"][key] == getattr(recipe, key), key
    assert meta["config"]["candidates"] == list(recipe.candidates)
    assert meta["history"][0]["evaluation"]["played"] == 2
    wrong = _nardy("train", "--variant", "long", "--alpha", "0.1", "--out", str(out))
    assert wrong.returncode == 2 and "--alpha applies to --method td only" in wrong.stderr
    wrong = _nardy(
        "train", "--variant", "long", "--method", "td", "--epochs", "3", "--out", "x.npz"
    )
    assert wrong.returncode == 2 and "--epochs applies to --method policy-iteration" in wrong.stderr
    assert "Traceback" not in wrong.stderr


def test_a_short_list_lets_the_network_re_rank_only_the_heuristics_best_plays() -> None:
    """A network that prefers the heuristic's worst play plays it with every play allowed, and the
    heuristic's own choice when it may re-rank only the heuristic's best play (candidates = 1)."""
    variant = load_variant("long")
    hidden = 4
    contrary = ValueNet(
        np.zeros((hidden, 197)), np.zeros(hidden), np.zeros(hidden), 0.0, -1.0, {"prior": "linear"}
    )
    heuristic = HeuristicBot(0, variant=variant)
    game = Game(variant, SeededDice(4), cube=CubeSettings())
    checked = 0
    while (decision := game.decision) is not None and checked < 20:
        values = [heuristic.evaluate(play.result) for play in decision.plays]
        if len(set(values)) == len(values) > 2:
            contrary.meta["candidates"] = 0
            bot = NeuralBot(0, variant=variant)
            bot.bind(variant, contrary)
            assert bot.choose_play(decision) == values.index(min(values))
            contrary.meta["candidates"] = 1
            assert bot.choose_play(decision) == values.index(max(values))
            contrary.meta["candidates"] = 2
            second = sorted(values)[-2]
            assert bot.choose_play(decision) == values.index(second)
            checked += 1
        game.decide(heuristic.choose_play(decision))
    assert checked > 5


@pytest.mark.slow  # training
def test_the_best_short_list_is_kept(tmp_path: Path) -> None:
    variant = load_variant("khachapuri")
    config = IterationConfig(
        "khachapuri", games=8, seed=2, epochs=1, eval_games=4, candidates=(0, 1, 3)
    )
    net = train(variant, config, tmp_path / "k.npz")
    trials = net.meta["history"][0]["candidates"]
    assert sorted(trials) == ["0", "1", "3"]
    best = max(trials, key=lambda k: trials[k]["points"])
    assert trials[str(net.meta["candidates"])]["points"] == trials[best]["points"]
    assert json.loads((tmp_path / "k.json").read_text())["candidates"] == net.meta["candidates"]
    bad = _nardy("train", "--variant", "long", "--candidates", "2,x", "--out", "x.npz")
    assert bad.returncode == 2 and "not a list of distinct whole numbers" in bad.stderr
