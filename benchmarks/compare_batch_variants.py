"""Batched legal results per variant: the C generator against the batch path without it.

    python benchmarks/compare_batch_variants.py [--games 6] [--reps 5] [--variants a,b:key=value,...]

For each variant, its corpus of every play decision of ``--games`` seeded random games
(movegen_corpus.game_corpus), in one process, each repetition timing both modes in an order
rotated by one (``gc.collect()`` before each pass), by this thread's CPU time:

* ``C``: one ``legal_results(variant, pairs)`` call over the corpus (``nardy.core._batchgen``,
  with the pairs it leaves to ``legal_plays``);
* ``mypyc``: the same call with the C path off (the compiled generator per pair, the path before
  the C one).

Printed per variant: the results, the share of pairs the C generator answers itself, µs per result
of each mode (median [min–max] over the repetitions) and the paired speed-up (mypyc time over C
time within each repetition, median). Both modes' answers are checked equal before timing. Needs
the compiled build (the C extension).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from movegen_corpus import game_corpus  # noqa: E402  (needs the path above)

from nardy.core import Position, batch, load_variant  # noqa: E402
from nardy.core.batch import ResultBatch, legal_results  # noqa: E402
from nardy.core.variant import Variant  # noqa: E402

DEFAULT = (
    "backgammon,long,nardgammon,mad,mad:home_moves=never,mad_gulbar,fevga,"
    "fevga:quarter_timing=every_step,giul,plakoto,plakoto:mother=simple"
)
"""Variants, each with its options after a colon (``name:key=value:key=value``)."""


def _answered_in_c(variant: Variant, pairs: list[Any]) -> int:
    """How many pairs the C generator answers without ``legal_plays``."""
    rules = batch.native_rules(variant)
    assert batch.NATIVE is not None and rules is not None
    answered = start = 0
    pinned = bytearray() if variant.rules.hitting.pins else None
    while start < len(pairs):
        end = batch.NATIVE.legal_results(
            pairs,
            start,
            Position,
            rules,
            bytearray(8),
            bytearray(),
            bytearray(),
            None,
            None,
            pinned,
        )
        answered += end - start
        start = end + 1
    return answered


def _timed(variant: Variant, pairs: list[Any], native: Any) -> tuple[float, ResultBatch]:
    saved = batch.NATIVE
    batch.NATIVE = native
    batch._RULES.clear()  # native_rules is cached per variant: made again for this mode
    try:
        gc.collect()
        start = time.thread_time()
        found = legal_results(variant, pairs)
        return time.thread_time() - start, found
    finally:
        batch.NATIVE = saved
        batch._RULES.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--variants", default=DEFAULT)
    args = parser.parse_args()
    native = batch.NATIVE
    if native is None:
        sys.exit("needs the C batch generator (the compiled build, NARDY_MOVEGEN not 'pure')")
    print("| variant | pairs | results | in C | C µs/result | mypyc µs/result | C speed-up |")
    print("|---|---|---|---|---|---|---|")
    for spec in args.variants.split(","):
        name, *settings = spec.split(":")
        variant = load_variant(name, dict(setting.split("=", 1) for setting in settings))
        name = spec
        if batch.native_rules(variant) is None:
            print(f"| {name} | – | – | not taken by the C path | | | |")
            continue
        pairs = game_corpus(variant, args.games)
        c_found = _timed(variant, pairs, native)[1]
        if c_found != _timed(variant, pairs, None)[1]:
            sys.exit(f"{name}: the C and mypyc answers differ")
        results = c_found.play_count
        times: dict[str, list[float]] = {"C": [], "mypyc": []}
        modes = [("C", native), ("mypyc", None)]
        for rep in range(args.reps):
            for label, module in modes[rep % 2 :] + modes[: rep % 2]:
                times[label].append(_timed(variant, pairs, module)[0])
        ratio = statistics.median(m / c for c, m in zip(times["C"], times["mypyc"], strict=True))
        share = _answered_in_c(variant, pairs) / len(pairs)
        print(
            f"| {name} | {len(pairs)} | {results} | {share:.1%} | "
            f"{_per_result(times['C'], results)} | {_per_result(times['mypyc'], results)} | "
            f"{ratio:.1f}× |"
        )


def _per_result(seconds: list[float], results: int) -> str:
    """µs per result, median [min–max]."""
    scaled = [1e6 * v / results for v in seconds]
    return f"{statistics.median(scaled):.3f} [{min(scaled):.3f}–{max(scaled):.3f}]"


if __name__ == "__main__":
    main()
