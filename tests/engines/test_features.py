"""The outcome net's input features (nardy.engines.features): each checked against the rules or the
kernel, and a net reading them loads, saves and refuses what it should."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import Game
from nardy.core.position import Position
from nardy.encoding import encode_batch
from nardy.engines.features import feature_set, hitting_v1
from nardy.engines.heuristic import pips
from nardy.engines.net import shipped_weights
from nardy.engines.outcome_net import OutcomeEngine, OutcomeNet

BACKGAMMON = load_variant("backgammon", {"cube": False})

SHOTS = {1: 11, 2: 12, 3: 14, 4: 15, 5: 15, 6: 17, 7: 6, 8: 6, 9: 5, 10: 3, 11: 2, 12: 3}
"""The rolls of 36 that hit a lone checker d pips away with nothing between (the shot table every
backgammon text gives: 11/36 at 1 away, 17/36 at 6, 3/36 at 12)."""


def _position(
    mover: dict[int, int], opponent: dict[int, int], bar: tuple[int, int] = (0, 0)
) -> Position:
    """A position in the mover's coordinates (opponent's checkers at the mover's points), the
    rest of each side's 15 borne off."""
    points = [0] * 24
    for p, n in mover.items():
        points[p - 1] += n
    for p, n in opponent.items():
        points[p - 1] -= n
    on_board = (sum(mover.values()) + bar[0], sum(opponent.values()) + bar[1])
    return Position(tuple(points), bar, (15 - on_board[0], 15 - on_board[1]))


@pytest.mark.parametrize("distance", sorted(SHOTS))
def test_the_opponents_hitting_rolls_are_the_shot_table(distance: int) -> None:
    blot = 13
    position = _position({blot: 1, 20: 2}, {blot - distance: 1})
    features = hitting_v1(encode_batch([position]))[0]
    assert features[3] * 36 == pytest.approx(SHOTS[distance])
    # The same blot with the opponent entering from his bar (the mover's 0-point).
    entering = _position({distance: 1}, {}, bar=(0, 1))
    assert hitting_v1(encode_batch([entering]))[0, 3] * 36 == pytest.approx(
        SHOTS[distance] if distance <= 12 else 0
    )


def test_a_made_point_between_blocks_the_indirect_shots() -> None:
    # 8 away: 6-2, 2-6, 5-3, 3-5, 4-4, 2-2 (6 rolls); the mover's point 2 pips in front of the
    # opponent's checker stops 6-2 played 2 first and 2-2; 6-2 still hits as 6 then 2.
    open_ = _position({13: 1}, {5: 1})
    blocked = _position({13: 1, 7: 2}, {5: 1})
    assert hitting_v1(encode_batch([open_]))[0, 3] * 36 == pytest.approx(6)
    assert hitting_v1(encode_batch([blocked]))[0, 3] * 36 == pytest.approx(5)


def _afterstates(games: int) -> list[Position]:
    rng = random.Random(3)
    out = []
    for seed in range(games):
        game = Game(BACKGAMMON, SeededDice(seed))
        while game.decision is not None:
            decision = game.decision
            index = rng.randrange(len(decision.plays))  # type: ignore[union-attr]
            out.append(decision.plays[index].result)  # type: ignore[union-attr]
            game.decide(index)
    return out


def test_features_agree_with_the_kernel_on_played_positions() -> None:
    """Pips equal the heuristic's count; every roll with which the kernel's legal plays hit is
    counted (the feature may count more: it does not apply the maximum-dice and larger-die
    rules); contact is what the pips' race says; blots and primes by direct count."""
    positions = _afterstates(6)
    features = hitting_v1(encode_batch(positions))
    checked = 0
    for position, row in zip(positions, features, strict=True):
        mine, theirs = pips(position, True)
        assert row[0] * 100 == pytest.approx(mine)
        assert row[1] * 100 == pytest.approx(theirs)
        points = position.points
        mover_at = [p for p in range(1, 25) if points[p - 1] > 0] + [25] * (position.bar[0] > 0)
        opponent_at = [p for p in range(1, 25) if points[p - 1] < 0] + [0] * (position.bar[1] > 0)
        contact = bool(mover_at and opponent_at and max(mover_at) > min(opponent_at))
        assert row[2] == contact
        assert row[4] * 5 == pytest.approx(sum(c == 1 for c in points))
        assert row[5] * 5 == pytest.approx(sum(c == -1 for c in points))
        made = "".join("x" if c >= 2 else "." for c in points)
        assert row[6] * 6 == pytest.approx(max(map(len, made.split("."))))
        if position.bar[1] or checked >= 120:
            continue  # the opponent must enter first: not modelled
        opponent = BACKGAMMON.flip(position)
        hitting = 0
        for a in range(1, 7):
            for b in range(a, 7):
                plays = BACKGAMMON.legal_plays(opponent, (a, b))
                if any(play.result.bar[1] > opponent.bar[1] for play in plays):
                    hitting += 1 if a == b else 2
        assert row[3] * 36 >= hitting - 1e-6
        checked += 1
    assert checked == 120


def test_a_net_reads_its_features_and_gains_them_at_zero_weight(tmp_path: Path) -> None:
    # The 128-unit net shipped until 2026-12-06: a fixed net without features.
    shipped, _ = OutcomeNet.load(shipped_weights("backgammon").with_name("backgammon.outcome.npz"))
    widened = shipped.with_features("hitting_v1")
    assert widened.inputs == shipped.inputs + 8
    x = encode_batch(_afterstates(1)[:200])
    np.testing.assert_allclose(widened.values(x), shipped.values(x), atol=1e-12)
    widened.w1[:, -8:] = 0.5
    assert not np.allclose(widened.values(x), shipped.values(x))
    path = tmp_path / "featured.npz"
    widened.save(path)
    loaded, _ = OutcomeNet.load(path)
    assert loaded.features == "hitting_v1"
    np.testing.assert_array_equal(loaded.values(x), widened.values(x))
    loaded.meta.pop("variant")  # past the check of the variant it was trained for
    with pytest.raises(ValueError, match="opposite direction"):
        OutcomeEngine(loaded, load_variant("long"))
    meta = json.loads(path.with_suffix(".json").read_text())
    meta["features"] = "no_such_set"
    path.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="unknown feature set 'no_such_set'"):
        OutcomeNet.load(path)


def test_a_feature_set_refuses_a_variant_it_does_not_describe() -> None:
    assert feature_set("hitting_v1", BACKGAMMON).size == 8
    for name in ("long", "plakoto", "fevga"):
        with pytest.raises(ValueError, match="hitting_v1"):
            feature_set("hitting_v1", load_variant(name))
