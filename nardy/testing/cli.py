"""``nardy check-variant NAME``: the conformance battery from the command line (plugin authors)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from nardy.cli_options import load_variant

MAX_SEED = 2**63 - 1


@click.command("check-variant")
@click.argument("name")
@click.option(
    "-o",
    "--option",
    "assignments",
    multiple=True,
    metavar="NAME=VALUE",
    help="A variant option (repeatable); see 'nardy variants'.",
)
@click.option(
    "--games", "-n", default=100, show_default=True, type=click.IntRange(1), help="Random games."
)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=click.IntRange(0, MAX_SEED),
    help="Seed of the first game; game i uses SEED + i.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def check_variant_command(
    name: str, assignments: tuple[str, ...], games: int, seed: int, as_json: bool, quiet: bool
) -> None:
    """Play seeded random games of variant NAME and check every invariant at every decision.

    Positions must be legal for the variant, position ids and JSON must round-trip, every legal
    play's text must parse back to it, plays must be distinct and use the same number of dice,
    and every game must end with a positive score. Exits 1 when anything fails, naming the seed.

    \b
    Examples:
      nardy check-variant nackgammon
      nardy check-variant hypergammon -o checkers=2 --games 500 --seed 7
    """
    from nardy.core.options import parse_option_assignments
    from nardy.testing import check_variant

    variant = load_variant(name, assignments, name_hint="'NAME'")
    options = parse_option_assignments(assignments)
    if variant.is_match_variant:
        games_of = " and ".join(f"nardy check-variant {v}" for v in variant.info.cycle)
        raise click.BadParameter(
            f"{name} is a match of {' → '.join(variant.info.cycle)}, each game by its own "
            f"variant's rules; check those: {games_of}",
            param_hint="'NAME'",
        )
    if quiet or as_json:
        report = check_variant(name, options, games=games, seed=seed)
    else:
        with click.progressbar(length=games, label=f"checking {name}", file=sys.stderr) as bar:
            report = check_variant(
                name, options, games=games, seed=seed, progress=lambda: bar.update(1)
            )
    summary: dict[str, Any] = {
        "variant": name,
        "options": options,
        "games": report.games,
        "seed": seed,
        "decisions": report.decisions,
        "plays_checked": report.plays,
        "game_values": {str(k): v for k, v in sorted(report.points.items())},
        "failures": report.failures,
        "ok": report.ok,
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        values = ", ".join(f"{v}× {k}" for k, v in summary["game_values"].items()) or "none"
        click.echo(
            f"{name}: {report.games} of {games} games finished, {report.decisions} decisions, "
            f"{report.plays} plays checked; game values: {values}."
        )
        for failure in report.failures:
            click.echo(f"FAILED {failure}", err=True)
        click.echo("ok" if report.ok else f"{len(report.failures)} game(s) failed")
    if not report.ok:
        raise SystemExit(1)
