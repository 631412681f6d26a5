"""The batched API (nardy.core.batch) against the per-call one: the same plays, in the same order."""

from __future__ import annotations

from typing import Any

import pytest
from test_oracle import _cases, _oracle_cases, _steps, _variant_id, _variants

from nardy.core import InvalidPlayError, Position, load_variant
from nardy.core.batch import BOARD, ResultBatch, legal_results
from nardy.core.movegen import board_of
from nardy.core.variant import Variant


def _check(variant: Variant, pairs: list[tuple[Position, tuple[int, ...]]]) -> None:
    """Every pair's answer in the batch is legal_plays's: dice used, results, steps, order."""
    batch = legal_results(variant, pairs, steps=True)
    assert len(batch) == len(pairs)
    assert batch.steps is not None
    row = 0
    for k, (position, dice) in enumerate(pairs):
        plays = variant.legal_plays(position, dice)
        assert batch.dice_used[k] == plays.dice_used
        assert (batch.offsets[k], batch.offsets[k + 1]) == (row, row + len(plays))
        assert batch.results(k) == [play.result for play in plays]
        for play in plays:
            board = board_of(play.result)
            assert list(batch.boards[row * BOARD : (row + 1) * BOARD]) == board[:BOARD]
            if batch.pinned is not None:  # a pinning variant: the pinned points' bits
                assert batch.pinned[row] == (board[BOARD] if len(board) > BOARD else 0)
            else:
                assert len(board) == BOARD
            encoded = [(s.src, s.dst, int(s.hit)) for s in play.steps]
            encoded += [(-1, -1, -1)] * (4 - len(encoded))
            assert list(batch.steps[row * 12 : (row + 1) * 12]) == [v for t in encoded for v in t]
            row += 1
    assert batch.play_count == row == len(batch.boards) // BOARD


def test_batch_gives_legal_plays_answers_on_the_oracle() -> None:
    variant = load_variant("backgammon")
    pairs = [(Position.from_json(c["position"]), _steps(c["dice"])) for c in _oracle_cases()]
    _check(variant, pairs)


@pytest.mark.parametrize(
    ("name", "options"), _variants(), ids=[_variant_id(n, o) for n, o in _variants()]
)
def test_batch_gives_legal_plays_answers(name: str, options: dict[str, Any]) -> None:
    variant = load_variant(name, options)
    _check(variant, list(_cases(variant, games=1, per_position=3, seed=3)))


@pytest.mark.parametrize(
    ("name", "options"), _variants(), ids=[_variant_id(n, o) for n, o in _variants()]
)
def test_board_order(name: str, options: dict[str, Any]) -> None:
    """``order="board"``: each pair's results sorted by board key (the environments' canonical
    action order, docs/encoding.md), ``play_index`` pointing at the same play in legal_plays."""
    variant = load_variant(name, options)
    pairs = list(_cases(variant, games=1, per_position=2, seed=4))
    batch = legal_results(variant, pairs, steps=True, order="board")
    in_play_order = legal_results(variant, pairs, steps=True)
    assert batch.play_index is not None and batch.steps is not None
    assert list(batch.offsets) == list(in_play_order.offsets)
    assert batch.dice_used == in_play_order.dice_used
    for k, (position, dice) in enumerate(pairs):
        plays = variant.legal_plays(position, dice)
        keys = [board_of(play.result) for play in plays]
        start, end = batch.offsets[k], batch.offsets[k + 1]
        ranks = list(batch.play_index[start:end])
        assert ranks == sorted(range(len(keys)), key=lambda i: keys[i])
        for row, rank in zip(range(start, end), ranks, strict=True):
            source = in_play_order.offsets[k] + rank
            assert (
                batch.boards[row * BOARD : (row + 1) * BOARD]
                == (in_play_order.boards[source * BOARD : (source + 1) * BOARD])
            )
            assert (
                batch.steps[row * 12 : (row + 1) * 12]
                == (in_play_order.steps[source * 12 : (source + 1) * 12])
            )
            if batch.pinned is not None and in_play_order.pinned is not None:
                assert batch.pinned[row] == in_play_order.pinned[source]
            assert batch.results(k)[row - start] == plays[rank].result
    assert in_play_order.play_index is None


def test_order_is_checked() -> None:
    variant = load_variant("backgammon")
    with pytest.raises(ValueError, match="order must be 'play' or 'board', not 'key'"):
        legal_results(variant, [], order="key")  # type: ignore[arg-type]


def test_boards_only_by_default_and_numpy_views() -> None:
    np = pytest.importorskip("numpy", reason="numpy is optional (nardy[rl] or nardy[neural])")
    variant = load_variant("backgammon")
    start = variant.start_position()
    batch = legal_results(variant, [(start, (3, 1)), (start, (2, 2, 2, 2)), (start, (6, 5))])
    assert batch.steps is None
    arrays = batch.to_numpy()
    assert "steps" not in arrays
    assert arrays["boards"].shape == (batch.play_count, BOARD)
    assert arrays["boards"].dtype == np.int8
    assert list(arrays["offsets"]) == list(batch.offsets)
    assert list(arrays["dice_used"]) == [2, 4, 2]
    expected = [board_of(p.result) for p in variant.legal_plays(start, (6, 5))]
    assert arrays["boards"][batch.offsets[2] : batch.offsets[3]].tolist() == expected
    with_steps = legal_results(variant, [(start, (3, 1))], steps=True).to_numpy()
    assert with_steps["steps"].shape == (16, 4, 3)
    by_board = legal_results(variant, [(start, (3, 1))], order="board").to_numpy()
    assert by_board["play_index"].dtype == np.int32
    assert sorted(by_board["play_index"].tolist()) == list(range(16))
    assert "play_index" not in arrays


def test_empty_batch() -> None:
    batch = legal_results(load_variant("long"), [])
    assert len(batch) == 0 and batch.play_count == 0 and list(batch.offsets) == [0]
    assert isinstance(batch, ResultBatch)


def test_an_impossible_pair_is_named() -> None:
    variant = load_variant("backgammon")
    start = variant.start_position()
    with pytest.raises(InvalidPlayError, match=r"^pair 1: a segment is two different dice"):
        legal_results(variant, [(start, (3, 1)), (start, (2, 3, 4))])
