"""Chunk snapshots (nardy train --keep-chunks), their average (nardy.train.average) and a run
with input features (--features): what each writes, and the errors for what does not fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="training needs numpy")

from batched_runs import run_small, same_weights  # noqa: E402

from nardy.core import load_variant  # noqa: E402
from nardy.core.position import Position  # noqa: E402
from nardy.encoding import encode_batch  # noqa: E402
from nardy.engines.outcome_net import OutcomeNet  # noqa: E402
from nardy.train.average import average, main  # noqa: E402
from nardy.train.batched import chunk_path  # noqa: E402

HYPERGAMMON = load_variant("hypergammon")


def _positions() -> list[Position]:
    from nardy.core.dice import SeededDice
    from nardy.core.game import Game

    game = Game(load_variant("hypergammon", {"cube": False}), SeededDice(2))
    out: list[Position] = []
    while game.decision is not None and len(out) < 30:
        decision = game.decision
        out.extend(play.result for play in getattr(decision, "plays", []))
        game.decide(0)
    return out


def test_keep_chunks_keeps_each_chunks_weights_and_changes_nothing_else(tmp_path: Path) -> None:
    plain = run_small(tmp_path / "plain.npz", 40)
    kept = run_small(tmp_path / "kept.npz", 40, keep_chunks=True)
    assert same_weights(plain, kept)
    first, _ = OutcomeNet.load(chunk_path(tmp_path / "kept.npz", 1))
    last, _ = OutcomeNet.load(chunk_path(tmp_path / "kept.npz", 2))
    assert first.meta["games"] == 20 and last.meta["games"] == 40
    assert same_weights(last, kept)
    assert not same_weights(first, kept)


def test_the_average_is_the_mean_of_the_arrays_and_records_its_sources(tmp_path: Path) -> None:
    run_small(tmp_path / "run.npz", 60, keep_chunks=True)
    paths = [chunk_path(tmp_path / "run.npz", c) for c in (1, 2, 3)]
    nets = [OutcomeNet.load(p)[0] for p in paths]
    out = tmp_path / "mean.npz"
    main([*map(str, paths), "--out", str(out)])
    mean, _ = OutcomeNet.load(out)
    for name, array in mean.params().items():
        expected = sum(net.params()[name].astype(np.float64) for net in nets) / 3
        np.testing.assert_allclose(array, expected, rtol=1e-6, atol=1e-7)
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["method"] == "average" and meta["variant"] == "hypergammon"
    assert [s["games"] for s in meta["averaged"]] == [20, 40, 60]
    assert all(s["method"] == "batched-td" and s["history"] for s in meta["averaged"])
    assert [s["sha256"] for s in meta["averaged"]] == [n.meta["sha256"] for n in nets]
    # The averaged net plays: the neural bot's engine binds it.
    from nardy.engines.outcome_net import OutcomeEngine

    values = OutcomeEngine(mean, HYPERGAMMON).afterstate_equities(_positions())
    assert np.isfinite(values).all()


def test_a_net_without_the_features_joins_at_zero_weight(tmp_path: Path) -> None:
    run_small(tmp_path / "plain.npz", 20)
    featured = run_small(tmp_path / "feat.npz", 20, features="hitting_v1")
    assert featured.features == "hitting_v1" and featured.inputs == 196 + 8
    mean = average([tmp_path / "plain.npz", tmp_path / "feat.npz"])
    assert mean.features == "hitting_v1"
    plain, _ = OutcomeNet.load(tmp_path / "plain.npz")
    np.testing.assert_allclose(mean.w1[:, :196], (plain.w1 + featured.w1[:, :196]) / 2, rtol=1e-6)
    np.testing.assert_allclose(mean.w1[:, 196:], featured.w1[:, 196:] / 2, rtol=1e-6)
    x = encode_batch(_positions())
    assert np.isfinite(mean.values(x)).all()


def test_a_run_with_features_from_a_net_without_them_starts_where_that_net_plays(
    tmp_path: Path,
) -> None:
    start = run_small(tmp_path / "start.npz", 20)
    widened = start.with_features("hitting_v1")
    x = encode_batch(_positions())
    np.testing.assert_allclose(widened.values(x), start.values(x), atol=1e-12)
    grown = run_small(
        tmp_path / "grown.npz", 20, features="hitting_v1", init=str(tmp_path / "start.npz")
    )
    assert grown.features == "hitting_v1"
    assert np.abs(grown.w1[:, 196:]).max() > 0  # the features' weights learnt from zero
    with pytest.raises(ValueError, match="reads the feature set 'hitting_v1', not 'none'"):
        run_small(tmp_path / "back.npz", 20, init=str(tmp_path / "grown.npz"))
    with pytest.raises(ValueError, match="made with features=''"):
        run_small(tmp_path / "start.npz", 40, resume=True, features="hitting_v1")


def test_what_cannot_be_averaged_is_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_small(tmp_path / "a.npz", 20)
    run_small(tmp_path / "b.npz", 20, hidden=9)
    with pytest.raises(ValueError, match="two weights files or more"):
        average([tmp_path / "a.npz"])
    with pytest.raises(ValueError, match="hidden units"):
        average([tmp_path / "a.npz", tmp_path / "b.npz"])
    with pytest.raises(SystemExit) as stopped:
        main(
            [
                str(tmp_path / "a.npz"),
                str(tmp_path / "missing.npz"),
                "--out",
                str(tmp_path / "m.npz"),
            ]
        )
    assert stopped.value.code == 2
    assert "no weights file" in capsys.readouterr().err
