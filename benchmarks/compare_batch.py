"""Batched legal results (``nardy.core.batch``) side by side with gnubg-nn's C generator, per result.

    python benchmarks/compare_batch.py [--reps 7] [--min-pass-seconds 0.3]

On the oracle corpus (tests/data/backgammon-oracle.jsonl.gz: 2,550 backgammon cases with their
complete result sets), in one process, every mode in every repetition (in an order rotated by one
each repetition; ``gc.collect()`` before each pass; a pass loops over the corpus until it lasts
``--min-pass-seconds``), timed by this thread's CPU time:

* ``gnubg-nn moves``: ``gnubg_nn.moves(board, die1, die2)`` per case (gnubg's ``GenerateMoves``,
  a position key string per distinct result), its arguments prepared beforehand;
* ``nardy C batch``: one ``legal_results(variant, pairs)`` call over the whole corpus (the C
  generator, ``nardy.core._batchgen``), the same with ``steps=True``, and with ``order="board"``
  (each pair's results sorted by board, the learning environments' action order);
* ``nardy C per call``: ``legal_results(variant, [pair])`` per case (a one-pair batch a call);
* ``nardy mypyc batch``: one ``legal_results`` call with the C path off (the compiled generator
  per pair, its dict of result tuples copied into the arrays: the path before the C one).

Results per CPU-second count the oracle's distinct results (the same number for every engine:
each gives every distinct result once; a case without a legal play counts one); per call is CPU
time over cases. Before timing, every mode's answers are checked against the oracle (agreement).
Needs ``gnubg-nn`` (``pip install gnubg-nn``, in ``nardy[bench]``) and the compiled build.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from engines import key_of_sides, sides_of_json  # noqa: E402  (needs the path above)

from nardy.core import Position, _engine, batch, load_variant  # noqa: E402
from nardy.core.batch import BOARD, legal_results  # noqa: E402

ORACLE = ROOT / "tests" / "data" / "backgammon-oracle.jsonl.gz"


def load_cases() -> list[dict[str, Any]]:
    with gzip.open(ORACLE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def steps_of(dice: list[int]) -> tuple[int, ...]:
    return (dice[0],) * 4 if dice[0] == dice[1] else (dice[0], dice[1])


def key_of_board(board: bytes) -> tuple[int, ...]:
    """A nardy result board (mover's view, 28 signed bytes) as gnubg's key (engines.key_of_sides:
    24 points, bars, borne-off counts)."""
    b = [v - 256 if v > 127 else v for v in board]
    return (*b[1:25], b[25], b[26], b[0], b[27])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--min-pass-seconds", type=float, default=0.3)
    args = parser.parse_args()
    try:
        import gnubg_nn
    except ImportError:
        sys.exit("needs gnubg-nn: pip install gnubg-nn (or the nardy[bench] extra)")
    if batch.NATIVE is None:
        sys.exit("needs the C batch generator (the compiled build, NARDY_MOVEGEN not 'pure')")

    variant = load_variant("backgammon")
    cases = load_cases()
    pairs = [(Position.from_json(c["position"]), steps_of(c["dice"])) for c in cases]
    gnubg_args = []
    expected = []
    for case in cases:
        mover, opponent = sides_of_json(case["position"])
        gnubg_args.append(((tuple(opponent), tuple(mover)), case["dice"][0], case["dice"][1]))
        results = set()
        for r in case["results"]:
            m, o = sides_of_json(r)
            results.add(key_of_sides(m, o))
        expected.append(frozenset(results))
    total_results = sum(len(e) for e in expected)

    # Agreement with the oracle (untimed).
    moves = gnubg_nn.moves
    from_key = gnubg_nn.board_from_position_key
    gnubg_agree = 0
    for (board, d1, d2), want in zip(gnubg_args, expected, strict=True):
        out = moves(board, d1, d2)
        got = {key_of_sides(m, o) for o, m in map(from_key, out)} if out else None
        if got is None:  # no legal play: the position itself
            got = {key_of_sides(board[1], board[0])}
        gnubg_agree += got == want
    found = legal_results(variant, pairs)
    boards = found.boards.tobytes()
    nardy_agree = 0
    for k, want in enumerate(expected):
        rows = range(found.offsets[k], found.offsets[k + 1])
        got = {key_of_board(boards[r * BOARD : (r + 1) * BOARD]) for r in rows}
        nardy_agree += got == want and len(rows) == len(want)

    def gnubg_pass() -> None:
        for board, d1, d2 in gnubg_args:
            moves(board, d1, d2)

    def c_batch() -> None:
        legal_results(variant, pairs)

    def c_batch_steps() -> None:
        legal_results(variant, pairs, steps=True)

    def c_batch_by_board() -> None:
        legal_results(variant, pairs, order="board")

    def c_per_call() -> None:
        for pair in pairs:
            legal_results(variant, [pair])

    def mypyc_batch() -> None:
        native = batch.NATIVE
        batch.NATIVE = None
        try:
            legal_results(variant, pairs)
        finally:
            batch.NATIVE = native

    modes: list[tuple[str, Callable[[], None]]] = [
        ("gnubg-nn moves", gnubg_pass),
        ("nardy C batch", c_batch),
        ("nardy C batch, steps", c_batch_steps),
        ("nardy C batch, by board", c_batch_by_board),
        ("nardy C per call", c_per_call),
        ("nardy mypyc batch", mypyc_batch),
    ]
    seconds: dict[str, list[float]] = {name: [] for name, _ in modes}
    for rep in range(args.reps):
        order = modes[rep % len(modes) :] + modes[: rep % len(modes)]
        for name, run in order:
            gc.collect()
            loops = 0
            start = time.thread_time()
            while True:
                run()
                loops += 1
                spent = time.thread_time() - start
                if spent >= args.min_pass_seconds:
                    break
            seconds[name].append(spent / loops)

    print(
        f"oracle corpus: {len(cases)} cases, {total_results} distinct results; "
        f"{args.reps} repetitions; {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}; generator: {_engine.DETAIL}"
    )
    print(
        f"agreement with the oracle: gnubg-nn {gnubg_agree}/{len(cases)}, nardy {nardy_agree}/{len(cases)}"
    )
    base = statistics.median(seconds["gnubg-nn moves"])
    print()
    print("| mode | results per CPU-second | × gnubg-nn | µs per result | µs per case |")
    print("|---|---|---|---|---|")
    for name, _ in modes:
        median = statistics.median(seconds[name])
        low, high = min(seconds[name]), max(seconds[name])
        print(
            f"| {name} | {total_results / median:,.0f} "
            f"[{total_results / high:,.0f}–{total_results / low:,.0f}] | {base / median:.2f} "
            f"| {median * 1e6 / total_results:.3f} | {median * 1e6 / len(cases):.2f} |"
        )


if __name__ == "__main__":
    main()
