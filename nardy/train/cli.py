"""``nardy train``: TD(λ) self-play training of a neural bot for one variant."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click

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


@click.command()
@click.option("--variant", "-v", "variant_name", required=True, help="The variant to train for.")
@click.option(
    "--option",
    "-o",
    "option_items",
    multiple=True,
    metavar="NAME=VALUE",
    help="A variant option (repeatable).",
)
@click.option("--games", default=10_000, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=1, show_default=True, type=int, help="Seeds weights and dice.")
@click.option("--hidden", default=64, show_default=True, type=click.IntRange(min=1))
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
    games: int,
    seed: int,
    hidden: int,
    alpha: float,
    lam: float,
    prior: str,
    delta_clip: float,
    eval_every: int,
    eval_games: int,
    checkpoint_every: int,
    max_seconds: float | None,
    resume: bool,
    quiet: bool,
    out: Path,
) -> None:
    """Train a neural bot by TD(λ) self-play and write its weights.

    Every --eval-every games the network plays --eval-games duplicate-dice games against
    heuristic (points per game ± standard error). The run is deterministic for a given seed on
    one machine; a checkpoint is written every --checkpoint-every games and --resume continues it.

    \b
    Examples:
      nardy train --variant long --games 20000 --seed 1 --out long.npz
      nardy play --variant long --bots neural:long.npz,heuristic --games 2000 --seed 11
    """
    _single_threaded_blas()
    if out.suffix != ".npz":
        raise click.BadParameter("the weights file must end in .npz", param_hint="'--out'")
    if not out.parent.is_dir():
        raise click.BadParameter(f"no folder {str(out.parent)!r}", param_hint="'--out'")
    from nardy.cli import _load_variant
    from nardy.train.td import Evaluation, TrainConfig
    from nardy.train.td import train as run

    variant = _load_variant(variant_name, option_items)
    config = TrainConfig(
        variant=variant.name,
        games=games,
        seed=seed,
        hidden=hidden,
        alpha=alpha,
        lam=lam,
        prior=prior,
        delta_clip=delta_clip,
        eval_every=eval_every,
        eval_games=eval_games,
        checkpoint_every=checkpoint_every,
        options=variant.options,
    )
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    interactive = console.is_terminal and not quiet
    started = time.perf_counter()

    def say(text: str) -> None:
        if not quiet:
            console.print(text, highlight=False)

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not interactive,
    ) as progress:
        task = progress.add_task(f"{variant.name}: training", total=games)

        def report(done: int, evaluation: Evaluation | None) -> None:
            progress.update(task, completed=done)
            if evaluation is not None:
                elapsed = time.perf_counter() - started
                say(f"{variant.name} after {done} games ({elapsed:.0f} s): {evaluation.text()}")

        net = run(variant, config, out, resume=resume, max_seconds=max_seconds, progress=report)
    say(
        f"wrote {out} ({net.meta['games']} games, {net.meta['seconds']} s); "
        f"best evaluation: {out.with_name(out.stem + '.best.npz')}"
    )
    sys.stdout.flush()
