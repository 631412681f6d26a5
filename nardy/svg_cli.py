"""``nardy show POSITION --svg FILE``: write a board picture (see :mod:`nardy.svg`)."""

from __future__ import annotations

from pathlib import Path

import click

from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.svg import board


def write_svg(
    position: Position, variant: Variant, target: str, *, flipped: bool, mover: str
) -> None:
    """Write the SVG board to ``target`` (a file, or ``-`` for standard output)."""
    picture = board(
        position, variant, flipped=flipped, mover="black" if mover == "black" else "white"
    )
    if target == "-":
        click.echo(picture)
        return
    path = Path(target)
    try:
        path.write_text(picture + "\n", encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {target}: {exc.strerror or exc}") from None
    click.echo(f"wrote {path}", err=True)
