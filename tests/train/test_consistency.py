"""The self-consistent analysis nets (``neural-consistent``) and their training recipe."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nardy.core import load_variant
from nardy.engines import Searcher, make_evaluator
from nardy.engines.evaluator import consistent_weights
from nardy.engines.net import ValueNet, load_net, shipped_value_weights, shipped_weights
from nardy.engines.outcome_net import is_outcome_sidecar
from nardy.train.consistency import (
    ConsistencyConfig,
    collect_positions,
    inconsistency,
    one_ply_targets,
    train_consistent,
)

SHIPPED = ("backgammon", "long", "fevga", "giul", "khachapuri")


@pytest.mark.parametrize("name", SHIPPED)
def test_consistent_net_loads_and_answers(name: str) -> None:
    variant = load_variant(name)
    evaluator = make_evaluator("neural-consistent", variant)
    assert evaluator.name == "neural-consistent"
    plays = variant.legal_plays(variant.start_position(), (3, 1))
    values = evaluator.afterstate_equities([p.result for p in plays])
    assert values.shape == (len(plays),) and np.isfinite(values).all()
    # The sidecar says how the net was made and from which shipped net it started.
    meta = json.loads(consistent_weights(name).with_suffix(".json").read_text(encoding="utf-8"))
    assert meta["variant"] == name and meta["kind"] == "consistent"
    # A refit of a value net of policy iteration, or (khachapuri's) of the outcome net neural
    # plays: generations of it (docs/bots.md, *Where the targets stand*).
    shipped = load_net(
        shipped_weights(name) if is_outcome_sidecar(meta) else shipped_value_weights(name)
    )
    assert meta["consistency"]["shipped_sha256"] == shipped.meta["sha256"]
    # Its short list (the heuristic's k best) is the shipped net's, so luck is taken over the
    # same plays the bot chooses among.
    assert meta.get("candidates", 0) == shipped.meta.get("candidates", 0)
    # A refit, not a copy: the values differ from the shipped net's.
    original = make_evaluator("neural", variant).afterstate_equities([p.result for p in plays])
    assert not np.allclose(values, original)


def test_consistent_evaluator_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="no self-consistent analysis net for variant 'plakoto'"):
        make_evaluator("neural-consistent", load_variant("plakoto"))
    with pytest.raises(ValueError, match="takes no argument"):
        make_evaluator("neural-consistent:x.npz", load_variant("backgammon"))


def test_one_ply_targets_are_the_searchers_values() -> None:
    variant = load_variant("backgammon")
    positions = collect_positions(variant, 2, seed=3, round_index=0)
    assert positions.afterstates and len(positions.games) == len(positions.afterstates)
    assert set(np.abs(positions.outcomes)) <= {1 / 3, 2 / 3, 1.0}
    net = ValueNet.load(shipped_value_weights("backgammon"))
    sample = positions.afterstates[:5]
    values = one_ply_targets(variant, net, sample)
    searcher = Searcher(
        variant, make_evaluator(f"neural:{shipped_value_weights('backgammon')}", variant)
    )
    assert np.allclose(values[0], searcher.values(sample, 0))
    assert np.allclose(values[1], searcher.values(sample, 1))
    assert inconsistency(values) == pytest.approx(
        float(np.sqrt(np.mean((values[0] - values[1]) ** 2)))
    )


@pytest.mark.slow
def test_the_recipe_reproduces_the_shipped_backgammon_net(tmp_path: Path) -> None:
    """The sidecar's configuration, run again, gives the shipped weights (the recipe is
    deterministic), and its round lowered the held-out inconsistency."""
    variant = load_variant("backgammon")
    shipped = ValueNet.load(consistent_weights("backgammon"))
    config = ConsistencyConfig(**shipped.meta["consistency"]["config"])
    lines: list[str] = []
    net = train_consistent(variant, config, tmp_path / "c.npz", say=lines.append)
    for name, value in net.params().items():
        assert np.allclose(value, shipped.params()[name], rtol=0, atol=1e-9), name
    before, after = net.meta["consistency"]["history"][0]["held_out_rms_v0_minus_v1"]
    assert after < before and len(lines) == config.rounds
    assert ValueNet.load(tmp_path / "c.npz").meta["kind"] == "consistent"


def test_a_refit_stands_only_for_the_net_it_was_fitted_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once another net ships as VARIANT.npz (an outcome net), the old refit is not its own:
    neural:1 must not search over it."""
    from nardy.bots.neural import NeuralBot
    from nardy.engines import net as nets

    monkeypatch.setattr(nets, "_weights_file", lambda name: tmp_path / name)
    for stem, meta in (
        ("toy", {"sha256": "aaa"}),
        ("toy.consistent", {"consistency": {"shipped_sha256": "aaa"}}),
    ):
        (tmp_path / f"{stem}.npz").write_bytes(b"")
        (tmp_path / f"{stem}.json").write_text(json.dumps(meta), encoding="utf-8")
    refit, shipped = tmp_path / "toy.consistent.npz", tmp_path / "toy.npz"
    assert nets.shipped_consistent_weights("toy") == refit
    assert nets.fitted_from(refit, shipped)
    assert nets.shipped_value_weights("toy") == shipped
    (tmp_path / "toy.json").write_text(json.dumps({"sha256": "bbb"}), encoding="utf-8")
    (tmp_path / "toy.value.npz").write_bytes(b"")  # the value net kept beside the new one
    assert not nets.fitted_from(refit, shipped)
    assert nets.shipped_value_weights("toy") == tmp_path / "toy.value.npz"
    # The bot asks the same question of the real files: it searches over a refit of its own net.
    monkeypatch.undo()
    for name in ("fevga", "giul", "long"):
        bot = NeuralBot(0, ply=1, variant=load_variant(name))
        kept = nets.shipped_consistent_weights(name)
        assert kept is not None
        searched = bot.search_weights() == kept
        assert searched == nets.fitted_from(kept, nets.shipped_weights(name))
