"""Legal-play generation benchmarks (pytest-benchmark).

    pytest benchmarks/test_movegen.py                      # measure
    pytest benchmarks/test_movegen.py --benchmark-disable  # run each once, as a quick check

Groups: ``oracle`` (the 2,550 backgammon oracle cases through the public API, Position creation
included, and as ``nardy plays --jsonl`` queries), ``position`` (single positions: opening, contact, doubles, bear-off, bar, the worst
case), ``corpus`` (per variant, the positions of seeded random games), ``one-position`` (the
same corpus, each position a call: ``legal_plays`` against the C batch generator with a batch of
one, issue 36's "a single position being a batch of one") and ``game`` (one full seeded random
game per variant). The corpus benchmarks report positions/s in ``extra_info``.
docs/performance.md has measured figures and benchmarks/measure_movegen.py the script behind them.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest
from movegen_corpus import OracleCase, random_game

from nardy.core import game_variant_names, load_variant
from nardy.core.batch import BOARD, legal_results, native_rules
from nardy.core.jsonl import run_jsonl_stream
from nardy.core.position import Position

# -- the oracle corpus -----------------------------------------------------------------------------


@pytest.mark.benchmark(group="oracle")
def test_oracle_legal_plays(benchmark, oracle_cases: list[OracleCase]) -> None:
    """``legal_plays(Position.from_json(p), steps)`` over every oracle case, as a user calls it."""
    legal_plays = load_variant("backgammon").legal_plays
    from_json = Position.from_json
    inputs = [(c.position, c.steps) for c in oracle_cases]

    def run() -> int:
        return sum(len(legal_plays(from_json(p), s)) for p, s in inputs)

    total = benchmark.pedantic(run, rounds=5, warmup_rounds=1)
    assert total == sum(c.results for c in oracle_cases)
    if benchmark.stats is not None:
        benchmark.extra_info["positions"] = len(inputs)
        benchmark.extra_info["positions_per_s"] = round(len(inputs) / benchmark.stats.stats.median)


@pytest.mark.benchmark(group="oracle")
def test_oracle_jsonl(benchmark, oracle_cases: list[OracleCase]) -> None:
    """The loop of ``nardy plays --jsonl`` (``run_jsonl_stream``) over the oracle as query lines:
    parsing, validation, generation and the answers' text."""
    variant = load_variant("backgammon")
    data = "".join(
        json.dumps({"position": c.position, "dice": [c.steps[0], c.steps[-1]]}) + "\n"
        for c in oracle_cases
    ).encode()

    def run() -> int:
        out = io.StringIO()
        stats = run_jsonl_stream(variant, io.BytesIO(data), out)
        assert stats.errors == 0
        return out.getvalue().count('"text"')

    total = benchmark.pedantic(run, rounds=5, warmup_rounds=1)
    assert total == sum(c.results for c in oracle_cases)
    if benchmark.stats is not None:
        benchmark.extra_info["queries"] = len(oracle_cases)
        benchmark.extra_info["queries_per_s"] = round(
            len(oracle_cases) / benchmark.stats.stats.median
        )


@pytest.mark.benchmark(group="oracle")
@pytest.mark.parametrize("kind", ["doubles", "non-doubles"])
def test_oracle_segment(benchmark, oracle_cases: list[OracleCase], kind: str) -> None:
    """The generator alone (``generator.segment``) on pre-built positions, doubles or not."""
    segment = load_variant("backgammon").generator.segment
    cases = [c for c in oracle_cases if c.doubles == (kind == "doubles")]
    inputs = [(Position.from_json(c.position), c.steps) for c in cases]

    def run() -> int:
        return sum(len(segment(p, s).plays) for p, s in inputs)

    total = benchmark.pedantic(run, rounds=5, warmup_rounds=1)
    assert total == sum(c.results for c in cases)
    if benchmark.stats is not None:
        benchmark.extra_info["positions"] = len(inputs)
        benchmark.extra_info["positions_per_s"] = round(len(inputs) / benchmark.stats.stats.median)


# -- single positions ------------------------------------------------------------------------------

START = "b----E/-C---e/E---c-/e----B"
POSITIONS: dict[str, tuple[str, tuple[int, ...], int]] = {
    # name: (backgammon position id, steps, number of legal plays)
    "opening-31": (START, (3, 1), 16),
    "opening-44": (START, (4, 4, 4, 4), 52),
    "contact-21": ("--Bc-F/BA---d/B---a-/e-b-AA", (2, 1), 30),
    "contact-44": ("-CCBbB/a---Aa/-B-b--/c-AAcc", (4, 4, 4, 4), 64),
    "bar-41": ("a--ABD/---A-c/DAa--a/eAb-aa:1,0", (4, 1), 7),
    "bearoff-54": ("C--BC-/aaa--a/-b-a-a/aaa---", (5, 4), 2),
    "race-22": ("EBCAAA/---A--/A-a-a-/-aaacg", (2, 2, 2, 2), 64),
    "worst-11": ("aAaBaC/aAba-B/A-A-aA/-BAc-d", (1, 1, 1, 1), 721),
}


@pytest.mark.benchmark(group="position")
@pytest.mark.parametrize("name", list(POSITIONS))
def test_position(benchmark, name: str) -> None:
    """One ``legal_plays`` call on a backgammon position."""
    position_id, steps, count = POSITIONS[name]
    variant = load_variant("backgammon")
    position = Position.from_id(position_id)
    plays = benchmark(variant.legal_plays, position, steps)
    assert len(plays) == count


# -- per variant -----------------------------------------------------------------------------------


@pytest.mark.benchmark(group="corpus")
@pytest.mark.parametrize("name", game_variant_names())
def test_variant_corpus(
    benchmark, name: str, variant_corpus: Callable[[str], list[tuple[Position, tuple[int, ...]]]]
) -> None:
    """``legal_plays`` over every play decision of seeded random games of the variant."""
    legal_plays = load_variant(name).legal_plays
    corpus = variant_corpus(name)

    def run() -> int:
        return sum(len(legal_plays(p, s)) for p, s in corpus)

    total = benchmark.pedantic(run, rounds=3, warmup_rounds=1)
    assert total >= len(corpus)
    if benchmark.stats is not None:
        benchmark.extra_info["positions"] = len(corpus)
        benchmark.extra_info["positions_per_s"] = round(len(corpus) / benchmark.stats.stats.median)


@pytest.mark.benchmark(group="one-position")
@pytest.mark.parametrize("path", ["legal_plays", "c-batch-of-one"])
@pytest.mark.parametrize("name", ["backgammon", "long", "giul", "plakoto"])
def test_one_position_a_call(
    benchmark,
    name: str,
    path: str,
    variant_corpus: Callable[[str], list[tuple[Position, tuple[int, ...]]]],
) -> None:
    """Every position of the corpus by itself, through the compiled generator's ``legal_plays``
    (its results' board keys) or ``legal_results`` with one pair and its steps (the C path), the
    same board keys built from its arrays: the same plays either way, counted."""
    variant = load_variant(name)
    corpus = variant_corpus(name)
    if path == "c-batch-of-one" and native_rules(variant) is None:
        pytest.skip("the C batch generator is not built here (a pure install)")

    def by_legal_plays() -> int:
        return sum(len(variant.legal_plays(p, s).board_keys()) for p, s in corpus)

    def by_batch_of_one() -> int:
        # The board keys legal_plays gives (tuples of 28 ints), built from the C arrays.
        total = 0
        for p, s in corpus:
            batch = legal_results(variant, [(p, s)], steps=True)
            boards = batch.boards
            keys = [tuple(boards[i : i + BOARD]) for i in range(0, len(boards), BOARD)]
            total += len(keys)
        return total

    run = by_legal_plays if path == "legal_plays" else by_batch_of_one
    total = benchmark.pedantic(run, rounds=3, warmup_rounds=1)
    assert total == by_legal_plays()
    if benchmark.stats is not None:
        benchmark.extra_info["positions_per_s"] = round(len(corpus) / benchmark.stats.stats.median)


@pytest.mark.benchmark(group="game")
@pytest.mark.parametrize("name", game_variant_names())
def test_random_game(benchmark, name: str) -> None:
    """One whole game (seeded dice, seeded random choices) through :class:`Game`."""
    variant = load_variant(name)
    plays = benchmark.pedantic(random_game, args=(variant, 7), rounds=3, warmup_rounds=1)
    assert plays > 10
