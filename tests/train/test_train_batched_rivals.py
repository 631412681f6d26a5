"""The batched trainer's other play (issue 37, plakoto): games against ``heuristic`` in a fraction
of the lockstep games (``--versus-heuristic``) and ε-greedy self-play (``--explore``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy", reason="training needs numpy")

from batched_runs import run_small, same_weights  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from nardy import encoding  # noqa: E402
from nardy.core import load_variant  # noqa: E402
from nardy.core.game import PlayDecision  # noqa: E402
from nardy.core.movegen import BAR, position_of  # noqa: E402
from nardy.engines.heuristic import HeuristicEvaluation  # noqa: E402
from nardy.env.vector import batched_env  # noqa: E402
from nardy.train.batched import (  # noqa: E402
    BatchedConfig,
    _explore,
    _Returns,
    _Run,
    checkpoint_path,
    train,
)
from nardy.train.cli import train as train_command  # noqa: E402


@pytest.mark.parametrize("variant", ["plakoto", "hypergammon"])
def test_afterstate_keys_are_the_afterstates_before_encoding(variant: str) -> None:
    """Plakoto runs in the whole-batch flow (pinned points' bits in its keys), hypergammon in a
    driver per game: both give the results of the encoded afterstates, action for action."""
    env = batched_env(variant, 3, encoder=encoding.BOARD_ENCODER)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    pinned = 0
    for _ in range(40):
        for i in range(3):
            keys = env.afterstate_keys(i)
            rows = env.afterstates(i)
            if not keys:  # a cube decision (hypergammon's cube is on here)
                assert rows.shape[0] == 0
                continue
            encoded = [
                encoding.encode(position_of(k), encoder=encoding.BOARD_ENCODER) for k in keys
            ]
            assert len(keys) == rows.shape[0]
            np.testing.assert_array_equal(np.stack(encoded), rows)
            pinned += sum(len(k) > 28 for k in keys)
        env.step((rng.random(3) * env.counts).astype(np.int64))
    assert (pinned > 0) == (variant == "plakoto")


def test_heuristic_plays_its_best_result_in_its_own_seat_only() -> None:
    """In game ``i < rivals`` the heuristic's colour ``i % 2`` plays a result of its highest
    value by the bot's own evaluation of the decision's plays; the other games keep theirs."""
    variant = load_variant("plakoto")
    config = BatchedConfig("plakoto", seed=1, hidden=4, envs=6, versus_heuristic=0.5)
    run = _Run(variant, config, Path("unused.npz"), resume=False)
    assert run.rivals == 3
    env = run.env(0)
    evaluation = HeuristicEvaluation.of(variant)
    rng = np.random.default_rng(3)
    decided = 0
    for _ in range(60):
        movers = env.agents.tolist()
        mine = (rng.random(6) * env.counts).astype(np.int64)
        chosen = run.heuristic_plays(env, mine, movers)
        for i in range(6):
            if i >= 3 or movers[i] != i % 2 or env.counts[i] == 1:
                assert chosen[i] == mine[i]
                continue
            decided += 1
            driver = env.driver(i)
            decision = driver.decision
            assert isinstance(decision, PlayDecision)
            ordered = [decision.plays[a].result for a in driver.order()]
            values = [evaluation.evaluate(p) for p in ordered]
            assert values[int(chosen[i])] == max(values)
        env.step(chosen)
    assert decided > 20


def test_exploring_draws_every_game_and_spares_the_heuristic_games() -> None:
    counts = np.array([5, 5, 1, 9, 9, 9, 9, 9])
    chosen = np.zeros(8, dtype=np.int64)
    plays, explored = _explore(np.random.default_rng(0), chosen, counts, 1.0, 2)
    assert not explored[:2].any() and (plays[:2] == 0).all()
    assert not explored[2]  # one legal play: nothing to explore
    assert explored[3:].sum() >= 3 and (plays[explored] != 0).all()
    assert (plays < counts).all()
    _, none = _explore(np.random.default_rng(0), chosen, counts, 0.0, 0)
    assert not none.any()


def test_the_return_before_an_explored_play_is_the_greedy_value() -> None:
    """A trail of four White moves, the third explored: G_1 is the greedy play's value at 2 (no
    trace through the random play), the others the usual λ-returns."""
    variant = load_variant("hypergammon")
    config = BatchedConfig("hypergammon", lam=0.5, hidden=4, envs=2)
    run = _Run(variant, config, Path("unused.npz"), resume=False)
    levels = run.levels
    size = 2 * levels - 1
    x = np.zeros(3, dtype=np.float32)
    v = [np.full(size, a, dtype=np.float32) for a in (0.1, 0.2, 0.3, 0.4)]
    greedy = np.full(size, 0.9, dtype=np.float32)
    trail = [(x, v[0], 0), (x, v[1], 0), (x, v[2], 0, greedy), (x, v[3], 0)]
    _, g = run.targets(trail, 1.0)  # type: ignore[arg-type]
    z = np.array([1.0] + [0.0] * (size - 1), dtype=np.float32)
    g3 = z
    g2 = 0.5 * v[3] + 0.5 * g3
    g1 = greedy
    g0 = 0.5 * v[1] + 0.5 * g1
    np.testing.assert_allclose(g, np.stack([g0, g1, g2, g3]), rtol=1e-6)
    # Without the explored step's greedy value the returns are the matrix form's.
    plain = [step[:3] for step in trail]
    _, h = run.targets(plain, 1.0)  # type: ignore[arg-type]
    seq = np.stack([v[1], v[2], v[3], z])
    np.testing.assert_allclose(h, _Returns(0.5).matrix(4) @ seq, rtol=1e-6)


def test_other_play_changes_the_run_and_stays_deterministic_and_resumable(
    tmp_path: Path,
) -> None:
    plain = run_small(tmp_path / "p.npz", 40)
    cases: dict[str, dict[str, Any]] = {
        "h": {"versus_heuristic": 0.5},
        "e": {"explore": 0.2},
        "b": {"versus_heuristic": 0.25, "explore": 0.1},
        "f": {"learn_forced": True},
    }
    for name, options in cases.items():
        first = run_small(tmp_path / f"{name}1.npz", 40, **options)
        assert not same_weights(first, plain), name
        assert same_weights(first, run_small(tmp_path / f"{name}2.npz", 40, **options)), name
        run_small(tmp_path / f"{name}3.npz", 20, **options)
        resumed = run_small(tmp_path / f"{name}3.npz", 40, resume=True, **options)
        assert same_weights(first, resumed), name
    curve = json.loads((tmp_path / "h1.json").read_text())["history"]
    assert all(e["heuristic_games"] > 0 and -3 <= e["points_vs_heuristic"] <= 3 for e in curve)
    assert "heuristic_games" not in json.loads((tmp_path / "e1.json").read_text())["history"][0]


def test_resume_checks_the_options_and_reads_older_checkpoints(tmp_path: Path) -> None:
    out = tmp_path / "a.npz"
    run_small(out, 20, versus_heuristic=0.5)
    with pytest.raises(ValueError, match=r"made with versus_heuristic=0\.5, not 0\.25"):
        run_small(out, 40, resume=True, versus_heuristic=0.25)
    with pytest.raises(ValueError, match=r"made with explore=0\.0, not 0\.1"):
        run_small(out, 40, resume=True, versus_heuristic=0.5, explore=0.1)
    # A checkpoint written before the options existed was made without them.
    run_small(tmp_path / "old.npz", 20)
    sidecar = checkpoint_path(tmp_path / "old.npz").with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    for key in ("versus_heuristic", "explore", "learn_forced"):
        del meta["config"][key]
    sidecar.write_text(json.dumps(meta))
    assert run_small(tmp_path / "old.npz", 40, resume=True).meta["games"] == 40


def test_bad_values_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"versus_heuristic must be between 0 and 1, not 1\.5"):
        run_small(tmp_path / "x.npz", 20, versus_heuristic=1.5)
    with pytest.raises(ValueError, match=r"explore must be between 0 and 1, not -0\.1"):
        run_small(tmp_path / "x.npz", 20, explore=-0.1)
    base = ["--variant", "hypergammon", "--games", "8", "--out", str(tmp_path / "c.npz")]
    batched = [*base, "--method", "batched-td", "--envs", "4", "--hidden", "4"]
    runner = CliRunner()
    high = runner.invoke(train_command, [*batched, "--versus-heuristic", "2"])
    assert high.exit_code == 2 and "--versus-heuristic" in high.output
    assert "2.0 is not in the range 0<=x<=1" in high.output
    word = runner.invoke(train_command, [*batched, "--explore", "some"])
    assert word.exit_code == 2 and "'some' is not a valid float" in word.output
    td = runner.invoke(train_command, [*base, "--method", "td", "--versus-heuristic", "0.5"])
    assert td.exit_code == 2 and "--versus-heuristic applies to --method batched-td only" in (
        td.output
    )
    done = runner.invoke(train_command, [*batched, "--chunk", "8", "--versus-heuristic", "0.5"])
    assert done.exit_code == 0, done.output
    meta = json.loads((tmp_path / "c.json").read_text())
    assert meta["config"]["versus_heuristic"] == 0.5 and meta["history"][0]["heuristic_games"]
    assert all("Traceback" not in r.output for r in (high, word, td, done))


def test_a_run_may_start_from_given_weights(tmp_path: Path) -> None:
    """--init: the run goes on from the given net (with a vanishing step the weights stay
    those), deterministic and resumable; weights of another variant or size are refused."""
    start = run_small(tmp_path / "start.npz", 20)
    still = run_small(tmp_path / "s.npz", 20, init=str(tmp_path / "start.npz"), learning_rate=1e-12)
    for key, array in start.params().items():
        np.testing.assert_allclose(still.params()[key], array, atol=1e-6)
    fresh = run_small(tmp_path / "f.npz", 20, learning_rate=1e-12)
    assert not np.allclose(fresh.w1, start.w1, atol=1e-3)
    options: dict[str, Any] = {"init": str(tmp_path / "start.npz"), "versus_heuristic": 0.5}
    first = run_small(tmp_path / "i1.npz", 40, **options)
    run_small(tmp_path / "i2.npz", 20, **options)
    # The sidecar names the start by its digest too: a path may be renamed or gone later.
    digest = hashlib.sha256((tmp_path / "start.npz").read_bytes()).hexdigest()
    assert first.meta["init_sha256"] == digest and "init_sha256" not in start.meta
    # A resumed run reads its checkpoint, not the weights it started from.
    (tmp_path / "start.npz").rename(tmp_path / "moved.npz")
    resumed = run_small(tmp_path / "i2.npz", 40, resume=True, **options)
    assert same_weights(first, resumed) and resumed.meta["init_sha256"] == digest
    (tmp_path / "moved.npz").rename(tmp_path / "start.npz")
    with pytest.raises(ValueError, match="8 hidden units and 3 levels, not 9 and 3"):
        run_small(tmp_path / "x.npz", 20, init=str(tmp_path / "start.npz"), hidden=9)
    plakoto = BatchedConfig("plakoto", games=8, chunk=8, hidden=8, envs=4)
    with pytest.raises(ValueError, match="weights for 'hypergammon', not 'plakoto'"):
        train(
            load_variant("plakoto"),
            replace(plakoto, init=str(tmp_path / "start.npz")),
            tmp_path / "p.npz",
        )
    args = ["-v", "hypergammon", "--method", "batched-td", "--out", str(tmp_path / "m.npz")]
    missing = CliRunner().invoke(train_command, [*args, "--init", str(tmp_path / "none.npz")])
    assert missing.exit_code == 1 and "no weights file" in missing.output
    assert "Traceback" not in missing.output


def test_learning_forced_turns_learns_the_afterstates_self_play_plays_by_itself(
    tmp_path: Path,
) -> None:
    """``learn_forced``: the turns with one legal play or none become decisions, so the run
    learns more afterstates on the same dice, among them a dance's: the mover's checkers still on
    his bar (an afterstate no chosen play of his own can leave, where no play enters)."""
    plain = run_small(tmp_path / "p.npz", 40)
    forced = run_small(tmp_path / "f.npz", 40, learn_forced=True)
    assert forced.meta["positions"] > plain.meta["positions"]
    assert forced.meta["config"]["learn_forced"] is True

    def dances_seen(learn_forced: bool) -> int:
        # Backgammon's: with fifteen checkers a side, closed points and dances are common.
        config = BatchedConfig("backgammon", seed=4, hidden=8, envs=8, learn_forced=learn_forced)
        run = _Run(load_variant("backgammon"), config, tmp_path / "d.npz", resume=False)
        env = run.env(0)
        seen = 0
        for _ in range(400):
            for i in range(env.num_envs):
                # The mover's own bar in his afterstate: entering failed.
                seen += sum(1 for key in env.afterstate_keys(i) if key[BAR] > 0)
            env.step(np.zeros(env.num_envs, dtype=np.int64))
        return seen

    assert dances_seen(False) == 0 < dances_seen(True)
