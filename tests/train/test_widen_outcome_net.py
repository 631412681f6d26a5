"""``benchmarks/widen_outcome_net.py``: a net of H hidden units widened to 2H values every position
as before (without noise), its copies start apart (with it), and bad input is one clear error."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from batched_runs import run_small

from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import Game
from nardy.encoding import encode_plays
from nardy.engines.net import shipped_weights
from nardy.engines.outcome_net import OutcomeNet
from tests.script_modules import load_module

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def widening() -> ModuleType:
    return load_module("widen_outcome_net", ROOT / "benchmarks" / "widen_outcome_net.py")


def _played_afterstates(count: int) -> np.ndarray:
    """The encoded results of every legal play at the first decisions of seeded backgammon games
    (real afterstates, contact and the features in use, not random units)."""
    variant = load_variant("backgammon", {"cube": False})
    rows: list[np.ndarray] = []
    seed = 0
    while sum(len(block) for block in rows) < count:
        game = Game(variant, SeededDice(seed))
        while game.decision is not None:
            plays = game.decision.plays  # type: ignore[union-attr]  # cubeless: plays only
            rows.append(encode_plays(plays))
            game.decide(0)
        seed += 1
    return np.concatenate(rows)


def test_a_widened_net_values_every_position_as_before(widening: ModuleType) -> None:
    net, _ = OutcomeNet.load(shipped_weights("backgammon"))
    inputs = _played_afterstates(300)
    wide = widening.widen(net, noise=0.0)
    assert wide.hidden == 2 * net.hidden and wide.features == net.features
    assert np.abs(wide.values(inputs) - net.values(inputs)).max() < 1e-5
    # With noise the copies differ from their units, and the values only a little.
    noisy = widening.widen(net, noise=0.05)
    assert not np.array_equal(noisy.w1[net.hidden :], net.w1)
    drift = np.abs(noisy.values(inputs) - net.values(inputs)) * net.scale  # in points
    assert 0 < drift.mean() < 0.03 and drift.max() < 0.15


def test_the_command_writes_a_net_nardy_train_can_start_from(
    widening: ModuleType, tmp_path: Path
) -> None:
    out = tmp_path / "wide.npz"
    widening.main([str(shipped_weights("hypergammon")), "--out", str(out), "--noise", "0"])
    wide, _ = OutcomeNet.load(out)
    net, _ = OutcomeNet.load(shipped_weights("hypergammon"))
    assert wide.hidden == 2 * net.hidden
    assert wide.meta["variant"] == "hypergammon" and wide.meta["widened"]["hidden"] == net.hidden
    # `nardy train --init` takes it at the doubled --hidden; with a vanishing step it stays.
    still = run_small(
        tmp_path / "run.npz", 20, init=str(out), hidden=wide.hidden, learning_rate=1e-12
    )
    for key, array in wide.params().items():
        np.testing.assert_allclose(still.params()[key], array, atol=1e-6)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.npz", "--out", "w.npz"], "no weights file"),
        (["{net}", "--out", "w.npz", "--noise", "-1"], "--noise must be at least 0"),
    ],
)
def test_bad_input_is_one_clear_error(
    widening: ModuleType,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    net = str(shipped_weights("hypergammon"))
    with pytest.raises(SystemExit) as exit_:
        widening.main([arg.format(net=net) for arg in args])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
