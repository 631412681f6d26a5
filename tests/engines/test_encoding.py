"""The observation encoders (nardy.encoding, docs/encoding.md): one test per feature group, the
batched forms against the single one, and the mirror property on positions of real games."""

from __future__ import annotations

import itertools
import random

import pytest

np = pytest.importorskip("numpy", reason="the rl extra (numpy) is not installed")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from nardy import encoding as enc  # noqa: E402
from nardy.core import Position, game_variant_names, load_variant  # noqa: E402
from nardy.core.dice import ScriptedDice, SeededDice  # noqa: E402
from nardy.core.game import DoubleDecision, Game, PlayDecision, TakeDecision  # noqa: E402


def units(n: int) -> list[float]:
    """Tesauro's code of n checkers, written out from its definition."""
    return [float(n >= 1), float(n >= 2), float(n >= 3), max(n - 3, 0) / 2]


def point_units(x: np.ndarray, start: int, point: int) -> list[float]:
    base = start + (point - 1) * 4
    return [float(v) for v in x[base : base + 4]]


GAMES = {
    "variant_name": st.sampled_from(game_variant_names()),
    "seed": st.integers(0, 10_000),
    "decisions": st.integers(0, 60),
}
"""A game of random decisions (:func:`play_random`), stopped where hypothesis says."""


def play_random(variant_name: str, seed: int, decisions: int) -> Game:
    """A game of random decisions, stopped after ``decisions`` of them (or at its end)."""
    rng = random.Random(seed)
    game = Game(load_variant(variant_name), SeededDice(seed))
    for _ in range(decisions):
        d = game.decision
        if d is None:
            break
        if isinstance(d, PlayDecision):
            game.decide(rng.randrange(len(d.plays)))
        elif isinstance(d, DoubleDecision):
            game.decide(rng.random() < 0.3)
        else:
            game.decide("take")
    return game


# -- sizes and ids -------------------------------------------------------------------------------


def test_sizes_and_layout_cover_every_unit_once():
    assert enc.encoder_size("nardy196_v1") == 196
    assert enc.encoder_size("nardy226_v1") == 226
    for encoder in enc.ENCODERS:
        groups = enc.layout(encoder)
        assert groups[0].start == 0
        for a, b in itertools.pairwise(groups):
            assert b.start == a.start + a.size
        assert groups[-1].start + groups[-1].size == enc.encoder_size(encoder)


def test_unknown_encoder_and_misuse_are_clear_errors():
    start = load_variant("long").start_position()
    with pytest.raises(ValueError, match="unknown encoder 'x'"):
        enc.encode(start, encoder="x")
    with pytest.raises(ValueError, match="board only"):
        enc.encode(start, enc.Context(), encoder="nardy196_v1")
    with pytest.raises(ValueError, match="phase"):
        enc.Context(phase="bogus")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="1-6"):
        enc.Context(segment=(7,))


def test_default_encoder_follows_the_context():
    start = load_variant("long").start_position()
    assert enc.encode(start).shape == (196,)
    assert enc.encode(start, enc.Context()).shape == (226,)
    assert enc.encode(start, encoder="nardy226_v1").shape == (226,)
    assert enc.encode(start).dtype == np.float32


# -- board groups --------------------------------------------------------------------------------


def test_mover_points_are_tesauro_units_in_his_coordinates():
    position = load_variant("backgammon").start_position()
    x = enc.encode(position)
    for point in range(1, 25):
        n = max(position.points[point - 1], 0)
        assert point_units(x, enc.MOVER_POINTS, point) == units(n)
    assert point_units(x, enc.MOVER_POINTS, 13) == [1, 1, 1, 1.0]


def test_opponent_points_sit_at_the_mover_point_they_occupy():
    # Long nardy start: the opponent's head (his 24) is the mover's 12 (RULES.md §1.2).
    x = enc.encode(load_variant("long").start_position())
    assert point_units(x, enc.OPPONENT_POINTS, 12) == units(15) == [1, 1, 1, 6.0]
    assert sum(x[enc.OPPONENT_POINTS : enc.BAR]) == sum(units(15))
    assert point_units(x, enc.MOVER_POINTS, 24) == units(15)
    # Backgammon start: the opponent's 24 is the mover's 1.
    x = enc.encode(load_variant("backgammon").start_position())
    assert point_units(x, enc.OPPONENT_POINTS, 1) == units(2)
    assert point_units(x, enc.OPPONENT_POINTS, 19) == units(5)


def test_bar_and_off_units():
    position = Position.from_sides({6: 5, 5: 2}, {20: 3}, bar=(1, 3), off=(7, 9))
    x = enc.encode(position)
    assert list(x[enc.BAR : enc.BAR + 2]) == [0.5, 1.5]
    assert list(x[enc.OFF : enc.OFF + 2]) == pytest.approx([7 / 15, 9 / 15])


def test_off_is_divided_by_the_side_checker_count_not_15():
    # A 3-checker position (hypergammon, RULES.md §3.11): N follows from the position itself.
    points = [0] * 24
    points[0] = 1
    points[20] = -2
    position = Position(tuple(points), (0, 0), (2, 1))
    x = enc.encode(position)
    assert list(x[enc.OFF : enc.OFF + 2]) == pytest.approx([2 / 3, 1 / 3])


# -- context groups ------------------------------------------------------------------------------


def test_context_units_from_their_definition():
    ctx = enc.Context(
        phase="stage",
        segment=(4, 4, 4),
        later=(5, 5, 5, 5, 6, 6, 6, 6),
        reroll=True,
        first_turn=True,
        head_limit=2,
        cube=True,
        cube_value=8,
        cube_owner="opponent",
        match_length=7,
        score=(3, 5),
        crawford=True,
    )
    x = enc.encode(load_variant("long").start_position(), ctx)
    phase = x[enc.PHASE : enc.SEGMENT_STEPS]
    assert list(phase) == [float(p == "stage") for p in enc.PHASES]
    assert list(x[enc.SEGMENT_STEPS : enc.LATER_STEPS]) == [0, 0, 0, 0.75, 0, 0]
    assert list(x[enc.LATER_STEPS : enc.REROLL]) == [0, 0, 0, 0, 1, 1]
    assert x[enc.REROLL] == 1
    assert list(x[enc.FIRST_TURN : enc.CUBE]) == [1, 1]
    assert list(x[enc.CUBE : enc.MATCH]) == pytest.approx([1, 3 / 6, 0, 1])
    assert list(x[enc.MATCH : enc.FULL_SIZE]) == pytest.approx([1, 4 / 7, 2 / 7, 1])


def test_bare_context_is_money_play_without_cube():
    x = enc.Context().vector()
    assert x[0] == 1 and x.sum() == 1  # phase "none" only


def test_context_of_a_first_stage_of_a_progression():
    # mad: White wins the opening throw 5-3 and rolls 3-3: stages 3, 4, 5, 6 (RULES.md §2.8); the
    # first stage starts with all 15 on the head, and 3-3 earns the second head step (§3.3.4).
    game = Game(load_variant("mad"), ScriptedDice([(5, 3), (3, 3)]))
    ctx = enc.context_of(game)
    assert (ctx.phase, ctx.segment) == ("stage", (3, 3, 3, 3))
    assert ctx.later == (4,) * 4 + (5,) * 4 + (6,) * 4
    assert ctx.first_turn and ctx.head_limit == 2
    assert not ctx.reroll and not ctx.cube


def test_context_of_a_gulbar_double_announces_the_reroll():
    game = Game(load_variant("gulbar"), ScriptedDice([(5, 3), (2, 2)]), auto_forced=False)
    ctx = enc.context_of(game)
    assert (ctx.phase, ctx.segment, ctx.reroll, ctx.later) == ("roll", (2, 2, 2, 2), True, ())
    assert ctx.first_turn and ctx.head_limit == 1  # 2-2 for the first mover: M2 = M1


def test_context_of_transferred_steps_lists_the_later_groups():
    # Play random giul / mad_gulbar games until a player receives transferred steps; the first
    # group and the later ones together are exactly what the opponent handed over (§2.10).
    seen = 0
    for variant_name in ("giul", "mad_gulbar"):
        for seed in range(400):
            rng = random.Random(seed)
            game = Game(load_variant(variant_name), SeededDice(seed), auto_forced=False)
            while game.decision is not None and seen < 6:
                d = game.decision
                assert isinstance(d, PlayDecision)
                if d.segment.kind == "transfer":
                    handed = [e for e in game.events if e.kind == "transfer"][-1].data["steps"]
                    ctx = enc.context_of(game)
                    played = sorted(
                        e.data["dice"][0]
                        for e in game.events[
                            game.events.index(
                                [e for e in game.events if e.kind == "transfer"][-1]
                            ) :
                        ]
                        if e.kind == "play" and e.data["segment_kind"] == "transfer"
                    )
                    expected = [v for v, n in sorted(handed) for _ in range(n)]
                    # the groups already played, this one, then the later ones
                    earlier = [v for v, n in sorted(handed) if v in played for _ in range(n)]
                    assert earlier + list(ctx.segment) + list(ctx.later) == expected
                    seen += 1
                game.decide(rng.randrange(len(d.plays)))
            if seen >= 6:
                break
    assert seen >= 6


def test_context_of_cube_decisions():
    game = Game(load_variant("backgammon"), SeededDice(3))
    while not isinstance(game.decision, DoubleDecision):
        d = game.decision
        assert isinstance(d, PlayDecision)
        game.decide(0)
    ctx = enc.context_of(game)
    assert (ctx.phase, ctx.cube, ctx.cube_value, ctx.cube_owner) == ("double", True, 1, "centre")
    game.decide(True)
    assert isinstance(game.decision, TakeDecision)
    assert enc.context_of(game).phase == "take"
    game.decide("take")
    # The doubler rolls now; the taker owns the cube at 2.
    ctx = enc.context_of(game)
    assert (ctx.cube_value, ctx.cube_owner) == (2, "opponent")


# -- batched forms -------------------------------------------------------------------------------


@pytest.mark.parametrize("variant_name", ["backgammon", "long", "khachapuri"])
def test_encode_plays_equals_encoding_each_result(variant_name):
    for seed in range(5):
        game = play_random(variant_name, seed, 12)
        d = game.decision
        if not isinstance(d, PlayDecision):
            continue
        ctx = enc.context_of(game)
        batch = enc.encode_plays(d.plays, ctx)
        single = np.stack([enc.encode(p.result, ctx) for p in d.plays])
        assert batch.shape == (len(d.plays), 226)
        assert np.array_equal(batch, single)
        assert np.array_equal(
            enc.encode_plays(d.plays), enc.encode_batch([p.result for p in d.plays])
        )


@settings(max_examples=40, deadline=None)
@given(**GAMES)
def test_board_keys_encode_as_their_positions(variant_name, seed, decisions):
    # The search values results by the generator's board keys (encode_keys), the rest of the
    # package by positions: the same units, plakoto's pinned checkers included.
    from nardy.core.movegen import board_of
    from nardy.engines.evaluator import HeuristicEvaluator, NeuralEvaluator, key_equities
    from nardy.engines.net import NetEngine, ValueNet

    game = play_random(variant_name, seed, decisions)
    d = game.decision
    if not isinstance(d, PlayDecision):
        return
    results = [p.result for p in d.plays]
    keys = [tuple(board_of(p)) for p in results]
    assert np.array_equal(enc.encode_keys(keys), enc.encode_batch(results))
    variant = load_variant(variant_name)
    # The shipped outcome net, and a value net with the heuristic's prior unit (NetEngine).
    value_net = NetEngine(ValueNet.initial(8, np.random.default_rng(seed), {}), variant)
    value_net.net.b[:] = 0.1  # not the prior alone
    nets = [NeuralEvaluator(variant, engine=value_net)]
    try:
        nets.append(NeuralEvaluator(variant))
    except ValueError:  # a plugin's variant (CI installs the example nackgammon) ships no net
        assert variant_name == "nackgammon"
    for evaluator in (HeuristicEvaluator(variant), *nets):
        by_keys = key_equities(evaluator, keys)
        assert np.array_equal(by_keys, evaluator.afterstate_equities(results))


@settings(max_examples=40, deadline=None)
@given(**GAMES)
def test_one_position_encoder_equals_the_batched_reference(variant_name, seed, decisions):
    # encode() joins per-count byte tables (the environments' fast path); encode_into() is the
    # numpy reference: the same units, context included, for both colours' views.
    game = play_random(variant_name, seed, decisions)
    ctx = enc.context_of(game)
    positions = [game.position_for(0), game.position_for(1)]
    reference = np.zeros((2, enc.FULL_SIZE), dtype=np.float32)
    enc.encode_into(reference, positions, [ctx, ctx])
    for row, position in enumerate(positions):
        single = enc.encode(position, ctx)
        assert single.dtype == np.float32 and single.flags.writeable
        assert np.array_equal(single, reference[row])
        assert np.array_equal(enc.encode(position), reference[row, : enc.BOARD_SIZE])


def test_one_position_encoder_refuses_a_stack_beyond_its_table():
    tall = Position(points=(65,) + (0,) * 23, bar=(0, 0), off=(0, 0))
    with pytest.raises(ValueError, match="more than 64 checkers"):
        enc.encode(tall)


def test_encode_batch_of_nothing():
    assert enc.encode_batch([]).shape == (0, 196)


# -- mirror --------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(**GAMES)
def test_mirror_encoding_is_the_documented_permutation(variant_name, seed, decisions):
    game = play_random(variant_name, seed, decisions)
    variant = game.variant
    position = game.position
    flipped = variant.flip(position)
    perm = enc.mirror_permutation(variant.rules.geometry)
    x, y = enc.encode(position), enc.encode(flipped)
    assert np.array_equal(x, enc.encode_batch([position])[0])  # the single and the batched path
    ctx = enc.Context(phase="roll", segment=(6, 5), cube=True, cube_value=4, cube_owner="mover")
    assert np.array_equal(enc.encode(position, ctx), enc.encode_batch([position], ctx)[0])
    assert np.array_equal(y[perm], x)
    assert np.array_equal(x[perm], y)  # flip is an involution, so is the permutation
    # The sides swap: the mover's units of one are the opponent's units of the other.
    assert x[enc.MOVER_POINTS : enc.OPPONENT_POINTS].sum() == y[enc.OPPONENT_POINTS : enc.BAR].sum()
    assert list(x[enc.OFF : enc.OFF + 2]) == list(y[enc.OFF : enc.OFF + 2])[::-1]


def test_the_kernel_does_not_import_numpy():
    import subprocess
    import sys

    code = (
        "import sys, nardy.core, nardy.core.game, nardy.bots, nardy.core.plugins;"
        "nardy.core.load_variant('long');"
        "assert 'numpy' not in sys.modules, 'the kernel imported numpy'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
