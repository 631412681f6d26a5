"""``nardy benchmark``: a bot's error rate on a variant's rolled-out benchmark positions, and the
command that makes them (:mod:`nardy.analysis.benchmark`)."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nardy.cli_options import (
    check_ray_address,
    executor_option,
    load_variant,
    one_game_variant,
    one_line,
    ray_address_option,
)

if TYPE_CHECKING:
    from nardy.analysis.benchmark import Entry, Labelling, Score
    from nardy.analysis.rollout import Executor
    from nardy.core.variant import Variant

__all__ = ["benchmark_command"]

RAY_MISSING = "nardy benchmark --executor ray needs ray: pip install 'nardy[ray]'"


@click.command("benchmark")
@click.option("--variant", "-v", "variant_name", default="backgammon", show_default=True)
@click.option(
    "--bot",
    "bots",
    multiple=True,
    metavar="BOT",
    help="A bot as nardy play --bots names it (repeatable).",
)
@click.option(
    "--file",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A benchmark file (default: the one shipped for the variant).",
)
@click.option(
    "--generate",
    "generate_count",
    type=click.IntRange(1),
    default=None,
    metavar="N",
    help="Make (or extend, resuming) the benchmark file to N positions, rolled out.",
)
@click.option(
    "--refine",
    "refine_file",
    is_flag=True,
    help="Roll out again, up to --max-trials, the file's positions that stopped at a smaller cap "
    "short of the SE target (their first trials are kept: the same dice).",
)
@click.option(
    "--max-trials",
    type=click.IntRange(36),
    default=None,
    metavar="N",
    help="With --generate or --refine: trials a play at most, where the SE target (0.02) has not "
    "stopped the rollout sooner (default 1296). Khachapuri's per-checker scores often need "
    "thousands.",
)
@click.option(
    "--evaluator",
    default=None,
    metavar="SPEC",
    help="With --generate or --refine: the evaluator that chooses the plays, plays the rollouts "
    "and values their ends, as for nardy rollout (default: the strongest for the variant, gnubg "
    "in backgammon, else its shipped net, else heuristic; a file is refined with the evaluator "
    "that made it).",
)
@executor_option(
    "With --generate or --refine: where the rollouts' trials are played, this process or in "
    "parallel on a Ray cluster (the same file either way)."
)
@ray_address_option(
    "With --executor ray: the cluster's head (host:port, ray://...; default RAY_ADDRESS, "
    "else a Ray instance on this machine)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
def benchmark_command(
    variant_name: str,
    bots: tuple[str, ...],
    path: Path | None,
    generate_count: int | None,
    refine_file: bool,
    max_trials: int | None,
    evaluator: str | None,
    executor: str,
    ray_address: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """A bot's error rate on the variant's benchmark: the mean equity it loses per decision
    against the best rolled-out play, in millipoints, ± its SE, and how often it picks the best
    play (docs/analysis.md).

    \b
    Examples:
      nardy benchmark --variant long --bot heuristic --bot neural
      nardy benchmark --variant backgammon --bot neural:1 --json
      nardy benchmark --variant long --generate 500     # make or extend the positions
      nardy benchmark --variant khachapuri --generate 500 --max-trials 5184
      nardy benchmark --variant trictrac --refine --max-trials 5184   # more trials where short
      nardy benchmark --variant giul --generate 500 --executor ray --ray-address head:6379
      nardy benchmark --generate 500 --evaluator gnubg --file by-gnubg/backgammon.jsonl.gz
    """
    variant = one_game_variant(load_variant(variant_name, ()), "a benchmark")
    if generate_count is None and not refine_file and not bots:
        raise click.UsageError("give --bot BOT (or --generate N, or --refine)")
    if max_trials is not None and generate_count is None and not refine_file:
        raise click.UsageError("--max-trials goes with --generate N or --refine")
    if executor != "local" and generate_count is None and not refine_file:
        raise click.UsageError("--executor goes with --generate N or --refine")
    if evaluator is not None and generate_count is None and not refine_file:
        raise click.UsageError("--evaluator goes with --generate N or --refine")
    check_ray_address(executor, ray_address)
    if refine_file and max_trials is None:
        raise click.UsageError(
            "--refine needs --max-trials N, above the cap the file was made with"
        )
    from nardy.analysis.benchmark import (
        DATA_DIR,
        BenchmarkError,
        Labelling,
        benchmark_path,
        default_evaluator,
        read_benchmark,
        score,
    )

    directory = DATA_DIR if path is None else path.parent
    if (generate_count is not None or refine_file) and (
        path is not None and path.name != benchmark_path(variant.name).name
    ):
        raise click.BadParameter(
            f"a generated file is named {benchmark_path(variant.name).name}",
            param_hint="'--file'",
        )
    how = Labelling() if max_trials is None else Labelling(max_trials=max_trials)
    if generate_count is not None or refine_file:
        labeller = evaluator or default_evaluator(variant)
        _check_evaluator(labeller, variant, chosen=evaluator is not None)
        with _rollouts_on(labeller, executor, ray_address) as run_on:
            if generate_count is not None:
                _generate(variant, generate_count, directory, labeller, how, run_on, quiet)
            if refine_file:
                _refine(variant, directory, labeller, how, run_on, quiet)
    if not bots:
        return
    try:
        entries = read_benchmark(variant, path)
    except BenchmarkError as error:
        raise click.ClickException(one_line(str(error))) from None
    scores = []
    for name in bots:
        try:
            scores.append(score(variant, name, entries))
        except BenchmarkError as error:
            raise click.ClickException(one_line(str(error))) from None
        except ValueError as error:  # an unknown or unusable bot
            raise click.BadParameter(one_line(str(error)), param_hint="'--bot'") from None
    if path is None:  # the shipped file: rolled out by the variant's labeller
        _note_labeller(variant, entries[0], bots, default_evaluator(variant))
    _print_scores(variant.name, len(entries), scores, as_json)


def _note_labeller(variant: Variant, first: Entry, bots: tuple[str, ...], labeller: str) -> None:
    """Notes on the shipped file's labeller: for each bot that plays by the net that rolled the
    file out (as ``nardy analyze`` warns of a bot judged by its own net); or, where that net has
    been trained on since the file was made (its 1-ply equities of the file's first decision
    are no longer the recorded ones), that the file grades the plays of the net before."""
    from nardy.analysis.benchmark import ranks_as_recorded
    from nardy.engines.evaluator import judges_itself

    try:
        current = ranks_as_recorded(variant, first, labeller)
    except ValueError:  # the labeller is not usable here (gnubg's package missing): no note
        return
    if not current:
        click.echo(
            f"note: {variant.name}'s benchmark was rolled out by an earlier {labeller} net than "
            "the one shipped now: it grades the plays that net would make, and may rank a "
            f"stronger net that plays otherwise below it (remake it: nardy benchmark --variant "
            f"{variant.name} --generate 500 --file NEW; docs/analysis.md)",
            err=True,
        )
        return
    for name in bots:
        if judges_itself(name, labeller):
            click.echo(
                f"note: {name} plays by the {labeller} net that rolled these positions out: "
                "its error rate leans to its own judgement",
                err=True,
            )


def _print_scores(variant_name: str, positions: int, scores: list[Score], as_json: bool) -> None:
    """Each bot's score, then each against the one named before it on the same decisions
    (:meth:`Score.minus <nardy.analysis.benchmark.Score.minus>`)."""
    paired = [(s.bot, before.bot, *s.minus(before)) for before, s in itertools.pairwise(scores)]
    if as_json:
        rows = [s.to_json() for s in scores]
        for row, (_, before, difference, se) in zip(rows[1:], paired, strict=True):
            row["minus_previous"] = {
                "bot": before,
                "difference_mp": round(difference, 2),
                "se": round(se, 2),
            }
        click.echo(json.dumps(rows))
        return
    click.echo(f"{variant_name}: {positions} rolled-out positions; ± SE")
    width = max(len(s.bot) for s in scores)
    for s in scores:
        click.echo(
            f"  {s.bot.ljust(width)}  error rate {s.error_rate:7.1f} ± {s.error_se:5.1f} mp a "
            f"decision, best play {100 * s.best_rate:5.1f} % ± {100 * s.best_se:.1f}"
        )
    if paired:
        click.echo("paired on the same decisions, each bot's error rate less the one before it:")
    for bot, before, difference, se in paired:
        click.echo(f"  {bot} - {before}: {difference:+.1f} ± {se:.1f} mp")


def _check_evaluator(evaluator: str, variant: Variant, *, chosen: bool) -> None:
    """A clear error, before any rollout, for an evaluator that cannot be made: one the user
    ``chosen`` with ``--evaluator``, or the variant's own (gnubg's package missing)."""
    from nardy.engines.evaluator import make_evaluator

    try:
        make_evaluator(evaluator, variant)
    except ValueError as error:  # an unknown or unusable evaluator
        if chosen:
            raise click.BadParameter(one_line(str(error)), param_hint="'--evaluator'") from None
        raise click.ClickException(
            f"{variant.name}'s benchmark is rolled out by the {evaluator} evaluator: "
            f"{one_line(str(error))} (or name another with --evaluator, for a file of its own)"
        ) from None


@contextmanager
def _rollouts_on(
    evaluator: str, executor: str, ray_address: str | None
) -> Iterator[Executor | None]:
    """Where the labelling's rollouts play their trials: None (this process), or a Ray cluster
    for as long as the labelling lasts (the evaluator goes to its workers by name)."""
    if executor != "ray":
        yield None
        return
    from nardy.analysis.distributed import RayAnalysisError, ray_session
    from nardy.analysis.rollout_ray import on_ray

    try:
        with ray_session(ray_address, missing=RAY_MISSING) as ray:
            yield on_ray(ray, evaluator)
    except RayAnalysisError as error:  # no Ray, no cluster, or a task that failed
        raise click.ClickException(one_line(str(error))) from None


def _generate(
    variant: Variant,
    count: int,
    directory: Path,
    evaluator: str,
    how: Labelling,
    executor: Executor | None,
    quiet: bool,
) -> None:
    from nardy.analysis.benchmark import BenchmarkError, benchmark_path, generate

    started = time.monotonic()

    def report(held: int) -> None:
        if not quiet:
            click.echo(
                f"{variant.name}: {held}/{count} ({time.monotonic() - started:.0f} s)", err=True
            )

    try:
        held = generate(
            variant,
            count,
            directory=directory,
            evaluator=evaluator,
            how=how,
            on_entry=report,
            executor=executor,
        )
    except BenchmarkError as error:
        raise click.ClickException(one_line(str(error))) from None
    click.echo(f"{benchmark_path(variant.name, directory)}: {held} positions")


def _refine(
    variant: Variant,
    directory: Path,
    evaluator: str,
    how: Labelling,
    executor: Executor | None,
    quiet: bool,
) -> None:
    from nardy.analysis.benchmark import BenchmarkError, benchmark_path, refine

    started = time.monotonic()

    def refined(done: int, total: int) -> None:
        if not quiet:
            click.echo(
                f"{variant.name}: rolled out again {done}/{total} "
                f"({time.monotonic() - started:.0f} s)",
                err=True,
            )

    try:
        again, left = refine(
            variant,
            directory=directory,
            evaluator=evaluator,
            how=how,
            on_entry=refined,
            executor=executor,
        )
    except BenchmarkError as error:
        raise click.ClickException(one_line(str(error))) from None
    click.echo(
        f"{benchmark_path(variant.name, directory)}: {again} positions rolled out again, "
        f"{left} still short of SE {how.target_se} at {how.max_trials} trials"
    )
