"""The encoders with pinned checkers (RULES.md §3.12.2, docs/encoding.md "Pinned checkers"): the
196 board units represent a pin without ambiguity (an independent decoder written from the
documented layout gets every pinned position back), the batched forms and the afterstates agree
with the single encoding, the mirror property holds, and the environments observe plakoto with
its pins."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="the rl extra (numpy) is not installed")

from pinned_positions import pinned_positions  # noqa: E402

from nardy import encoding as enc  # noqa: E402
from nardy.core import Position, load_variant  # noqa: E402


def _decode(x: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...], tuple[float, float]]:
    """(points, pinned, off ratios) read back from board units, from docs/encoding.md's layout:
    four units per point and side ``[n ≥ 1, n ≥ 2, n ≥ 3, max(n − 3, 0) / 2]``, a pinned checker's
    block ``[1, 0, 0, −½]``."""
    points = [0] * 24
    pinned = []
    for point in range(1, 25):
        blocks = []
        for start in (0, 96):
            u = [float(v) for v in x[start + (point - 1) * 4 : start + point * 4]]
            if u == [1.0, 0.0, 0.0, -0.5]:
                blocks.append("pinned")
            else:
                blocks.append(int(u[0] + u[1] + u[2] + 2 * u[3]))
        mover, opponent = blocks
        if "pinned" in blocks:
            pinned.append(point)
            stack = opponent if mover == "pinned" else mover
            assert isinstance(stack, int) and stack >= 1
            points[point - 1] = -stack if mover == "pinned" else stack
        else:
            assert isinstance(mover, int) and isinstance(opponent, int)
            assert not (mover and opponent)
            points[point - 1] = mover - opponent
    return tuple(points), tuple(pinned), (float(x[194]), float(x[195]))


def test_every_pinned_position_decodes_back() -> None:
    positions = pinned_positions()
    assert len(positions) > 100
    for position in positions:
        x = enc.encode(position)
        points, pinned, off = _decode(x)
        assert points == position.points and pinned == position.pinned, position
        # off / N with N = 15: the pinned checkers count among their owner's checkers.
        assert off == pytest.approx((position.off[0] / 15, position.off[1] / 15))


def test_pins_tell_whose_checker_is_pinned() -> None:
    # One checker each on the mover's 5-point: White's pinning Black's, or Black's pinning White's.
    white_pins = Position.from_sides({5: 1}, {}, pinned=[5])
    black_pins = Position.from_sides({}, {5: 1}, pinned=[5])
    a, b = enc.encode(white_pins), enc.encode(black_pins)
    assert not np.array_equal(a, b)
    assert list(a[16:20]) == [1, 0, 0, 0] and list(a[96 + 16 : 96 + 20]) == list(enc.PINNED_UNITS)
    assert list(b[16:20]) == list(enc.PINNED_UNITS) and list(b[96 + 16 : 96 + 20]) == [1, 0, 0, 0]


def test_batches_and_afterstates_agree_with_the_single_encoding() -> None:
    variant = load_variant("plakoto")
    positions = list(pinned_positions()[:60])
    context = enc.Context(phase="roll", segment=(6, 5))
    batch = enc.encode_batch(positions, context)
    for row, position in zip(batch, positions, strict=True):
        np.testing.assert_array_equal(row, enc.encode(position, context))
    checked = 0
    for position in positions:
        plays = variant.legal_plays(position, (6, 5))
        rows = enc.encode_plays(plays)
        for row, play in zip(rows, plays, strict=True):
            np.testing.assert_array_equal(row, enc.encode(play.result))
            checked += bool(play.result.pinned)
    assert checked > 100


def test_the_mirror_property_holds_with_pins() -> None:
    perm = enc.mirror_permutation("opposite")
    for position in pinned_positions()[:80]:
        x = enc.encode(position)
        np.testing.assert_array_equal(enc.encode(position.flip("opposite"))[perm], x)


def test_positions_without_pins_are_untouched() -> None:
    # The backgammon opening, unit by unit from the documented layout: no unit is PINNED_UNITS.
    x = enc.encode(load_variant("backgammon").start_position())
    for point, n in ((24, 2), (13, 5), (8, 3), (6, 5)):
        start = (point - 1) * 4
        assert list(x[start : start + 4]) == [1.0, float(n >= 2), float(n >= 3), max(n - 3, 0) / 2]
    assert (x[:192] >= 0).all()


def test_the_environment_observes_plakoto_pins() -> None:
    gymnasium = pytest.importorskip("gymnasium")
    from nardy.env.registration import env_id

    env = gymnasium.make(env_id("plakoto"), opponent="random")
    observation, info = env.reset(seed=5)
    seen_pins = 0
    for _ in range(400):
        mask = info["action_mask"]
        action = int(np.flatnonzero(mask)[0])
        observation, _, terminated, truncated, info = env.step(action)
        board = observation["observation"][:192].reshape(48, 4)
        seen_pins += int((board[:, 3] < 0).sum())
        if terminated or truncated:
            observation, info = env.reset()
    assert seen_pins > 0
    env.close()


def test_encode_into_writes_the_pins_as_encode_batch_does() -> None:
    # The vector environments' observations (encode_into) must show a pin like every other form.
    positions = list(pinned_positions()[:60])
    contexts = [enc.Context(phase="roll", segment=(6, 5))] * len(positions)
    board = np.full((len(positions), enc.BOARD_SIZE), np.nan, dtype=np.float32)
    enc.encode_into(board, positions)
    np.testing.assert_array_equal(board, enc.encode_batch(positions))
    full = np.full((len(positions), enc.FULL_SIZE), np.nan, dtype=np.float32)
    enc.encode_into(full, positions, contexts)
    np.testing.assert_array_equal(full, enc.encode_batch(positions, contexts[0]))
    assert (board[:, :192] < 0).any(), "the sample holds pinned checkers"
