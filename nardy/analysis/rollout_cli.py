"""``nardy rollout``: roll out the best plays of a decision (:mod:`nardy.analysis.rollout`)."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nardy.cli_options import (
    check_ray_address,
    evaluator_option,
    executor_option,
    load_variant,
    one_game_variant,
    one_line,
    ply_option,
    progress_bar,
    ray_address_option,
)

if TYPE_CHECKING:
    from nardy.core.position import Position
    from nardy.core.variant import Variant

__all__ = ["rollout_command"]


def _from_position(
    position_text: str, variant_name: str, options: tuple[str, ...], dice: tuple[int, int] | None
) -> tuple[Variant, Position, tuple[int, int]]:
    from nardy.core.gnubg import parse_position_text

    if dice is None:
        raise click.UsageError("give the roll: --dice A B")
    variant = one_game_variant(load_variant(variant_name, options), "a rollout")
    try:
        position = parse_position_text(position_text, variant)
    except ValueError as error:
        raise click.BadParameter(one_line(str(error)), param_hint="'POSITION'") from None
    return variant, position, dice


def _from_record(
    record: Path, game_number: int, decision: int
) -> tuple[Variant, Position, tuple[int, int]]:
    from nardy.analysis.records import RecordError, read_records
    from nardy.analysis.rollout import record_decision

    try:
        games = read_records(record)
        if not 1 <= game_number <= len(games):
            raise click.BadParameter(
                f"{record} holds {len(games)} game(s), not a game {game_number}",
                param_hint="'--game'",
            )
        game = games[game_number - 1]
        position, roll = record_decision(game, decision)
    except RecordError as error:
        raise click.ClickException(one_line(str(error))) from None
    return game.variant, position, roll


# A position id may start with "-" (``------/-----o/…``): unknown option-like words are left to
# be the POSITION argument, where a mistyped option then meets the position's own error.
@click.command("rollout", context_settings={"ignore_unknown_options": True})
@click.argument("position_text", metavar="[POSITION]", required=False)
@click.option("--dice", type=click.IntRange(1, 6), nargs=2, default=None, metavar="A B")
@click.option("--variant", "-v", "variant_name", default="backgammon", show_default=True)
@click.option("-o", "--option", "option_items", multiple=True, metavar="KEY=VALUE")
@click.option(
    "--record",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A game record (as for nardy analyze) instead of POSITION and --dice.",
)
@click.option("--game", "game_number", type=click.IntRange(1), default=1, show_default=True)
@click.option(
    "--decision",
    type=click.IntRange(1),
    default=None,
    help="With --record: the decision's number, as nardy analyze numbers them.",
)
@evaluator_option(
    "neural",
    "Plays the games, values truncated ends and measures luck: neural[:FILE], "
    "neural-consistent, heuristic, gnubg (backgammon) or an installed one.",
)
@click.option(
    "--top", type=click.IntRange(1), default=3, show_default=True, help="Plays rolled out."
)
@ply_option(3, "Depth of the search that chooses the plays to roll out.")
@click.option(
    "--trials", type=click.IntRange(2), default=144, show_default=True, help="Trials per play."
)
@click.option(
    "--se",
    "target_se",
    type=click.FloatRange(min=0.0, min_open=True),
    default=None,
    help="Stop once every play's SE is at most this (--trials is then the most).",
)
@click.option(
    "--truncate",
    type=click.IntRange(0),
    default=None,
    metavar="PLIES",
    help="Stop each game after this many more rolls and take the evaluator's equity there "
    "(default: play to the end).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--no-reduction", is_flag=True, help="No variance reduction (plain results, faster).")
@executor_option(
    "Where the trials are played: this process, or in parallel on a Ray cluster (the same "
    "result for the same seed)."
)
@ray_address_option(
    "With --executor ray: the cluster's head (host:port, ray://...; default RAY_ADDRESS, "
    "else a Ray instance on this machine)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the rollout as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def rollout_command(
    position_text: str | None,
    dice: tuple[int, int] | None,
    variant_name: str,
    option_items: tuple[str, ...],
    record: Path | None,
    game_number: int,
    decision: int | None,
    evaluator: str,
    top: int,
    ply: int,
    trials: int,
    target_se: float | None,
    truncate: int | None,
    seed: int,
    no_reduction: bool,
    executor: str,
    ray_address: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Roll out the --top plays of a decision: each played, then the game played on by the
    evaluator, --trials times with the same dice for every play, variance-reduced by the luck
    of each roll; equities are cubeless points of one game from the mover's side, ± their SE
    (docs/analysis.md).

    The decision is POSITION (seen from the player to move) with --dice, or decision --decision
    of game --game of a --record file.

    \b
    Examples:
      nardy rollout 4HPwATDgc/ABMA --dice 3 1 --truncate 10 --se 0.02 --trials 1296
      nardy rollout ------/-----o/------/-----O -v long --dice 6 5 --json
      nardy rollout --record games.jsonl --game 2 --decision 7
      nardy rollout 4HPwATDgc/ABMA --dice 4 2 --executor ray --ray-address head:6379
    """
    check_ray_address(executor, ray_address)
    if record is not None:
        if position_text is not None or dice is not None:
            raise click.UsageError("give POSITION --dice A B, or --record FILE --decision N")
        if decision is None:
            raise click.UsageError("--record needs --decision N")
        variant, position, roll = _from_record(record, game_number, decision)
    else:
        if position_text is None:
            raise click.UsageError("give POSITION --dice A B, or --record FILE --decision N")
        if decision is not None:
            raise click.UsageError("--decision goes with --record")
        variant, position, roll = _from_position(position_text, variant_name, option_items, dice)
    try:
        from nardy.analysis.rollout import rollout
    except ImportError as error:
        raise click.ClickException(f"nardy rollout needs numpy ({error})") from None
    from rich.console import Console

    from nardy.core.errors import NardyError

    console = Console(stderr=True)
    with progress_bar(console, quiet) as progress:
        task = progress.add_task(f"rolling out {top} play(s)", total=trials)
        with ExitStack() as stack:
            run_on = None
            if executor == "ray":
                from nardy.analysis.distributed import RayAnalysisError, ray_session
                from nardy.analysis.rollout_ray import RAY_MISSING, on_ray

                try:
                    ray = stack.enter_context(ray_session(ray_address, missing=RAY_MISSING))
                except RayAnalysisError as error:
                    raise click.ClickException(one_line(str(error))) from None
                run_on = on_ray(ray, evaluator)
            try:
                found = rollout(
                    variant,
                    position,
                    roll,
                    evaluator=evaluator,
                    top=top,
                    ply=ply,
                    trials=trials,
                    target_se=target_se,
                    truncate=truncate,
                    seed=seed,
                    variance_reduction=not no_reduction,
                    on_trials=lambda n: progress.advance(task, n),
                    executor=run_on,
                )
            except NardyError as error:  # an illegal roll here, a finished game, a Ray task
                raise click.ClickException(one_line(str(error))) from None
            except ValueError as error:  # an unknown or unusable evaluator
                raise click.BadParameter(one_line(str(error)), param_hint="'--evaluator'") from None
    if as_json:
        click.echo(json.dumps(found.to_json()))
        return
    length = "to the end" if truncate is None else f"truncated after {truncate} rolls"
    reduced = "plain" if no_reduction else "variance-reduced"
    click.echo(
        f"{variant.name} {roll[0]}-{roll[1]}: {found.trials} trials a play, {length}, {reduced} "
        f"({evaluator}, seed {seed})"
    )
    data = found.to_json()["plays"]
    width = max(len(item["play"]) for item in data)
    for item in data:
        loss = (
            "" if item["loss_se"] is None else f"  ({-item['loss']:+.3f} ± {item['loss_se']:.3f})"
        )
        click.echo(
            f"{item['rank']:4}. {item['play'].ljust(width)}  {item['equity']:+.3f} ± "
            f"{item['se']:.3f}{loss}"
        )
