"""Generations of an outcome net (nardy.train.generations through nardy.train.consistency): its
0-ply outcome probabilities fitted to its own 1-ply search's."""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
import zlib
from pathlib import Path

import numpy as np
import pytest

from nardy.analysis.rollout import TrialDice
from nardy.bots import HeuristicBot
from nardy.bots.neural import NeuralBot
from nardy.core import Position, load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings, Game, PlayDecision
from nardy.core.variant import Variant
from nardy.encoding import encode_batch
from nardy.engines import Searcher, make_evaluator
from nardy.engines.net import load_net, shipped_value_weights, shipped_weights
from nardy.engines.outcome_net import OutcomeNet, flip_outcomes
from nardy.train.consistency import (
    ConsistencyConfig,
    Positions,
    _dice_seed,
    _every_result_ends_the_turn,
    collect_positions,
    held_out,
    main,
    plays_heuristic,
    spread,
    train_consistent,
)
from nardy.train.generations import fit_outcomes, one_ply_outcomes, rollout_outcomes
from nardy.train.policy_iteration import HOLD_OUT, ends_the_turn


def _fixed_outcome_net() -> OutcomeNet:
    """Backgammon's 128-unit outcome net of batched TD, kept beside the shipped net: tests of an
    algorithm's figures start from it, so that shipping a stronger net does not move them."""
    net = load_net(shipped_weights("backgammon").with_name("backgammon.outcome.npz"))
    assert isinstance(net, OutcomeNet)
    return net


def _outcome_net(name: str) -> OutcomeNet:
    net = load_net(shipped_weights(name))
    assert isinstance(net, OutcomeNet), f"{name} ships no outcome net"
    return net


def test_the_targets_are_the_searchers_one_ply() -> None:
    """The 1-ply outcome probabilities are the opponent's best replies' (by V₀), flipped and
    averaged over his 21 rolls: their equity is the searcher's V₁, to the last bit."""
    variant = load_variant("backgammon")
    net = _outcome_net("backgammon")
    positions = collect_positions(variant, 2, seed=3, round_index=0, player=net)
    sample = positions.afterstates[:12]
    values, targets = one_ply_outcomes(variant, net, sample)
    searcher = Searcher(variant, make_evaluator("neural", variant))
    assert np.array_equal(values[0], searcher.values(sample, 0))
    assert np.array_equal(values[1], searcher.values(sample, 1))
    assert np.allclose(net.equity_of_outcomes(targets), values[1], rtol=0, atol=1e-12)
    assert targets.shape == (len(sample), 5) and ((targets >= 0) & (targets <= 1)).all()
    # Cumulative outcomes: winning a gammon is at most as likely as winning.
    assert (targets[:, 1] <= targets[:, 0] + 1e-12).all()


def test_a_generation_makes_the_net_agree_with_its_look_ahead(tmp_path: Path) -> None:
    """A tiny deterministic run: one generation lowers the held-out spread of V₀ − V₁, and the
    written refit is an outcome net that names the nets it was fitted from.

    It starts from a fixed net, the 128-unit one of 514,239 games (``backgammon.outcome.npz``),
    so that what it measures is the generation, not whichever net ships: the shipped 256-unit
    net is already nearer its look-ahead on these positions (RMS 0.207 against 0.415) and one
    generation of 8 games moves it less (to 0.180)."""
    variant = load_variant("backgammon")
    config = ConsistencyConfig(
        "backgammon", rounds=1, games=8, seed=2, epochs=12, learning_rate=2e-3, net="shipped"
    )
    start = _fixed_outcome_net()
    lines: list[str] = []
    net = train_consistent(variant, config, tmp_path / "g.npz", start=start, say=lines.append)
    assert isinstance(net, OutcomeNet) and len(lines) == 1
    entry = net.meta["consistency"]["history"][0]
    sd_before, sd_after = entry["held_out_sd_v0_minus_v1"]
    rms_before, rms_after = entry["held_out_rms_v0_minus_v1"]
    # Measured: RMS 0.415 -> 0.235 and SD 0.332 -> 0.197 points; with the replies' probabilities
    # left in the replier's view (no flip) the fit still smooths the net, but only to 0.329 and
    # 0.236.
    assert rms_after < 0.65 * rms_before and sd_after < 0.65 * sd_before
    assert entry["epoch_kept"] > 0
    # Measured again from the file, on the same held-out positions.
    saved = load_net(tmp_path / "g.npz")
    assert isinstance(saved, OutcomeNet)
    positions = collect_positions(variant, 8, 2, 0, player=start)
    held = [p for p, g in zip(positions.afterstates, positions.games, strict=True) if g % 20 == 0]
    assert spread(one_ply_outcomes(variant, saved, held)[0]) == pytest.approx(sd_after, abs=1e-5)
    meta = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))
    assert meta["kind"] == "consistent" and meta["consistency"]["config"]["net"] == "shipped"
    shipped = json.loads(shipped_weights("backgammon").with_suffix(".json").read_text("utf-8"))
    assert meta["consistency"]["shipped_sha256"] == shipped["sha256"]
    assert meta["consistency"]["start_sha256"] == start.meta["sha256"] != shipped["sha256"]
    # Deterministic: the same configuration gives the same weights. Shown on a quarter of the
    # games and two epochs, run twice (the same code, at half the cost of a second full run).
    small = dataclasses.replace(config, games=2, epochs=2)
    first = train_consistent(variant, small, tmp_path / "h.npz", start=start, say=lambda _: None)
    again = train_consistent(variant, small, tmp_path / "i.npz", start=start, say=lambda _: None)
    assert isinstance(first, OutcomeNet) and isinstance(again, OutcomeNet)
    assert first.meta["consistency"]["history"][0]["epoch_kept"] > 0  # a fit, not the start
    assert all(np.array_equal(again.params()[k], v) for k, v in first.params().items())


def test_the_fit_keeps_the_best_held_out_epoch() -> None:
    """Targets equal to the net's own outputs: nothing to learn, so no epoch beats the start and
    the net comes back unchanged (the kept epoch is the held-out best, here 0)."""
    net = _outcome_net("backgammon")
    rng = np.random.default_rng(0)
    inputs = (rng.random((200, 196)) < 0.1).astype(np.float32)
    targets = net.outcomes(inputs)
    games = np.arange(200, dtype=np.int64) // 10
    fitted, losses, kept = fit_outcomes(
        net, inputs, targets, games, epochs=3, batch=32, learning_rate=1e-2, rng=rng
    )
    assert kept == 0 and len(losses) == 4 and min(losses[1:]) >= losses[0]
    assert all(np.array_equal(fitted.params()[k], v) for k, v in net.params().items())


def test_neural_1_searches_a_refit_only_of_the_net_it_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An outcome net's refit, marked for search, is what neural:1 searches while VARIANT.npz is
    the net it was fitted from; put another net in VARIANT.npz and it is refused."""
    from nardy.bots.neural import NeuralBot
    from nardy.engines import net as nets

    variant = load_variant("backgammon")
    config = ConsistencyConfig("backgammon", rounds=1, games=2, seed=1, epochs=1, net="shipped")
    refit = tmp_path / "backgammon.consistent.npz"
    train_consistent(variant, config, refit, say=lambda _: None)
    sidecar = refit.with_suffix(".json")
    sidecar.write_text(
        json.dumps({**json.loads(sidecar.read_text("utf-8")), "search": True}), "utf-8"
    )
    played, value_net = shipped_weights("backgammon"), shipped_value_weights("backgammon")
    for suffix in (".npz", ".json"):
        shutil.copy(played.with_suffix(suffix), tmp_path / f"backgammon{suffix}")
    monkeypatch.setattr(nets, "_weights_file", lambda name: tmp_path / name)
    assert nets.fitted_from(refit, tmp_path / "backgammon.npz")
    assert NeuralBot(0, ply=1, variant=variant).search_weights() == refit
    # Another net ships in its place (the value net): the refit is no longer its own.
    for suffix in (".npz", ".json"):
        shutil.copy(value_net.with_suffix(suffix), tmp_path / f"backgammon{suffix}")
    assert not nets.fitted_from(refit, tmp_path / "backgammon.npz")
    assert NeuralBot(0, ply=1, variant=variant).search_weights() is None


def test_the_command_line_names_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in (
        (["--variant", "backgammon", "--out", "x.npz", "--net", "both"], "invalid choice"),
        (["--variant", "nope", "--out", "x.npz", "--net", "shipped"], "nope"),
    ):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        assert message in capsys.readouterr().err


def test_rivals_are_sampled_beside_the_played_results() -> None:
    """A rival is another result of the same decision (the best other by the player's 0-ply
    value), marked as not played; the games themselves are those of a run without rivals."""
    variant = load_variant("backgammon")
    net = _outcome_net("backgammon")
    plain = collect_positions(variant, 2, seed=5, round_index=0, player=net)
    both = collect_positions(variant, 2, seed=5, round_index=0, player=net, rivals=1)
    assert plain.played.all() and not both.played.all()
    kept = [p for p, played in zip(both.afterstates, both.played, strict=True) if played]
    assert kept == plain.afterstates
    rivals = [p for p, played in zip(both.afterstates, both.played, strict=True) if not played]
    assert rivals and all(r not in plain.afterstates for r in rivals[:20])
    # Each rival follows its played result and is valued no higher by the net at 0-ply.
    values = net.values(encode_batch(both.afterstates))
    for k in np.flatnonzero(~both.played):
        assert both.played[k - 1] and values[k] <= values[k - 1]
    with pytest.raises(ValueError, match="rivals and games against heuristic need"):
        collect_positions(variant, 1, seed=5, round_index=0, rivals=1)


def test_a_share_of_the_games_is_played_against_heuristic() -> None:
    """With ``versus_heuristic`` the share of games it names (spread evenly) are the net's games
    against ``heuristic``, seats alternating, every turn-ending play of both sides sampled; the
    others are the self-play games of a run without it."""
    variant = load_variant("giul")
    net = _outcome_net("giul")
    plain = collect_positions(variant, 4, seed=5, round_index=0, player=net)
    mixed = collect_positions(variant, 4, seed=5, round_index=0, player=net, versus_heuristic=0.5)

    def of_game(positions: Positions, k: int) -> list[Position]:
        return [p for p, g in zip(positions.afterstates, positions.games, strict=True) if g == k]

    # Games 1 and 3 (0-based) are against heuristic: int((k + 1) / 2) > int(k / 2).
    assert of_game(mixed, 0) == of_game(plain, 0) and of_game(mixed, 2) == of_game(plain, 2)
    assert not plain.by_heuristic.any() and not mixed.by_heuristic[mixed.games % 2 == 0].any()
    for k in (1, 3):
        expected, by_heuristic = _turn_ends_of(variant, net, k, seed=5)
        assert of_game(mixed, k) == expected != of_game(plain, k)
        # Which of them are heuristic's plays (the net's values of those are what luck
        # adjustment sums from the other side).
        assert mixed.by_heuristic[mixed.games == k].tolist() == by_heuristic
        heuristic_seat = 0 if k % 2 else 1
        assert (mixed.movers[mixed.games == k] == heuristic_seat).tolist() == by_heuristic
        assert 0 < sum(by_heuristic) < len(by_heuristic)
    with pytest.raises(ValueError, match="share from 0 to 1"):
        collect_positions(variant, 1, seed=5, round_index=0, player=net, versus_heuristic=1.5)


def test_a_fit_holds_out_games_of_both_kinds() -> None:
    """The games a fit holds out are one in ``HOLD_OUT`` of each kind, self-play and against
    ``heuristic``: with half the games against it (the odd ones), every 20th game alone would be
    all self-play, and the kept epoch would be judged on none of the positions ``heuristic``
    leads to. Without games against it the rule is every 20th game, as before."""
    games = np.repeat(np.arange(200, dtype=np.int64), 3)
    assert np.array_equal(held_out(games, 0.0), games % HOLD_OUT == 0)
    for share in (0.25, 0.5, 1.0):
        chosen = sorted(set(games[held_out(games, share)].tolist()))
        against = [g for g in range(200) if plays_heuristic(g, share)]
        assert len(against) == round(200 * share)
        expected = {*against[::HOLD_OUT], *[g for g in range(200) if g not in against][::HOLD_OUT]}
        assert chosen == sorted(expected)
        if share < 1.0:
            assert {plays_heuristic(g, share) for g in chosen} == {True, False}


def _turn_ends_of(
    variant: Variant, net: OutcomeNet, k: int, seed: int
) -> tuple[list[Position], list[bool]]:
    """Game ``k`` of round 0 played here by the net against ``heuristic`` (the net White in
    even games), with the dice :func:`collect_positions` gives it: every afterstate that ends a
    turn and not the game, and whether ``heuristic`` played it."""
    dice_seed = _dice_seed(seed, 0, k)
    neural = NeuralBot(dice_seed)
    neural.bind(variant, net)
    heuristic = HeuristicBot(dice_seed)
    heuristic.start_game(variant, 1)
    seats = (neural, heuristic) if k % 2 == 0 else (heuristic, neural)
    game = Game(variant, SeededDice(dice_seed), cube=CubeSettings())
    out: list[Position] = []
    by_heuristic: list[bool] = []
    while (decision := game.decision) is not None:
        assert isinstance(decision, PlayDecision)
        choice = 0 if len(decision.plays) == 1 else seats[decision.player].choose_play(decision)
        logged = len(game.events)
        game.decide(choice)
        if game.result is None and ends_the_turn(game, decision.player, logged):
            out.append(decision.plays[choice].result)
            by_heuristic.append(seats[decision.player] is heuristic)
    return out, by_heuristic


def test_rivals_of_a_progression_variant_are_results_that_end_the_turn() -> None:
    """In giul (a doubles progression with transfer, RULES.md §2.8 and §2.10) rivals come only
    from decisions whose every legal result ends the turn, which the kernel confirms for each:
    the game of a run with rivals is the game without them."""
    variant = load_variant("giul")
    net = _outcome_net("giul")
    plain = collect_positions(variant, 1, seed=5, round_index=0, player=net)
    both = collect_positions(variant, 1, seed=5, round_index=0, player=net, rivals=2)
    assert [p for p, played in zip(both.afterstates, both.played, strict=True) if played] == (
        plain.afterstates
    )
    assert (~both.played).sum() > 0
    game = Game(variant, SeededDice(3), cube=CubeSettings())
    seen = {True: 0, False: 0}
    while (decision := game.decision) is not None and sum(seen.values()) < 120:
        assert isinstance(decision, PlayDecision)
        every = _every_result_ends_the_turn(variant, decision)
        seen[every] += 1
        for choice in range(min(len(decision.plays), 3)) if every else ():
            trial = copy.deepcopy(game)
            logged = len(trial.events)
            trial.decide(choice)
            assert ends_the_turn(trial, decision.player, logged), (decision.segment, choice)
        game.decide(0)
    assert seen[True] and seen[False]


def test_rollout_targets_stopped_at_once_are_the_nets_own() -> None:
    """Truncated after no roll, a rollout is the net's own 0-ply outcome probabilities of the
    afterstate, in the mover's view (the target then teaches nothing: the fixed point)."""
    variant = load_variant("hypergammon")
    net = _outcome_net("hypergammon")
    sample = collect_positions(variant, 2, seed=3, round_index=0, player=net).afterstates[:6]
    values, targets = rollout_outcomes(variant, net, sample, trials=2, truncate=0, seed=1)
    assert np.array_equal(targets, net.probabilities(encode_batch(sample)))
    assert np.allclose(values[1], values[0], rtol=0, atol=1e-12)


def test_a_rollout_of_one_roll_is_the_opponents_best_reply_to_it() -> None:
    """Truncated after one roll, each trial is the opponent's reply of highest 0-ply value to its
    throw (the throws of TrialDice, seeded by the seed and the position), valued by the net and
    seen from the mover's side: one term of the 1-ply target."""
    variant = load_variant("hypergammon")
    net = _outcome_net("hypergammon")
    searcher = Searcher(variant, make_evaluator("neural", variant))
    sample = collect_positions(variant, 2, seed=4, round_index=0, player=net).afterstates[:5]
    seen_flips = 0
    for afterstate in sample:
        if searcher.terminal(afterstate) is not None:
            continue
        dice = TrialDice(zlib.crc32(f"7:{afterstate.id()}".encode()), 0)
        game = Game(variant, None, position=variant.flip(afterstate), mover=0, cube=CubeSettings())
        game.roll(*dice.throw())
        decision = game.decision
        assert isinstance(decision, PlayDecision)
        replies = [play.result for play in decision.plays]
        best = replies[int(np.argmax(searcher.values(replies, 0)))]
        expected = flip_outcomes(net.probabilities(encode_batch([best])), net.levels)[0]
        _, targets = rollout_outcomes(variant, net, [afterstate], trials=1, truncate=1, seed=7)
        assert np.allclose(targets[0], expected, rtol=0, atol=1e-12)
        seen_flips += not np.allclose(expected, net.probabilities(encode_batch([best]))[0])
    assert seen_flips >= 3  # the change of view mattered


def test_a_rollout_played_to_its_end_scores_the_game() -> None:
    """Hypergammon: the mover's last checker on his 1-point, two off; the opponent's three on
    his 13-point, none off and no contact. Even 6-6 cannot bring all three home (from his
    12-point it brings them home and bears one off), and the mover bears off next: a gammon,
    exactly, in every trial."""
    variant = load_variant("hypergammon")
    net = _outcome_net("hypergammon")
    points = [0] * 24
    points[0], points[11] = 1, -3  # the opponent's 13-point is the mover's 12
    afterstate = Position(tuple(points), (0, 0), (2, 0))
    values, targets = rollout_outcomes(variant, net, [afterstate], trials=36, truncate=None, seed=2)
    assert targets[0].tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]  # win, gammon; no backgammon
    assert values[1, 0] == 2.0
    with pytest.raises(ValueError, match="trials must be 1 or more"):
        rollout_outcomes(variant, net, [afterstate], trials=0, truncate=None, seed=2)


def test_a_generation_fits_rollout_targets(tmp_path: Path) -> None:
    """``--targets rollout``: the round fits the rollouts' probabilities (the sidecar records
    how), deterministically; value nets and unknown target kinds are refused."""
    variant = load_variant("hypergammon")
    config = ConsistencyConfig(
        "hypergammon",
        rounds=1,
        games=4,
        seed=2,
        epochs=2,
        net="shipped",
        targets="rollout",
        rollout_trials=4,
        rollout_truncate=2,
    )
    first = train_consistent(variant, config, tmp_path / "a.npz", say=lambda _: None)
    again = train_consistent(variant, config, tmp_path / "b.npz", say=lambda _: None)
    assert isinstance(first, OutcomeNet) and isinstance(again, OutcomeNet)
    assert all(np.array_equal(first.params()[k], again.params()[k]) for k in first.params())
    searched = train_consistent(
        variant, dataclasses.replace(config, targets="search"), tmp_path / "c.npz", say=print
    )
    assert not np.array_equal(first.params()["w2"], searched.params()["w2"])
    recorded = json.loads((tmp_path / "a.json").read_text())["consistency"]["config"]
    assert (recorded["targets"], recorded["rollout_trials"], recorded["rollout_truncate"]) == (
        "rollout",
        4,
        2,
    )
    with pytest.raises(ValueError, match="rollout targets are an outcome net's"):
        train_consistent(
            load_variant("backgammon"),
            ConsistencyConfig("backgammon", rounds=1, games=2, targets="rollout"),
            tmp_path / "d.npz",
            say=lambda _: None,
        )
    with pytest.raises(ValueError, match="targets must be 'search' or 'rollout'"):
        train_consistent(variant, dataclasses.replace(config, targets="deeper"), tmp_path / "e.npz")
