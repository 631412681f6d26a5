"""Measure legal-play generation: the figures of docs/performance.md.

    python benchmarks/measure_movegen.py [--reps 7] [--games 6] [--baseline REV] [--out FILE]

Every repetition runs every measurement once, in an order rotated by one each repetition, so
that slow phases of a shared machine spread over all of them; the report gives the median and
the range (min-max) over the repetitions. ``gc.collect()`` runs before each pass. Measurements:

* **oracle**: ``legal_plays(Position.from_json(p), steps)`` over the 2,550 cases of
  tests/data/backgammon-oracle.jsonl.gz (positions/s, wall clock and process CPU time);
* **corpus <variant>**: ``legal_plays(position, steps)`` over every play decision of ``--games``
  seeded random games of each variant (positions built beforehand), wall clock and process CPU
  time; with backgammon among the variants, also backgammon's rate over each other variant's,
  paired within each repetition (CPU time: how many times slower than backgammon it is);
* **latency**: one clock read around every ``legal_plays`` call over the oracle positions, doubles
  and non-doubles apart (p50/p99 over all calls of all repetitions);
* **games <variant>**: whole seeded games with seeded random choices through ``Game`` (games/s).

``--baseline REV`` also measures the generator of another revision (``git show
REV:core/movegen.py``, loaded as a module and swapped into copies of the variants), interleaved
with the current one, e.g. ``--baseline HEAD`` before committing a change.
"""

from __future__ import annotations

import argparse
import copy
import gc
import importlib.util
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from movegen_corpus import game_corpus, load_oracle, random_game  # noqa: E402

from nardy.core import game_variant_names, load_variant  # noqa: E402
from nardy.core.position import Position  # noqa: E402
from nardy.core.variant import Variant  # noqa: E402

GAME_SEEDS = (7, 8, 9)


def load_revision(rev: str) -> ModuleType:
    """core/movegen.py of a git revision, as a module."""
    source = subprocess.run(
        ["git", "show", f"{rev}:core/movegen.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "movegen_baseline.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("movegen_baseline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["movegen_baseline"] = module
    spec.loader.exec_module(module)
    return module


def with_generator(variant: Variant, module: ModuleType | None) -> Variant:
    if module is None:
        return variant
    if not hasattr(module.MoveGenerator, "checked_segment"):
        # Variant.legal_plays calls checked_segment and reads SegmentPlays.dice (added together).
        sys.exit(
            "--baseline: that revision's generator predates MoveGenerator.checked_segment, which "
            "the variants call now; compare with an older release as a whole with "
            "benchmarks/compare_releases.py"
        )
    other = copy.copy(variant)
    other.generator = module.MoveGenerator(variant.rules)
    return other


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one call."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def fmt(values: list[float], digits: int = 0) -> str:
    med = statistics.median(values)
    return f"{med:,.{digits}f} [{min(values):,.{digits}f}-{max(values):,.{digits}f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--games", type=int, default=6, help="random games per variant corpus")
    parser.add_argument("--baseline", help="git revision whose core/movegen.py to compare")
    parser.add_argument("--variants", help="comma-separated variant names (default: all)")
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args()

    impls: dict[str, ModuleType | None] = {"current": None}
    if args.baseline:
        impls[f"baseline {args.baseline}"] = load_revision(args.baseline)
    names = args.variants.split(",") if args.variants else game_variant_names()

    oracle = load_oracle()
    oracle_json = [(c.position, c.steps) for c in oracle]
    oracle_positions = [(Position.from_json(c.position), c.steps) for c in oracle]
    corpora = {name: game_corpus(load_variant(name), args.games) for name in names}

    # (measure, implementation) -> list of per-repetition values
    results: dict[tuple[str, str], list[float]] = {}
    latencies: dict[tuple[str, str], list[int]] = {}
    tasks: list[tuple[str, str, Callable[[], None]]] = []

    for label, module in impls.items():
        bg = with_generator(load_variant("backgammon"), module)

        def oracle_pass(v: Variant = bg, label: str = label) -> None:
            legal_plays, from_json = v.legal_plays, Position.from_json

            def run() -> None:
                for p, s in oracle_json:
                    legal_plays(from_json(p), s)

            wall, cpu = timed(run)
            results.setdefault(("oracle positions/s (wall)", label), []).append(len(oracle) / wall)
            results.setdefault(("oracle positions/s (CPU)", label), []).append(len(oracle) / cpu)

        def latency_pass(v: Variant = bg, label: str = label) -> None:
            legal_plays, clock = v.legal_plays, time.perf_counter_ns
            gc.collect()
            for p, s in oracle_positions:
                start = clock()
                legal_plays(p, s)
                took = clock() - start
                kind = "doubles" if len(s) != 2 else "non-doubles"
                latencies.setdefault((kind, label), []).append(took)

        tasks.append(("oracle", label, oracle_pass))
        tasks.append(("latency", label, latency_pass))
        for name in names:
            variant = with_generator(load_variant(name), module)
            corpus = corpora[name]

            def corpus_pass(
                v: Variant = variant, c: list[Any] = corpus, name: str = name, label: str = label
            ) -> None:
                legal_plays = v.legal_plays

                def run() -> None:
                    for p, s in c:
                        legal_plays(p, s)

                wall, cpu = timed(run)
                results.setdefault((f"corpus {name} positions/s", label), []).append(len(c) / wall)
                results.setdefault((f"corpus {name} positions/s (CPU)", label), []).append(
                    len(c) / cpu
                )

            def games_pass(v: Variant = variant, name: str = name, label: str = label) -> None:
                def run() -> None:
                    for seed in GAME_SEEDS:
                        random_game(v, seed)

                wall, _ = timed(run)
                results.setdefault((f"games {name} games/s", label), []).append(
                    len(GAME_SEEDS) / wall
                )

            tasks.append((f"corpus {name}", label, corpus_pass))
            tasks.append((f"games {name}", label, games_pass))

    for _, _, task in tasks:  # warm-up
        task()
    results.clear()
    latencies.clear()
    for rep in range(args.reps):
        shift = rep % len(tasks)
        for _, _, task in tasks[shift:] + tasks[:shift]:
            task()
        print(f"repetition {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)

    lines = [
        f"date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"machine: {platform.machine()}, {_cpus()} CPUs, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}",
        f"command: python benchmarks/measure_movegen.py {' '.join(sys.argv[1:])}".rstrip(),
        f"repetitions: {args.reps}; corpus: {args.games} seeded random games per variant; "
        f"games: seeds {GAME_SEEDS}",
        "",
        "| measure | " + " | ".join(impls) + " |",
        "|---|" + "---|" * len(impls),
    ]
    measures = list(dict.fromkeys(m for m, _ in results))
    for measure in measures:
        digits = 1 if "games/s" in measure else 0
        cells = [fmt(results[(measure, label)], digits) for label in impls]
        lines.append(f"| {measure} | " + " | ".join(cells) + " |")
    if "backgammon" in names:
        # backgammon's rate over each variant's, paired within each repetition (CPU time): how
        # many times slower than backgammon a variant generates (1.5 at most is the goal).
        for name in names:
            if name == "backgammon":
                continue
            cells = []
            for label in impls:
                base = results[("corpus backgammon positions/s (CPU)", label)]
                mine = results[(f"corpus {name} positions/s (CPU)", label)]
                cells.append(fmt([b / m for b, m in zip(base, mine, strict=True)], 2))
            lines.append(
                f"| corpus backgammon ÷ {name} (CPU, paired) | " + " | ".join(cells) + " |"
            )
    for kind in ("non-doubles", "doubles"):
        cells = []
        for label in impls:
            values = sorted(latencies[(kind, label)])
            p50 = values[len(values) // 2] / 1000
            p99 = values[min(len(values) - 1, int(len(values) * 0.99))] / 1000
            cells.append(f"p50 {p50:.1f} us, p99 {p99:.1f} us")
        lines.append(f"| oracle latency, {kind} | " + " | ".join(cells) + " |")
    sizes = ", ".join(f"{name} {len(corpora[name])}" for name in names)
    lines += ["", f"corpus sizes (positions): {sizes}"]
    report = "\n".join(lines)
    print(report)
    if args.out:
        Path(args.out).write_text(report + "\n", encoding="utf-8")


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0


if __name__ == "__main__":
    main()
