"""``nardy train --method batched-td``: the command's side of :mod:`nardy.train.batched` (the
config from the options, progress lines on stderr, one clear error line, Ctrl-C)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from nardy.core.variant import Variant
from nardy.train.batched import BatchedConfig, checkpoint_path, train


def run_batched(
    variant: Variant, config: BatchedConfig, out: Path, *, resume: bool, quiet: bool
) -> None:
    """Train and report: a progress line every 30 s and one per chunk (plain lines, so that a
    background run's log reads as well as a terminal)."""

    def say(text: str) -> None:
        if not quiet:
            stamp = time.strftime("%H:%M:%S")
            click.echo(f"[{stamp}] {text}", err=True)

    try:
        net = train(variant, config, out, resume=resume, say=say)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    except KeyboardInterrupt:
        click.echo(
            f"stopped; continue with the same command and --resume ({checkpoint_path(out)})",
            err=True,
        )
        sys.exit(130)
    say(f"wrote {out} ({net.meta['games']:,} games, {net.meta['seconds']} s)")
