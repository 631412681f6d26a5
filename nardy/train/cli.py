"""``nardy train``: training a neural bot for one variant (policy iteration or TD(λ))."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

C = TypeVar("C", bound="DataclassInstance")

_THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_FRAMEWORKS",
)


def _single_threaded_blas() -> None:
    """One BLAS thread: the matrices are small, and sums in a fixed order keep runs repeatable.
    The variables count only before numpy is first imported, hence this early call."""
    for name in _THREAD_VARIABLES:
        os.environ.setdefault(name, "1")


METHODS = ("policy-iteration", "td", "batched-td")
_ONLY_FOR = {
    "td": (
        "alpha",
        "lam",
        "prior",
        "delta_clip",
        "eval_every",
        "checkpoint_every",
        "max_seconds",
    ),
    "policy-iteration": (
        "iterations",
        "epochs",
        "batch",
        "learning_rate",
        "explore",
        "candidates",
        "workers",
    ),
    "batched-td": (
        "lam",
        "batch",
        "learning_rate",
        "envs",
        "chunk",
        "explore",
        "versus_heuristic",
        "init",
        "learn_forced",
        "features",
        "keep_chunks",
    ),
}
"""Options that mean something to some methods only (given with another, they are an error)."""

_DEFAULTS = {"policy-iteration": (18_000, 128), "td": (10_000, 64), "batched-td": (100_000, 128)}
"""Each method's default --games and --hidden (its own scale: games per iteration, in all, in
lockstep chunks)."""


@click.command()
@click.option("--variant", "-v", "variant_name", required=True, help="The variant to train for.")
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="policy-iteration",
    show_default=True,
    help="policy-iteration: Monte Carlo policy iteration from heuristic (docs/bots.md); "
    "td: TD(λ) self-play; batched-td: many self-play games in lockstep, a net of outcome "
    "probabilities without heuristic input (docs/bots.md).",
)
@click.option(
    "--option",
    "-o",
    "option_items",
    multiple=True,
    metavar="NAME=VALUE",
    help="A variant option (repeatable).",
)
@click.option(
    "--games",
    type=click.IntRange(1, 10_000_000),
    help="Self-play games: per iteration with policy-iteration (default 18000), in all with td "
    "(default 10000).",
)
@click.option(
    "--iterations",
    default=1,
    show_default=True,
    type=click.IntRange(1, 100),
    help="[policy-iteration] Rounds of play and fit (the first plays heuristic's games).",
)
@click.option(
    "--epochs",
    default=8,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="[policy-iteration] Epochs per fit at most (the best held-out epoch is kept).",
)
@click.option("--batch", default=256, show_default=True, type=click.IntRange(1, 1_000_000))
@click.option(
    "--learning-rate",
    default=1e-3,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="[policy-iteration, batched-td] Adam's step size.",
)
@click.option(
    "--explore",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="[policy-iteration, batched-td] Fraction of decisions played at random in self-play "
    "(batched-td: the return before a random play bootstraps from the greedy play's value).",
)
@click.option(
    "--versus-heuristic",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    metavar="FRACTION",
    help="[batched-td] Fraction of the lockstep games played against heuristic instead of "
    "self-play: the net learns from positions heuristic's play leads to (in plakoto, mass "
    "pins that self-play never meets).",
)
@click.option(
    "--init",
    type=click.Path(dir_okay=False),
    metavar="WEIGHTS",
    help="[batched-td] Start from these outcome weights (the variant's, the same --hidden) "
    "instead of random ones, e.g. a self-play run's to go on with --versus-heuristic (read at "
    "the run's start: --resume wants the same value, not the file).",
)
@click.option(
    "--learn-forced",
    is_flag=True,
    help="[batched-td] Also learn the afterstates of forced turns and of turns with no legal "
    "play (a dance from the bar), which self-play otherwise plays without a decision: the "
    "search values them (docs/bots.md, Forced turns).",
)
@click.option(
    "--features",
    default="",
    metavar="NAME",
    help="[batched-td] A feature set the net reads beside the board units: hitting_v1 (variants "
    "that hit to the bar: pips, contact, the opponent's shots, blots, primes), pinning_v1 "
    "(plakoto: pins, mothers, pinning shots) or blocking_v1 (the same-direction variants: heads, "
    "blocks and the checkers behind them, homes); docs/bots.md, Input features. With --init a net "
    "without them, their weights start at zero, so it plays as before and learns them.",
)
@click.option(
    "--keep-chunks",
    is_flag=True,
    help="[batched-td] Also keep each chunk's weights as OUT.cN.npz, to average them "
    "(python -m nardy.train.average; docs/bots.md, Averaged weights).",
)
@click.option(
    "--candidates",
    default="0,2,4,8",
    show_default=True,
    metavar="K,K,...",
    help="[policy-iteration] Short lists tried after each fit: the network re-ranks the "
    "heuristic's K best plays (0: all plays); the best evaluation's K is kept (the first K "
    "with --eval-games 0).",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 256),
    help="[policy-iteration] Processes playing the self-play games (same weights for any number).",
)
@click.option("--seed", default=1, show_default=True, type=int, help="Seeds weights and dice.")
@click.option(
    "--hidden",
    type=click.IntRange(1, 4096),
    help="Hidden units (default 128 with policy-iteration, 64 with td).",
)
@click.option(
    "--alpha", default=0.01, show_default=True, type=click.FloatRange(min=0, min_open=True)
)
@click.option(
    "--prior",
    type=click.Choice(["tanh", "linear"]),
    default="tanh",
    show_default=True,
    help="How the heuristic prior unit enters the network.",
)
@click.option(
    "--delta-clip",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Clip TD errors to ±this (0: no clipping).",
)
@click.option("--lambda", "lam", default=0.7, show_default=True, type=click.FloatRange(0, 1))
@click.option(
    "--eval-every",
    default=1_000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Evaluate against heuristic every N training games.",
)
@click.option(
    "--eval-games",
    default=200,
    show_default=True,
    type=click.IntRange(min=0),
    help="Games per evaluation (duplicate pairs; 0: none).",
)
@click.option(
    "--envs",
    default=256,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="[batched-td] Games played in lockstep.",
)
@click.option(
    "--chunk",
    default=20_000,
    show_default=True,
    type=click.IntRange(1, 10_000_000),
    help="[batched-td] Games per chunk (a checkpoint after each; --resume continues at the next).",
)
@click.option("--checkpoint-every", default=500, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0),
    help="Stop after the game that passes this much training time (the weights are those of "
    "--games N for the N reached).",
)
@click.option("--resume", is_flag=True, help="Continue from OUT's checkpoint (OUT.ckpt.npz).")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Weights file to write (.npz, with a .json sidecar).",
)
def train(
    variant_name: str,
    option_items: tuple[str, ...],
    method: str,
    games: int | None,
    iterations: int,
    epochs: int,
    batch: int,
    learning_rate: float,
    explore: float,
    versus_heuristic: float,
    init: str | None,
    learn_forced: bool,
    features: str,
    keep_chunks: bool,
    candidates: str,
    workers: int,
    seed: int,
    hidden: int | None,
    alpha: float,
    lam: float,
    prior: str,
    delta_clip: float,
    eval_every: int,
    eval_games: int,
    envs: int,
    chunk: int,
    checkpoint_every: int,
    max_seconds: float | None,
    resume: bool,
    quiet: bool,
    out: Path,
) -> None:
    """Train a neural bot and write its weights (OUT.npz and its sidecar OUT.json).

    policy-iteration (the default): each iteration plays --games self-play games
    (heuristic's play first, then the network's), fits the network to the points each
    chosen result led to, and plays --eval-games duplicate-dice games against heuristic
    for each --candidates short list (points per game ± standard error), keeping the best.
    A checkpoint is written after every iteration.

    td: TD(λ) self-play for --games games, evaluated every --eval-every games, a checkpoint every
    --checkpoint-every games.

    Both are deterministic for a given seed on one machine; --resume continues OUT's checkpoint.

    \b
    Examples:
      nardy train --variant long --games 18000 --seed 1 --workers 2 --out long.npz
      nardy train --variant backgammon --method td --games 12000 --alpha 0.01 --out bg.npz
      nardy play --variant long --bots neural:long.npz,heuristic --games 2000 --seed 11
    """
    context = click.get_current_context()
    owners: dict[str, list[str]] = {}
    for owner, names in _ONLY_FOR.items():
        for name in names:
            owners.setdefault(name, []).append(owner)
    for name, methods in owners.items():
        if method in methods:
            continue
        if context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE:
            flag = "--lambda" if name == "lam" else "--" + name.replace("_", "-")
            raise click.UsageError(f"{flag} applies to --method {' or '.join(methods)} only")
    _single_threaded_blas()
    if out.suffix != ".npz":
        raise click.BadParameter("the weights file must end in .npz", param_hint="'--out'")
    if not out.parent.is_dir():
        raise click.BadParameter(f"no folder {str(out.parent)!r}", param_hint="'--out'")
    from nardy.cli_options import load_variant, one_game_variant

    variant = one_game_variant(load_variant(variant_name, option_items), "training a net")
    default_games, default_hidden = _DEFAULTS[method]
    given: dict[str, Any] = {
        "variant": variant.name,
        "games": games or default_games,
        "hidden": hidden or default_hidden,
        "options": dict(variant.options),
    }
    if method == "batched-td":
        from nardy.train.batched import BatchedConfig

        given["init"] = init or ""
        from nardy.train.batched_cli import run_batched

        batched = _config(BatchedConfig, context.params, given)
        run_batched(variant, batched, out, resume=resume, quiet=quiet)
        return
    from nardy.train.policy_iteration import IterationConfig
    from nardy.train.td import Evaluation, TrainConfig, best_path
    from nardy.train.td import train as run

    if method == "policy-iteration":
        given["candidates"] = _short_lists(candidates)
        iteration = _config(IterationConfig, context.params, given)
        _train_by_policy_iteration(
            variant, iteration, out, resume=resume, workers=workers, quiet=quiet
        )
        return
    config = _config(TrainConfig, context.params, given)
    games = config.games
    from rich.console import Console

    console = Console(stderr=True)
    started = time.perf_counter()

    def say(text: str) -> None:
        if not quiet:
            console.print(text, highlight=False)

    with _progress_bars(console, quiet) as progress:
        task = progress.add_task(f"{variant.name}: training", total=games)

        def report(done: int, evaluation: Evaluation | None) -> None:
            progress.update(task, completed=done)
            if evaluation is not None:
                elapsed = time.perf_counter() - started
                say(f"{variant.name} after {done} games ({elapsed:.0f} s): {evaluation.text()}")

        net = run(variant, config, out, resume=resume, max_seconds=max_seconds, progress=report)
    say(
        f"wrote {out} ({net.meta['games']} games, {net.meta['seconds']} s); "
        f"best evaluation: {best_path(out)}"
    )
    sys.stdout.flush()


def _progress_bars(console: Any, quiet: bool) -> Any:
    """Progress bars that stay on the screen (a training run's record of its phases)."""
    from rich.progress import TimeElapsedColumn, TimeRemainingColumn

    from nardy.cli_options import progress_bar

    return progress_bar(console, quiet, TimeElapsedColumn(), TimeRemainingColumn(), transient=False)


def _config(kind: type[C], params: Mapping[str, Any], given: Mapping[str, Any]) -> C:
    """A method's config: each field the value of the option named for it (the options are
    named for the fields), or ``given``'s (a default that depends on the method, a value read
    from its option). A field without either is a KeyError: no field takes its default unseen."""
    fields = dataclasses.fields(kind)
    return kind(**{f.name: given[f.name] if f.name in given else params[f.name] for f in fields})


def _short_lists(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(item) for item in text.split(","))
    except ValueError:
        values = ()
    if not values or any(k < 0 for k in values) or len(set(values)) != len(values):
        raise click.BadParameter(
            f"{text!r} is not a list of distinct whole numbers ≥ 0, e.g. 0,2,4,8",
            param_hint="'--candidates'",
        )
    return values


class _RichReporter:
    """Progress of a policy-iteration run: one bar per phase, a line per iteration."""

    def __init__(self, progress: Any, console: Any, quiet: bool) -> None:
        self.progress = progress
        self.console = console
        self.quiet = quiet
        self.task: Any = None

    def phase(self, description: str, total: int) -> None:
        if self.task is not None:
            self.progress.remove_task(self.task)
        self.task = self.progress.add_task(description, total=total or None)

    def advance(self, amount: int) -> None:
        if self.task is not None:
            self.progress.advance(self.task, amount)

    def line(self, text: str) -> None:
        if not self.quiet:
            self.console.print(text, highlight=False)


def _train_by_policy_iteration(
    variant: Any, config: Any, out: Path, *, resume: bool, workers: int, quiet: bool
) -> None:
    from rich.console import Console

    from nardy.train.policy_iteration import train as run
    from nardy.train.td import best_path

    console = Console(stderr=True)
    with _progress_bars(console, quiet) as progress:
        try:
            net = run(
                variant,
                config,
                out,
                resume=resume,
                workers=workers,
                reporter=_RichReporter(progress, console, quiet),
            )
        except ValueError as error:
            raise click.ClickException(str(error)) from None
    if not quiet:
        console.print(
            f"wrote {out} ({net.meta['iterations_done']} iterations, {net.meta['games']} games, "
            f"{net.meta['seconds']} s); best evaluation: {best_path(out)}",
            highlight=False,
        )
    sys.stdout.flush()
