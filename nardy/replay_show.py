"""``nardy arena replay GAME_ID --show | --svg DIR``: a stored game, decision by decision.

``--show`` prints every decision with the text board the deciding bot saw (from its seat, in its
coordinates, so the play text reads on the board), what it chose among how many legal plays, its
comment and time, cube actions and the result in words; ``--svg DIR`` writes one SVG board per
decision (from White's seat, numbered as the player to decide numbers his points, the chosen play
as arrows, both pip counts) and one for the final position.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from nardy.core.board_text import render_board
from nardy.core.variant import Variant
from nardy.game_view import DecisionStep, GameSteps, ReplayViewError, game_steps
from nardy.words import cube_action, result_words

__all__ = ["show_replay"]


def _names(record: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for colour in ("White", "Black"):
        seat = record.get(colour.lower()) or {}
        out[colour] = str(seat.get("name") or seat.get("bot_id") or "?")
    return out


def _headline(step: DecisionStep, names: Mapping[str, str], total: int, variant: Variant) -> str:
    who = f"{step.player} ({names.get(step.player, '?')})"
    if step.kind == "end":
        return f"End · {result_words(step.result, variant, cube=step.cube[0], names=names)}"
    parts = [f"Decision {step.number}/{total}", who]
    if step.kind == "play":
        parts += [
            step.segment,
            f"{step.choices} legal play{'s' if step.choices != 1 else ''}",
            f"chose {step.shown or step.answer or '(no move)'}"
            if step.answer is not None
            else "no answer",
        ]
    else:
        parts += [cube_action(step.kind, step.answer, step.player, step.cube[0], step.offered)]
    if step.latency_ms is not None:
        parts.append(f"{step.latency_ms:.1f} ms")
    return " · ".join(parts)


def _details(step: DecisionStep) -> list[str]:
    lines = []
    if step.info and step.info.get("comment"):
        lines.append(f"  comment: {step.info['comment']}")
    for key, value in sorted((step.info or {}).get("values", {}).items()):
        lines.append(f"  {key} = {value}")
    if step.fault:
        then = "the arena played a random answer" if step.fallback else "forfeited"
        lines.append(f"  FAULT {step.fault.get('kind')}: {step.fault.get('message')} ({then})")
    lines += [f"  before: {text}" for text in step.before]
    lines += [f"  then: {text}" for text in step.after]
    return lines


def _text(replay: GameSteps, names: Mapping[str, str]) -> str:
    total = len(replay.steps) - 1
    blocks = []
    for step in replay.steps:
        board = render_board(
            step.position,
            replay.variant,
            mover_colour="black" if step.player == "Black" else "white",
        )
        headline = _headline(step, names, total, replay.variant)
        blocks.append("\n".join([headline, *_details(step), "", board]))
    return "\n".join(blocks)


def show_replay(record: Mapping[str, Any], *, show: bool, svg_dir: Path | None) -> None:
    """Print the game (``show``) and/or write its boards into ``svg_dir``."""
    try:
        replay = game_steps(record)
    except ReplayViewError as exc:
        raise click.ClickException(str(exc)) from None
    names = _names(record)
    if show:
        click.echo(_text(replay, names))
    if svg_dir is not None:
        try:
            svg_dir.mkdir(parents=True, exist_ok=True)
            for step in replay.steps:
                name = f"{step.number:03d}-{step.player.lower()}-{step.kind}.svg"
                picture = step.svg(
                    replay.variant, names=(names["White"], names["Black"]), match=replay.match
                )
                (svg_dir / name).write_text(picture + "\n", encoding="utf-8")
        except OSError as exc:
            raise click.ClickException(
                f"cannot write into {svg_dir}: {exc.strerror or exc}"
            ) from None
        click.echo(f"wrote {len(replay.steps)} boards to {svg_dir}", err=True)
