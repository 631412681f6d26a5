"""The batched trainer (nardy train --method batched-td) and its outcome net."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="training needs numpy")

from batched_runs import SMALL, run_small, same_weights  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from nardy.core import load_variant  # noqa: E402
from nardy.engines.outcome_net import (  # noqa: E402
    OutcomeNet,
    flip_outcomes,
    outcome_targets,
)
from nardy.train.batched import (  # noqa: E402
    BatchedConfig,
    _argmax_by_game,
    _Returns,
    checkpoint_path,
    train,
    versus_random,
)
from nardy.train.cli import train as train_command  # noqa: E402


def test_outcomes_seen_from_the_other_side() -> None:
    # Levels 3 (backgammon): [win>=1, win>=2, win>=3, lose>=2, lose>=3].
    won_gammon = outcome_targets(np.array([2.0]), 3)
    assert won_gammon.tolist() == [[1, 1, 0, 0, 0]]
    lost_backgammon = outcome_targets(np.array([-3.0]), 3)
    assert lost_backgammon.tolist() == [[0, 0, 0, 1, 1]]
    assert flip_outcomes(won_gammon, 3).tolist() == [[0, 0, 0, 1, 0]]
    assert outcome_targets(np.array([0.0]), 2).tolist() == [[0.5, 0, 0]]
    p = np.random.default_rng(1).random((4, 5)).astype(np.float32)
    assert np.allclose(flip_outcomes(flip_outcomes(p, 3), 3), p)
    net = OutcomeNet.initial(4, 3, np.random.default_rng(0), {"scale": 3.0})
    # Equity is the points' expectation: a certain gammon is +2, its flip −2.
    assert net.equity_of_outcomes(won_gammon).tolist() == [2.0]
    assert net.equity_of_outcomes(flip_outcomes(won_gammon, 3)).tolist() == [-2.0]


def test_lambda_returns_by_hand() -> None:
    lam = 0.5
    c = _Returns(lam).matrix(3)
    v1, v2, z = 0.2, 0.6, 1.0
    g = c @ np.array([v1, v2, z], dtype=np.float32)
    g2 = z
    g1 = (1 - lam) * v2 + lam * g2
    g0 = (1 - lam) * v1 + lam * g1
    assert np.allclose(g, [g0, g1, g2])
    assert np.allclose(_Returns(0.0).matrix(3) @ np.array([v1, v2, z]), [v1, v2, z])


def test_argmax_by_game_takes_the_first_best_of_each_game() -> None:
    values = np.array([1.0, 3.0, 3.0, 0.5, -1.0, -2.0, 7.0], dtype=np.float32)
    counts = np.array([3, 1, 2, 1])
    assert _argmax_by_game(values, counts).tolist() == [1, 0, 0, 0]


def test_training_is_deterministic_and_resumable(tmp_path: Path) -> None:
    first = run_small(tmp_path / "a.npz", 40)
    second = run_small(tmp_path / "b.npz", 40)
    assert same_weights(first, second)
    # One chunk, then the next from the checkpoint: the weights of both chunks in one run.
    run_small(tmp_path / "c.npz", 20)
    resumed = run_small(tmp_path / "c.npz", 40, resume=True)
    assert same_weights(first, resumed)
    meta = json.loads((tmp_path / "c.json").read_text())
    assert meta["games"] == 40 and [e["games"] for e in meta["history"]] == [20, 40]
    assert meta["format"] == "nardy-outcome-v1" and meta["kind"] == "weights"
    # Another seed is another run.
    assert not same_weights(first, run_small(tmp_path / "d.npz", 40, seed=5))


def test_resume_refuses_another_run(tmp_path: Path) -> None:
    run_small(tmp_path / "a.npz", 20)
    with pytest.raises(ValueError, match="made with hidden=8, not 9"):
        run_small(tmp_path / "a.npz", 40, resume=True, hidden=9)
    with pytest.raises(ValueError, match="no checkpoint"):
        run_small(tmp_path / "none.npz", 40, resume=True)


def test_interrupt_writes_a_checkpoint_and_resume_finishes(tmp_path: Path) -> None:
    out = tmp_path / "i.npz"
    config = BatchedConfig(**{**SMALL, "games": 40, "chunk": 20})  # type: ignore[arg-type]

    def stop(text: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(load_variant("hypergammon"), config, out, say=stop, every=0.0)
    cut = json.loads(checkpoint_path(out).with_suffix(".json").read_text())
    assert cut["kind"] == "interrupted" and cut["chunks"] == 1 and cut["games"] < 20
    net = train(load_variant("hypergammon"), config, out, resume=True)
    assert net.meta["games"] == 40


def test_corrupt_or_mismatched_weights_give_one_clear_error(tmp_path: Path) -> None:
    run_small(tmp_path / "w.npz", 20)
    weights = tmp_path / "w.npz"
    OutcomeNet.load(weights)
    data = bytearray(weights.read_bytes())
    data[100] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="sha256 differs"):
        OutcomeNet.load(weights)
    run_small(tmp_path / "x.npz", 20)
    sidecar = tmp_path / "x.json"
    meta = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({**meta, "hidden": 9}))
    with pytest.raises(ValueError, match="array w1 has shape"):
        OutcomeNet.load(tmp_path / "x.npz")
    sidecar.write_text(json.dumps({**meta, "format": "nardy-td-v1"}))
    with pytest.raises(ValueError, match="not a nardy-outcome-v1 sidecar"):
        OutcomeNet.load(tmp_path / "x.npz")
    sidecar.write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        OutcomeNet.load(tmp_path / "x.npz")


def test_a_short_run_learns_to_beat_random_play(tmp_path: Path) -> None:
    """800 games of hypergammon: the trained net beats random play by far more than the same
    net untrained (whose arbitrary preferences already beat random a little)."""
    variant = load_variant("hypergammon")
    config = BatchedConfig("hypergammon", games=800, chunk=800, seed=2, hidden=32, envs=64)
    initial = OutcomeNet.initial(32, 3, np.random.default_rng(2), {"levels": 3, "scale": 3.0})
    before = versus_random(variant, initial, 200)
    net = train(variant, config, tmp_path / "h.npz")
    after = versus_random(variant, net, 200)
    assert after > before + 0.6, (before, after)
    assert after > 1.0


def test_train_command_batched(tmp_path: Path) -> None:
    out = tmp_path / "h.npz"
    args = ["--variant", "hypergammon", "--method", "batched-td", "--games", "16"]
    args += ["--chunk", "8", "--envs", "4", "--hidden", "4", "--eval-games", "0"]
    done = CliRunner().invoke(train_command, [*args, "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "chunk 2 done, 16 games" in done.output
    resumed = CliRunner().invoke(
        train_command, [*args, "--hidden", "5", "--resume", "--out", str(out)]
    )
    assert resumed.exit_code == 1 and "made with hidden=4, not 5" in resumed.output
    wrong = CliRunner().invoke(train_command, [*args, "--alpha", "0.1", "--out", str(out)])
    assert wrong.exit_code == 2 and "--alpha applies to --method td only" in wrong.output
    assert all("Traceback" not in r.output for r in (done, resumed, wrong))


def test_the_neural_bot_plays_outcome_weights_and_old_ones_still_load(tmp_path: Path) -> None:
    from nardy.bots import play_game
    from nardy.bots.neural import NeuralBot
    from nardy.core.dice import SeededDice
    from nardy.engines.net import ValueNet, load_net, shipped_value_weights

    run_small(tmp_path / "w.npz", 20)
    variant = load_variant("hypergammon")
    bot = NeuralBot(0, tmp_path / "w.npz", variant=variant)
    assert isinstance(bot.net, OutcomeNet)
    game = play_game(variant, (bot, NeuralBot(1, tmp_path / "w.npz")), SeededDice(3))
    assert game.result is not None
    # The equity the cube rule reads is the net's: minus the opponent's afterstate equity.
    position = variant.start_position()
    assert bot.equity(position) == pytest.approx(-bot.afterstate_equity(variant.flip(position)))
    assert isinstance(load_net(shipped_value_weights("backgammon")), ValueNet)
    with pytest.raises(ValueError, match="trained for 'hypergammon'"):
        NeuralBot(0, tmp_path / "w.npz", variant=load_variant("backgammon"))


def test_a_corrupt_outcome_weights_file_is_one_error_line_in_nardy_play(tmp_path: Path) -> None:
    import subprocess
    import sys

    run_small(tmp_path / "w.npz", 20)
    weights = tmp_path / "w.npz"
    weights.write_bytes(weights.read_bytes()[:-10])
    command = [sys.executable, "-m", "nardy", "play", "--variant", "hypergammon", "--games", "1"]
    done = subprocess.run(
        [*command, "--bots", f"neural:{weights},random"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "sha256 differs" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_curve_records_an_evaluation_against_heuristic_per_chunk(tmp_path: Path) -> None:
    net = run_small(tmp_path / "e.npz", 40, eval_games=4)
    curve = net.meta["history"]
    assert [e["games"] for e in curve] == [20, 40]
    assert all(e["eval_games"] == 4 and -3 <= e["vs_heuristic"] <= 3 for e in curve)
    assert json.loads((tmp_path / "e.json").read_text())["history"] == curve
