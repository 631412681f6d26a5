"""nardy's legal-play generation side by side with reference engines, in one process, interleaved.

    python benchmarks/compare_engines.py [--reps 5] [--corpus all|oracle|openspiel]
                                         [--engines nardy,bgsage,open_spiel,gnubg] [--out docs/engines.md]

For every corpus case (position, dice) each engine mode answers "all legal plays", timed:

* every case is converted into each engine's own position/dice representation **once**, before any
  timing (``benchmarks/engines/<engine>.py``, :attr:`Mode.prepare`);
* an untimed first pass over the corpus warms every mode up and turns each answer back into result
  positions, which are compared with the reference sets (the oracle file's, or for the OpenSpiel corpus
  the sets on which bgsage and gnubg agree): the *agreement* column;
* then ``--reps`` repetitions; in each, every mode (in an order rotated by one each repetition) makes a
  throughput pass (clock reads around the whole corpus, looped so that a pass lasts at least
  ``--min-pass-seconds`` → positions/s of wall-clock and of thread CPU time), and then every mode makes
  a latency pass (a clock read around every call → per-call p50/p99, doubles and non-doubles apart).
  ``gc.collect()`` runs before each pass; the garbage collector stays on during it.

Corpora: ``oracle`` is ``tests/data/backgammon-oracle.jsonl.gz`` (2,550 cases with their complete result
sets). OpenSpiel cannot be set to an arbitrary position from Python, so ``openspiel`` is a second corpus of
turn-start positions from seeded random OpenSpiel games, which every engine runs. Engines whose package is
missing are skipped with the reason in the output; install them with ``pip install -e '.[bench]' --config-settings editable_mode=strict``.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import importlib
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from engines import (  # noqa: E402  (needs the path above)
    ENGINE_NAMES,
    Case,
    Engine,
    EngineUnavailable,
    Key,
    Mode,
    Unsupported,
    key_of_json,
)

ORACLE_PATH = ROOT / "tests" / "data" / "backgammon-oracle.jsonl.gz"
CORPORA = ("oracle", "openspiel")
REFERENCE_MODES = ("bgsage possible_moves", "gnubg-nn moves")
"""Modes whose agreeing answers make the reference of the OpenSpiel corpus (the oracle file was made the
same way, from gnubg's and bgsage's generators)."""
FALLBACK_REFERENCE = "nardy segment"
NARDY_RATIO_MODES = ("nardy legal_plays", "nardy segment")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- data ----------------------------------------------------------------------------------------------


@dataclass
class Corpus:
    name: str
    description: str
    cases: list[Case]
    reference: str = "the oracle file's result sets"

    @property
    def doubles(self) -> int:
        return sum(case.doubles for case in self.cases)


@dataclass
class Agreement:
    compared: int = 0
    """Cases with a reference set."""
    agree: int = 0
    by_count: int = 0
    """Cases checked by the number of distinct results only (the engine's answer has no positions)."""
    mismatches: list[str] = field(default_factory=list)


@dataclass
class Row:
    engine: Engine
    mode: Mode
    prepared: list[tuple[Any, ...]]
    outputs: list[frozenset[Key] | int] = field(default_factory=list)
    loops: int = 1
    """Corpus loops per throughput pass."""
    rates: list[float] = field(default_factory=list)
    """Positions per wall-clock second, one per repetition."""
    cpu_rates: list[float] = field(default_factory=list)
    """Positions per second of this thread's CPU time, one per repetition."""
    single_ns: list[int] = field(default_factory=list)
    doubles_ns: list[int] = field(default_factory=list)
    case_ns: list[list[int]] = field(default_factory=list)
    """Per case, its latency in every repetition (for the table by number of legal plays)."""
    agreement: Agreement | None = None


@dataclass
class CorpusReport:
    corpus: Corpus
    rows: list[Row]
    skipped: list[tuple[str, str]]


@dataclass
class Report:
    command: str
    started: datetime
    reps: int
    min_pass_seconds: float
    engines: list[Engine]
    skipped_engines: list[tuple[str, str]]
    corpora: list[CorpusReport]
    skipped_corpora: list[tuple[str, str]]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    seconds: float = 0.0
    timer_ns: float = 0.0


# -- corpora -------------------------------------------------------------------------------------------


def load_oracle(limit: int | None = None, path: Path = ORACLE_PATH) -> Corpus:
    cases: list[Case] = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if limit is not None and len(cases) >= limit:
                break
            obj = json.loads(line)
            cases.append(
                Case(
                    id=obj["id"],
                    position=obj["position"],
                    dice=(obj["dice"][0], obj["dice"][1]),
                    results=frozenset(key_of_json(r) for r in obj["results"]),
                )
            )
    return Corpus("oracle", f"`{path.relative_to(ROOT)}`", cases)


def load_openspiel(count: int, seed: int) -> Corpus:
    module = importlib.import_module("engines.open_spiel")
    cases: list[Case] = module.generate_corpus(count, seed)
    return Corpus(
        "openspiel",
        f"turn-start positions of seeded random OpenSpiel games (seed {seed}, uniform random legal "
        "actions, OpenSpiel's own dice)",
        cases,
        reference="",  # set once the answers are known
    )


# -- engines -------------------------------------------------------------------------------------------


def load_engines(names: Sequence[str]) -> tuple[list[Engine], list[tuple[str, str]]]:
    engines: list[Engine] = []
    skipped: list[tuple[str, str]] = []
    for name in names:
        try:
            module = importlib.import_module(f"engines.{name}")
            engines.append(module.load())
        except EngineUnavailable as exc:
            skipped.append((name, str(exc)))
        except Exception as exc:  # an engine that breaks on load is skipped, not fatal
            skipped.append((name, f"failed to load: {type(exc).__name__}: {exc}"))
    return engines, skipped


# -- measuring -----------------------------------------------------------------------------------------


def throughput(
    call: Callable[..., Any], prepared: Sequence[tuple[Any, ...]], loops: int = 1
) -> tuple[float, float]:
    """Positions per second of wall-clock and of thread CPU time over ``loops`` runs of the corpus
    (clock reads around the whole pass only)."""
    gc.collect()
    clock = time.perf_counter_ns
    cpu = time.thread_time_ns
    cpu_start = cpu()
    start = clock()
    for _ in range(loops):
        for args in prepared:
            call(*args)
    elapsed = clock() - start
    cpu_elapsed = cpu() - cpu_start
    done = len(prepared) * loops * 1e9
    return done / max(elapsed, 1), done / max(cpu_elapsed, 1)


def latencies(call: Callable[..., Any], prepared: Sequence[tuple[Any, ...]]) -> list[int]:
    """Nanoseconds of every call of one pass."""
    gc.collect()
    clock = time.perf_counter_ns
    out = [0] * len(prepared)
    for i, args in enumerate(prepared):
        start = clock()
        call(*args)
        out[i] = clock() - start
    return out


def timer_overhead() -> float:
    """Median nanoseconds of an empty clock-read pair (included in, not subtracted from, latencies)."""
    clock = time.perf_counter_ns
    samples = []
    for _ in range(20_000):
        start = clock()
        samples.append(clock() - start)
    return percentile(sorted(samples), 0.5)


def percentile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile of sorted values (``q`` in 0…1)."""
    if not ordered:
        return float("nan")
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    return percentile(sorted(values), 0.5)


def prepare_rows(
    corpus: Corpus, engines: Sequence[Engine]
) -> tuple[list[Row], list[tuple[str, str]]]:
    rows: list[Row] = []
    skipped: list[tuple[str, str]] = []
    for engine in engines:
        for mode in engine.modes:
            try:
                prepared = [mode.prepare(case) for case in corpus.cases]
            except Unsupported as exc:
                skipped.append((mode.label, str(exc)))
                continue
            rows.append(Row(engine, mode, prepared))
    return rows, skipped


def first_pass(rows: Sequence[Row], min_pass_seconds: float) -> None:
    """Untimed warm-up pass that also records every answer as result keys (or a count), then one
    throughput pass per mode to choose its number of corpus loops per timed pass."""
    for row in rows:
        convert = row.mode.results
        call = row.mode.call
        for args in row.prepared:
            out = call(*args)
            if convert is not None:
                row.outputs.append(convert(args, out))
    for row in rows:
        rate, _ = throughput(row.mode.call, row.prepared)
        seconds = len(row.prepared) / rate
        row.loops = max(1, math.ceil(min_pass_seconds / max(seconds, 1e-9)))


def reference_sets(corpus: Corpus, rows: Sequence[Row]) -> list[frozenset[Key] | None]:
    """The oracle's sets, or for a corpus without them the sets the reference engines agree on."""
    if all(case.results is not None for case in corpus.cases):
        return [case.results for case in corpus.cases]
    by_label = {row.mode.label: row for row in rows if row.outputs}
    voters = [by_label[label] for label in REFERENCE_MODES if label in by_label]
    if not voters:
        fallback = by_label.get(FALLBACK_REFERENCE)
        if fallback is None:
            corpus.reference = "none (no reference engine ran)"
            return [None] * len(corpus.cases)
        voters = [fallback]
        corpus.reference = f"`{FALLBACK_REFERENCE}` (the reference engines did not run)"
    else:
        names = " and ".join(f"`{row.mode.label}`" for row in voters)
        corpus.reference = (
            f"the sets on which {names} agree" if len(voters) > 1 else f"the sets of {names}"
        )
    references: list[frozenset[Key] | None] = []
    for i in range(len(corpus.cases)):
        answers = {row.outputs[i] for row in voters}
        answer = answers.pop() if len(answers) == 1 else None
        references.append(answer if isinstance(answer, frozenset) else None)
    return references


def check_agreement(corpus: Corpus, rows: Sequence[Row]) -> None:
    references = reference_sets(corpus, rows)
    for row in rows:
        if row.mode.results is None:
            continue
        agreement = Agreement()
        for case, reference, answer in zip(corpus.cases, references, row.outputs, strict=True):
            if reference is None:
                continue
            agreement.compared += 1
            if isinstance(answer, int):
                agreement.by_count += 1
                ok = answer == len(reference)
                detail = f"{answer} plays vs {len(reference)}"
            else:
                ok = answer == reference
                detail = (
                    f"{len(answer)} results vs {len(reference)}: "
                    f"{len(answer - reference)} extra, {len(reference - answer)} missing"
                )
            if ok:
                agreement.agree += 1
            else:
                agreement.mismatches.append(f"{case.id} ({case.dice[0]}{case.dice[1]}): {detail}")
        row.agreement = agreement


def measure(corpus: Corpus, rows: Sequence[Row], reps: int) -> None:
    doubles = [case.doubles for case in corpus.cases]
    for rep in range(reps):
        shift = rep % len(rows)
        order = [*rows[shift:], *rows[:shift]]
        log(f"  {corpus.name}: repetition {rep + 1}/{reps}")
        for row in order:
            wall, cpu = throughput(row.mode.call, row.prepared, row.loops)
            row.rates.append(wall)
            row.cpu_rates.append(cpu)
        for row in order:
            if not row.case_ns:
                row.case_ns = [[] for _ in row.prepared]
            passed = latencies(row.mode.call, row.prepared)
            for ns, is_double, per_case in zip(passed, doubles, row.case_ns, strict=True):
                (row.doubles_ns if is_double else row.single_ns).append(ns)
                per_case.append(ns)


def git_state() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                "core",
                "variants",
                "nardy",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no git)"
    changed = [line[3:] for line in status if line.strip()]
    if changed:
        return f"`{head}` + uncommitted changes to {', '.join(f'`{c}`' for c in changed)}"
    return f"`{head}` (clean)"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def loadavg() -> tuple[float, float, float]:
    try:
        return os.getloadavg()
    except OSError:  # pragma: no cover - not on Linux
        return (0.0, 0.0, 0.0)


def run(
    *,
    engines: Sequence[str] = ENGINE_NAMES,
    corpora: Sequence[str] = CORPORA,
    reps: int = 5,
    min_pass_seconds: float = 0.3,
    limit: int | None = None,
    openspiel_cases: int = 2550,
    seed: int = 0,
    command: str = "",
) -> Report:
    started = time.perf_counter()
    report = Report(
        command=command,
        started=datetime.now(UTC),
        reps=reps,
        min_pass_seconds=min_pass_seconds,
        engines=[],
        skipped_engines=[],
        corpora=[],
        skipped_corpora=[],
        load_before=loadavg(),
    )
    report.engines, report.skipped_engines = load_engines(engines)
    for name, reason in report.skipped_engines:
        log(f"skipping engine {name}: {reason}")
    report.timer_ns = timer_overhead()
    for name in corpora:
        try:
            if name == "oracle":
                corpus = load_oracle(limit)
            else:
                corpus = load_openspiel(limit if limit is not None else openspiel_cases, seed)
        except EngineUnavailable as exc:
            report.skipped_corpora.append((name, str(exc)))
            log(f"skipping corpus {name}: {exc}")
            continue
        log(f"corpus {name}: {len(corpus.cases)} cases")
        rows, skipped = prepare_rows(corpus, report.engines)
        first_pass(rows, min_pass_seconds)
        check_agreement(corpus, rows)
        if rows:
            measure(corpus, rows, reps)
        report.corpora.append(CorpusReport(corpus, rows, skipped))
    report.load_after = loadavg()
    report.seconds = time.perf_counter() - started
    return report


# -- rendering -----------------------------------------------------------------------------------------


def fmt_rate(value: float) -> str:
    return f"{value:,.0f}"


def fmt_us(ns: float) -> str:
    us = ns / 1000
    if us != us:  # NaN: no such calls
        return "—"
    return f"{us:.1f}" if us < 100 else f"{us:,.0f}"


def fmt_ratio(value: float) -> str:
    return f"{value:.3g}×"


def latency_cell(values: Sequence[int]) -> str:
    if not values:
        return "—"
    ordered = sorted(values)
    return f"{fmt_us(percentile(ordered, 0.5))} / {fmt_us(percentile(ordered, 0.99))}"


def agreement_cell(row: Row) -> str:
    if row.mode.results is None:
        return "n/a (no result positions)"
    agreement = row.agreement
    if agreement is None or agreement.compared == 0:
        return "— (no reference)"
    cell = f"{agreement.agree:,}/{agreement.compared:,}"
    if agreement.by_count:
        cell += f" ({agreement.by_count:,} by count only)"
    return cell


def render_corpus(part: CorpusReport, reps: int) -> list[str]:
    corpus = part.corpus
    lines = [
        f"## Corpus `{corpus.name}`: {len(corpus.cases):,} cases ({corpus.doubles:,} doubles)",
        "",
        f"Cases: {corpus.description}. Reference result sets: {corpus.reference}.",
        "",
    ]
    if not part.rows:
        lines += ["No engine could run this corpus.", ""]
    else:
        medians = {row.mode.label: median(row.rates) for row in part.rows}
        ratio_modes = [label for label in NARDY_RATIO_MODES if label in medians]
        header = [
            "engine · call",
            f"positions/s (median of {reps})",
            "min – max",
            "per CPU-second (median)",
            "µs p50 / p99 (non-doubles)",
            "µs p50 / p99 (doubles)",
            *[f"{label} ÷ this" for label in ratio_modes],
            "agrees with reference",
        ]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "|".join(["---", *["---:"] * (len(header) - 2), "---"]) + "|")
        for row in part.rows:
            rate = medians[row.mode.label]
            label = row.mode.label if row.mode.complete else f"{row.mode.label} †"
            cells = [
                label,
                fmt_rate(rate),
                f"{fmt_rate(min(row.rates))} – {fmt_rate(max(row.rates))}",
                fmt_rate(median(row.cpu_rates)),
                latency_cell(row.single_ns),
                latency_cell(row.doubles_ns),
                *[fmt_ratio(medians[m] / rate) for m in ratio_modes],
                agreement_cell(row),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        if any(not row.mode.complete for row in part.rows):
            lines += [
                "† not the whole answer: OpenSpiel's `legal_actions()` lists the action ids of the "
                "first decision only (on a double, two of the four moves; the rest is a second "
                "decision), so its rate is not comparable with the rows that return every result.",
                "",
            ]
    if part.rows and all(row.case_ns for row in part.rows):
        lines += render_buckets(part)
    mismatched = [row for row in part.rows if row.agreement and row.agreement.mismatches]
    for row in mismatched:
        assert row.agreement is not None
        shown = row.agreement.mismatches[:10]
        lines.append(f"Disagreements of `{row.mode.label}` (first {len(shown)}):")
        lines += [f"- {text}" for text in shown]
        lines.append("")
    reasons: dict[str, list[str]] = {}
    for label, reason in part.skipped:
        reasons.setdefault(reason, []).append(f"`{label}`")
    for reason, labels in reasons.items():
        lines += [f"Not run on this corpus: {', '.join(labels)}: {reason}.", ""]
    return lines


PLAY_BUCKETS = ((1, 1), (2, 9), (10, 49), (50, 199), (200, 10**6))
"""Numbers of distinct legal results grouped for the table by number of legal plays."""


def render_buckets(part: CorpusReport) -> list[str]:
    """Mean µs per call by subset and by number of distinct legal results (each case's median over
    the repetitions' latency passes), and nardy's speed ÷ each other engine's per group."""
    corpus = part.corpus
    references = reference_sets(corpus, part.rows)
    fallback = next((r for r in part.rows if r.mode.label == FALLBACK_REFERENCE), None)
    counts: list[int | None] = []
    for i, reference in enumerate(references):
        if reference is not None:
            counts.append(len(reference))
        elif fallback is not None and isinstance(fallback.outputs[i], frozenset):
            counts.append(len(fallback.outputs[i]))  # type: ignore[arg-type]
        else:
            counts.append(None)
    groups: list[tuple[str, list[int]]] = [
        ("all cases", list(range(len(corpus.cases)))),
        ("non-doubles", [i for i, c in enumerate(corpus.cases) if not c.doubles]),
        ("doubles", [i for i, c in enumerate(corpus.cases) if c.doubles]),
    ]
    for low, high in PLAY_BUCKETS:
        label = (
            f"{low} legal play"
            if low == high
            else (f"{low}–{high} legal plays" if high < 10**6 else f"{low}+ legal plays")
        )
        members = [i for i, n in enumerate(counts) if n is not None and low <= n <= high]
        if members:
            groups.append((label, members))
    nardy = [row for row in part.rows if row.mode.label in NARDY_RATIO_MODES]
    others = [row for row in part.rows if row.engine.name != "nardy" and row.mode.complete]
    header = [
        "cases",
        "n",
        *[f"{row.mode.label}{'' if row.mode.complete else ' †'} µs" for row in part.rows],
        *[f"{a.mode.label} ÷ {b.mode.label}" for a in nardy for b in others],
    ]
    lines = [
        "By subset and number of distinct legal results: mean µs per call over the group's cases "
        "(each case's median over the latency passes, wall clock, the collector on), and nardy's "
        "speed ÷ the other engine's on the group (below 1, nardy is slower).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---", *["---:"] * (len(header) - 1)]) + "|",
    ]
    for label, members in groups:
        means = {
            row.mode.label: sum(median(row.case_ns[i]) for i in members) / len(members) / 1000
            for row in part.rows
        }
        cells = [
            label,
            f"{len(members):,}",
            *[fmt_us(means[row.mode.label] * 1000) for row in part.rows],
            *[fmt_ratio(means[b.mode.label] / means[a.mode.label]) for a in nardy for b in others],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def render(report: Report) -> str:
    versions = ", ".join(e.versions for e in report.engines)
    lines = [
        "# nardy vs reference engines: all legal plays of one (position, dice)",
        "",
        "Generated by `benchmarks/compare_engines.py` — do not edit by hand; rerun it (the reference "
        "engines come with `pip install -e '.[bench]' --config-settings editable_mode=strict`; "
        "a missing one is skipped with a note). "
        "This run:",
        "",
        "```",
        report.command,
        "```",
        "",
        f"- Date: {report.started:%Y-%m-%d %H:%M} UTC; {report.reps} repetitions; "
        f"{report.seconds:,.0f} s in all.",
        f"- Machine: {cpu_model()}, {os.cpu_count()} logical CPUs, {platform.system()} "
        f"{platform.release()}; load average {report.load_before[0]:.2f} before, "
        f"{report.load_after[0]:.2f} after.",
        f"- Python {platform.python_version()} ({platform.python_implementation()}); "
        f"nardy at {git_state()}.",
        f"- Packages: {versions or 'none'}.",
    ]
    cpus = os.cpu_count() or 1
    if max(report.load_before[0], report.load_after[0]) >= cpus:
        lines.append(
            f"- **Busy machine** (load average ≥ {cpus}, its CPU count): other processes took "
            "time slices during the run, so wall-clock rates and p99 latencies include waiting "
            "(a p99 of a few ms is a scheduler slice, not the engine). The per-CPU-second rates and "
            "the ratios between interleaved modes are the steadier figures."
        )
    for name, reason in report.skipped_engines:
        lines.append(f"- **Skipped engine `{name}`**: {reason}.")
    for name, reason in report.skipped_corpora:
        lines.append(f"- **Skipped corpus `{name}`**: {reason}.")
    lines += [
        "",
        "## Method",
        "",
        "- One process; every case is converted into each engine's own position and dice "
        "representation once, before any timing (`benchmarks/engines/*.py`).",
        "- An untimed first pass warms every mode up and turns its answers back into position JSON "
        "to compare them, as sets of distinct result positions, with the reference.",
        f"- Then {report.reps} repetitions. In each, every mode runs a throughput pass (clock reads "
        f"around the whole corpus, looped to last at least {report.min_pass_seconds:g} s), then "
        "every mode runs a latency pass (a clock read around each call); the order of the modes "
        "rotates by one each repetition. `gc.collect()` before each pass, garbage collector on "
        "during it.",
        "- positions/s: wall-clock median and min–max over the repetitions' throughput passes; "
        "per CPU-second: the same passes divided by this thread's CPU time (less sensitive to other "
        "load on the machine). Latencies: wall-clock percentiles over all latency passes pooled, "
        f"doubles apart; they include about {report.timer_ns:.0f} ns of clock overhead per call.",
        "- `X ÷ this` = X's median positions/s divided by this row's: below 1, nardy is slower.",
        "- No caching across queries: bgsage, gnubg-nn and OpenSpiel have none in these calls; "
        "gnubg's evaluation cache is switched off (`set cache 0`); nardy has none.",
        "",
    ]
    for part in report.corpora:
        lines += render_corpus(part, report.reps)
    lines += ["## Engines and modes", ""]
    for engine in report.engines:
        lines.append(f"- **{engine.name}** ({engine.versions})")
        lines += [f"  - {note}" for note in engine.notes]
        for mode in engine.modes:
            extra = "; ".join(mode.notes)
            lines.append(
                f"  - `{mode.label}` returns {mode.returns}" + (f" — {extra}" if extra else "")
            )
    return "\n".join(lines).rstrip() + "\n"


def report_json(report: Report) -> dict[str, Any]:
    return {
        "command": report.command,
        "date": report.started.isoformat(),
        "reps": report.reps,
        "skipped_engines": dict(report.skipped_engines),
        "skipped_corpora": dict(report.skipped_corpora),
        "corpora": {
            part.corpus.name: {
                "cases": len(part.corpus.cases),
                "doubles": part.corpus.doubles,
                "reference": part.corpus.reference,
                "skipped_modes": dict(part.skipped),
                "modes": {
                    row.mode.label: {
                        "engine": row.engine.name,
                        "complete": row.mode.complete,
                        "loops_per_pass": row.loops,
                        "positions_per_s": row.rates,
                        "positions_per_cpu_s": row.cpu_rates,
                        "latency_ns": {"non_doubles": row.single_ns, "doubles": row.doubles_ns},
                        "agreement": None
                        if row.agreement is None
                        else {
                            "compared": row.agreement.compared,
                            "agree": row.agreement.agree,
                            "by_count": row.agreement.by_count,
                            "mismatches": row.agreement.mismatches,
                        },
                    }
                    for row in part.rows
                },
            }
            for part in report.corpora
        },
    }


# -- command line --------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions (default 5)")
    parser.add_argument(
        "--corpus",
        default="all",
        help="oracle, openspiel or all (default), or a comma-separated list",
    )
    parser.add_argument(
        "--engines",
        default=",".join(ENGINE_NAMES),
        help=f"comma-separated adapters (default {','.join(ENGINE_NAMES)})",
    )
    parser.add_argument("--out", type=Path, help="write the Markdown report here (default: stdout)")
    parser.add_argument("--json", type=Path, help="also write the raw numbers as JSON here")
    parser.add_argument("--limit", type=int, help="use only the first N cases of each corpus")
    parser.add_argument(
        "--openspiel-cases",
        type=int,
        default=2550,
        help="size of the OpenSpiel corpus (default 2550, the oracle's size)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the OpenSpiel games (default 0)"
    )
    parser.add_argument(
        "--min-pass-seconds",
        type=float,
        default=0.3,
        help="loop the corpus so that each throughput pass lasts at least this long (default 0.3)",
    )
    args = parser.parse_args(argv)
    corpora = [c.strip() for c in args.corpus.split(",") if c.strip()]
    args.corpora = list(CORPORA) if corpora == ["all"] else corpora
    for name in args.corpora:
        if name not in CORPORA:
            parser.error(f"unknown corpus {name!r} (choose from {', '.join(CORPORA)} or all)")
    args.engine_names = [e.strip() for e in args.engines.split(",") if e.strip()]
    for name in args.engine_names:
        if name not in ENGINE_NAMES:
            parser.error(f"unknown engine {name!r} (choose from {', '.join(ENGINE_NAMES)})")
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    return args


def command_line(argv: Sequence[str]) -> str:
    script = Path(__file__).resolve()
    try:
        shown = str(script.relative_to(Path.cwd()))
    except ValueError:
        shown = str(script)
    return shlex.join(["python", shown, *argv])


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(arguments)
    report = run(
        engines=args.engine_names,
        corpora=args.corpora,
        reps=args.reps,
        min_pass_seconds=args.min_pass_seconds,
        limit=args.limit,
        openspiel_cases=args.openspiel_cases,
        seed=args.seed,
        command=command_line(arguments),
    )
    text = render(report)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        log(f"wrote {args.out}")
    if args.json is not None:
        args.json.write_text(json.dumps(report_json(report)), encoding="utf-8")
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
