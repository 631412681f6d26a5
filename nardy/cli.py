"""The ``nardy`` command line: variants, bot-vs-bot play, boards, and the legal-plays query engine.

Every command has ``--help`` with examples. Mistakes are reported as one line on standard error
(``Error: …``), with exit code 2 for a usage error (bad option, unknown variant or bot, malformed
position) and 1 for anything else (a file that cannot be written, a rule error during play); the CLI
never shows a traceback for them.

The ``arena`` and ``bot`` command groups come from :mod:`nardy.arena.cli`, which needs the ``arena``
extras (gRPC); without them those commands print how to install them.
"""

from __future__ import annotations

import errno
import hashlib
import importlib
import importlib.util
import json
import math
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import IO, TYPE_CHECKING, Any, cast

import click

from nardy import __version__
from nardy.cli_options import (
    OPTIONS_OPTION,
    VARIANT_OPTION,
    TableGroup,
    evaluator_option,
    load_variant,
    one_game_variant,
    one_line,
    ply_option,
    progress_bar,
)
from nardy.core import movegen_build
from nardy.core.dice import MAX_SEED
from nardy.core.errors import NardyError
from nardy.interrupt import deferred_interrupt

if TYPE_CHECKING:
    from nardy.analysis.hint import CubeOwner
    from nardy.bots import Bot
    from nardy.core.game import Game
    from nardy.core.record import MatchInfo
    from nardy.core.variant import Variant

__all__ = ["cli", "main"]

COMMANDS: dict[str, str] = {
    "analyze": "nardy.analysis.cli:analyze_command",
    "arena": "nardy.arena.cli:arena_group",
    "benchmark": "nardy.analysis.benchmark_cli:benchmark_command",
    "bot": "nardy.arena.cli:bot_group",
    "check-variant": "nardy.testing.cli:check_variant_command",
    "hint": "nardy.cli:hint",
    "play": "nardy.cli:play",
    "plays": "nardy.cli:plays",
    "protos": "nardy.arena.protos_cli:protos_command",
    "rollout": "nardy.analysis.rollout_cli:rollout_command",
    "show": "nardy.cli:show",
    "train": "nardy.train.cli:train",
    "variants": "nardy.cli:variants",
    "web": "nardy.web.cli:web_command",
}
"""Every ``nardy`` command: its name → ``module:attribute`` of its click command. The one way a
command joins ``nardy``: its module is imported only when the command is used or listed, so a
command costs nothing to the others (the arena's import gRPC, which is slow and optional; train and
analyze import numpy when they run). docs/architecture.md: adding a command."""

_POSITION_ID = re.compile(r"^[-A-Oa-o]{6}(/[-A-Oa-o]{6}){3}(:\d+,\d+)?$")

# -- one-line errors -----------------------------------------------------------------------------------


_NO_ARGS_IS_HELP: tuple[type[Exception], ...] = tuple(
    getattr(click.exceptions, name)
    for name in ("NoArgsIsHelpError",)
    if hasattr(click.exceptions, name)
)
"""click ≥ 8.2 shows the help for a bare group through this usage error; it must keep doing so."""


class _OneLineUsageError(click.ClickException):
    """A usage error shown as one line (click's own shows the usage text first)."""

    exit_code = 2


def _usage_error(error: click.UsageError) -> click.ClickException:
    message = one_line(error.format_message())
    if error.ctx is not None:
        message += f" (see '{error.ctx.command_path} --help')"
    return _OneLineUsageError(message)


class NardyGroup(TableGroup):
    """The top-level group: one-line errors, and the commands of :data:`COMMANDS`, each loaded
    when asked for (a stand-in that says why for one that cannot load)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except _NO_ARGS_IS_HELP:
            raise
        except click.UsageError as error:
            raise _usage_error(error) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _NO_ARGS_IS_HELP:
            raise
        except click.UsageError as error:
            raise _usage_error(error) from None
        except ImportError as error:
            # The arena's commands import gRPC when they run; without the extras say what to install.
            if (error.name or "").split(".")[0] not in ("grpc", "google"):
                raise
            raise click.ClickException(
                f"this command needs gRPC ({error.name} is missing): pip install nardy[arena]"
            ) from None
        except OSError as error:
            if error.errno == errno.EPIPE:
                raise  # click exits quietly when the reader of our output went away
            message = (
                f"{error.filename}: {error.strerror}"
                if error.filename and error.strerror
                else str(error)
            )
            raise click.ClickException(one_line(message)) from None
        except (NardyError, ValueError) as error:
            raise click.ClickException(one_line(str(error))) from None

    def load(self, name: str) -> click.Command | None:
        """The command :data:`COMMANDS` names, or a stand-in that explains why it cannot load."""
        try:
            return super().load(name)
        except ImportError as error:
            return _stand_in(name, error)
        except Exception as error:  # a broken optional module must not break the rest of the CLI
            return _unavailable(name, f"'nardy {name}' is unavailable: {one_line(str(error))}")


def _stand_in(name: str, error: ImportError) -> click.Command | None:
    """What ``nardy NAME`` is when its module cannot be imported: nothing (an installation without
    the module), or a command that says what to install."""
    module_name = COMMANDS[name].partition(":")[0]
    if error.name == module_name:
        return None  # this installation lacks the command's module (a wheel without it)
    if (error.name or "").split(".")[0] in ("grpc", "google"):
        return _unavailable(name, f"'nardy {name}' needs gRPC: pip install nardy[arena]")
    return _unavailable(name, f"'nardy {name}' is unavailable: {one_line(str(error))}")


def _unavailable(name: str, message: str) -> click.Command:
    def fail(args: tuple[str, ...]) -> None:
        raise click.ClickException(message)

    return click.Command(
        name,
        callback=fail,
        params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
        context_settings={"ignore_unknown_options": True, "help_option_names": []},
        short_help="(unavailable: pip install nardy[arena])",
        help=message,
    )


_ID_MARK = "\x00"


class _PositionCommand(click.Command):
    """A command with a position-id argument. Ids may start with ``-`` (``------/-----o/…``), which
    click would parse as options, so such tokens are marked before parsing and unmarked by
    :class:`_PositionText`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            return super().parse_args(ctx, args)
        marked = [_ID_MARK + a if a.startswith("-") and _POSITION_ID.match(a) else a for a in args]
        return super().parse_args(ctx, marked)


class _PositionText(click.types.StringParamType):
    name = "position"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        return super().convert(value, param, ctx).removeprefix(_ID_MARK)


# -- shared helpers -----------------------------------------------------------------------------------


def _parse_position(text: str, variant: Variant) -> Any:
    from nardy.core.gnubg import parse_position_text

    try:
        return parse_position_text(text, variant)
    except ValueError as error:  # the reason in one line (nardy.core.gnubg.parse_position_text)
        raise click.BadParameter(str(error), param_hint="'POSITION'") from None


# -- the group ----------------------------------------------------------------------------------------


@click.group(
    cls=NardyGroup, table=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(
    __version__,
    prog_name="nardy",
    message=f"%(prog)s %(version)s\nmove generator: {movegen_build()}",
)
def cli() -> None:
    """nardy — backgammon-family race games: rules, bots, boards and legal plays.

    \b
    Examples:
      nardy variants
      nardy play --variant long --bots heuristic,random --games 1000 --seed 7
      nardy show b----E/-C---e/E---c-/e----B --side opponent
      echo '{"position": {...}, "dice": [3, 1]}' | nardy plays --variant backgammon --jsonl
    """
    from nardy.core.plugins import report_broken_plugins

    report_broken_plugins(lambda line: click.echo(f"nardy: warning: {line}", err=True))


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``nardy``)."""
    from nardy import collector

    collector.tune()
    cli.main(args=list(argv) if argv is not None else None, prog_name="nardy")


# -- nardy variants -----------------------------------------------------------------------------------


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the variants as JSON (for scripts).")
def variants(as_json: bool) -> None:
    """List the installed variants and their options.

    \b
    Examples:
      nardy variants
      nardy variants --json | jq '.[].name'
    """
    import shutil

    from nardy.listing import variants_json, variants_text

    if as_json:
        click.echo(json.dumps(variants_json(), ensure_ascii=False, indent=2))
        return
    click.echo(variants_text(shutil.get_terminal_size().columns), nl=False)


# -- nardy play ---------------------------------------------------------------------------------------


def game_seed(seed: int, index: int) -> int:
    """The dice seed of game (or match) ``index`` of a run with ``--seed seed``."""
    return seed * 1_000_003 + index


def _bot_seed(unit_seed: int, slot: int) -> int:
    """A bot's seed for one game or match, decorrelated from the dice seeds."""
    digest = hashlib.blake2b(f"nardy-bot:{unit_seed}:{slot}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass(slots=True)
class _Unit:
    """One finished game or match: who was White, who won, and bot A's net points. A drawn unit
    (a plakoto game, RULES.md §3.12.2; a match cannot end drawn) has ``draw`` set and no winner:
    ``a_won`` and ``white_won`` are then False."""

    a_white: bool
    a_won: bool
    white_won: bool
    a_points: int
    games: int
    draw: bool = False


def _parse_bots(text: str) -> tuple[str, str]:
    from nardy.bots import make_bot

    names = [name.strip() for name in text.split(",")]
    if len(names) != 2 or not all(names):
        raise click.BadParameter(
            f"give two bots separated by a comma, like heuristic,random, not {text!r}",
            param_hint="'--bots'",
        )
    for name in names:
        try:
            make_bot(name, 0)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="'--bots'") from None
    return names[0], names[1]


def _shown_name(name: str) -> str:
    """The name a bot of ``--bots`` is shown under (tables, records, ``.mat``): what ``--bots``
    says for an installed bot (``heuristic``, ``gnubg:2``, ``neural:FILE``: the text picks it),
    the bot's own ``name`` for ``module:Class`` of a Python bot (it was shown as
    ``mybots:BlotBot`` where the bot calls itself ``blotbot``), unless it kept the default."""
    from nardy.bots import Bot, installed_bots, make_bot

    if name.partition(":")[0] in installed_bots():
        return name
    own = make_bot(name, 0).name
    return own if own and own != Bot.name else name


def _labels(names: tuple[str, str]) -> tuple[str, str]:
    shown = (_shown_name(names[0]), _shown_name(names[1]))
    if shown[0] == shown[1]:
        return f"{shown[0]} (A)", f"{shown[1]} (B)"
    return shown


def _match_length(variant: Variant, match: int | None) -> int | None:
    """The match length to play (``--match`` or the variant option ``match_length``), or None."""
    option = cast("int | None", variant.options.get("match_length"))
    if match is not None and option is not None and option != match:
        raise click.BadParameter(
            f"--match {match} contradicts -o match_length={option}", param_hint="'--match'"
        )
    length = match if match is not None else option
    if length is None and variant.info.cycle:
        raise click.BadParameter(
            f"{variant.name} is played only as a match ({' → '.join(variant.info.cycle)}): "
            "give --match N",
            param_hint="'--match'",
        )
    if length is not None and importlib.util.find_spec("nardy.core.match") is None:
        raise click.BadParameter(
            "match play is not available in this version", param_hint="'--match'"
        )
    return length


def _play_unit(
    variant: Variant,
    bots: tuple[Bot, Bot],
    seed: int,
    match_length: int | None,
    on_game: Callable[[Game, int], None],
    started: Callable[[Game, int], None] = lambda game, number: None,
) -> tuple[int | None, int, int]:
    """Play one money game or one match with ``bots`` (White, Black); ``started`` is called with
    each game when it starts and ``on_game`` when it ends (with its number in the match).

    Returns (winner colour, None for a drawn game; White's net points; games played).
    """
    from nardy.bots import play_game
    from nardy.core.dice import SeededDice
    from nardy.core.game import cube_settings_for

    dice = SeededDice(seed)
    if match_length is None:
        game = play_game(
            variant,
            bots,
            dice,
            cube=cube_settings_for(variant, match_length=None),
            started=_numbered(started, 0),
        )
        on_game(game, 0)
        assert game.result is not None
        if game.result.draw:  # 0 points; its GameResult.winner only made the last step
            return None, 0, 1
        winner = game.result.winner
        return winner, game.result.points if winner == 0 else -game.result.points, 1
    from nardy.core.match import Match

    match = Match.of(variant, match_length)  # a match variant (tavli) cycles its games' variants
    number = 0
    while not match.is_over:
        for colour, bot in enumerate(bots):  # bots that weigh match equities (gnubg) see the score
            if hasattr(bot, "set_match"):
                bot.set_match(match_length, (match.score[colour], match.score[1 - colour]))
        game = play_game(
            match.game_variant,
            bots,
            dice,
            starter=match.starter(),
            cube=match.cube_settings(),
            started=_numbered(started, number),
        )
        on_game(game, number)
        assert game.result is not None
        match.add_result(game.result)
        number += 1
    match_winner = match.winner
    assert match_winner is not None
    return match_winner, match.score[0] - match.score[1], number


def _match_info(variant: Variant, length: int, earlier: Sequence[Game], number: int) -> MatchInfo:
    """Where game ``number`` (from 0) of a match stands: the match length, the score before
    it (White, Black) and whether it is the Crawford game, replayed from the match's earlier
    games, so that `nardy analyze` counts it in match terms (docs/analysis.md; issue 34)."""
    from nardy.core.match import Match
    from nardy.core.record import MatchInfo

    match = Match.of(variant, length)
    for game in earlier:
        assert game.result is not None
        match.add_result(game.result)
    score = (match.score[0], match.score[1])
    return MatchInfo(length, score, number + 1, match.crawford_game)


def _numbered(started: Callable[[Game, int], None], number: int) -> Callable[[Game], None]:
    """``started`` of the game ``number`` of a unit, as :func:`~nardy.bots.play_game` calls it."""
    return lambda game: started(game, number)


def _write_mat(
    path: Path,
    index: int,
    total: int,
    games: list[Game],
    players: tuple[str, str],
    match_length: int | None,
) -> None:
    """Write one match (or the games of one money unit) as a .mat file."""
    from nardy.core.gnubg import write_mat
    from nardy.core.mat import mat_record
    from nardy.core.record import of_game

    target = (
        path if total == 1 else path.with_name(f"{path.stem}-{index + 1}{path.suffix or '.mat'}")
    )
    target.write_text(
        write_mat(mat_record([of_game(g) for g in games], players, match_length)), encoding="utf-8"
    )


def _summary_json(
    variant: Variant,
    labels: tuple[str, str],
    units: list[_Unit],
    seed: int,
    match_length: int | None,
    seconds: float,
) -> dict[str, Any]:
    from nardy.arena.competition.stats import summarize

    n = len(units)
    bots = []
    for slot, label in enumerate(labels):
        sign = 1 if slot == 0 else -1
        won = [float(u.a_won if slot == 0 else not (u.a_won or u.draw)) for u in units]
        points = [float(sign * u.a_points) for u in units]
        ppu = summarize(points)
        bot: dict[str, Any] = {
            "name": label,
            "wins": int(sum(won)),
            "win_rate": sum(won) / n,
            "win_rate_ci95": list(_wilson(int(sum(won)), n)),
            "points": int(sum(points)),
            "points_per_unit": ppu.mean,
            "points_se": _finite(ppu.se),
            "points_ci95": [_finite(x) for x in ppu.ci],
        }
        if match_length:
            # A match is won or lost, whatever the points: +1 or -1 (a match never ends drawn),
            # as the arena's match pools score it. The points above add every game's cube and
            # gammons uncapped (RULES.md §2.12, "game results are added"), so a 3-point match
            # won on a cube of 64 counted +64; the mean of +-1 is the match equity, 2p - 1.
            equity = summarize([1.0 if w else -1.0 for w in won])
            bot["match_equity"] = equity.mean
            bot["match_equity_se"] = _finite(equity.se)
            bot["match_equity_ci95"] = [_finite(x) for x in equity.ci]
        bots.append(bot)
    return {
        "variant": variant.name,
        "options": variant.options,
        "changed_options": {
            spec.name: variant.options[spec.name]
            for spec in variant.info.options
            if variant.options.get(spec.name) != spec.default
        },
        "match_length": match_length,
        # The same keys in money play and match play: a unit is a game or a whole match.
        "unit": "match" if match_length else "game",
        "units": n,
        "games_played": sum(u.games for u in units),
        "seed": seed,
        "white_wins": sum(u.white_won for u in units),
        "draws": sum(u.draw for u in units),
        "seconds": round(seconds, 3),
        "bots": bots,
    }


def _wilson(wins: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a win rate (sensible at 0 % and 100 %, unlike mean ± z·SE)."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _finite(value: float) -> float | None:
    return None if value != value else value  # NaN (fewer than two units) → null


def _print_summary(summary: dict[str, Any], labels: tuple[str, str]) -> None:
    from rich.table import Table

    from nardy.arena.competition.stats import MIN_UNITS_SHOWN, se_shown
    from nardy.listing import table_console, value_text

    unit = summary["unit"]
    n = summary["units"]
    options = summary["changed_options"]
    units = f"{n} {unit}{'es' if unit == 'match' else 's'}" if n != 1 else f"1 {unit}"
    title = f"{summary['variant']}: {labels[0]} vs {labels[1]}, {units}"
    if unit == "match":
        title += f" to {summary['match_length']} points ({summary['games_played']} games)"
    title += f", seed {summary['seed']}"
    # Matches in match terms (+1 won, -1 lost: the match equity), games in points; an SE and
    # an interval only from MIN_UNITS_SHOWN units on (docs/statistics.md).
    match_terms = unit == "match"
    few = n > 1 and not se_shown(n)
    plural = f"{unit}{'es' if match_terms else 's'}"
    table = Table(
        title=title,
        title_justify="left",
        caption=f"n/a: fewer than {MIN_UNITS_SHOWN} {plural}" if few else None,
        caption_justify="left",
    )
    table.add_column("Bot", style="bold", no_wrap=True)
    table.add_column("Wins", justify="right")
    table.add_column("Win rate (95% CI)", justify="right")
    table.add_column("Match equity ± SE" if match_terms else f"Points/{unit} ± SE", justify="right")
    table.add_column("95% interval", justify="right")
    for bot in summary["bots"]:
        mean = bot["match_equity" if match_terms else "points_per_unit"]
        se = bot["match_equity_se" if match_terms else "points_se"]
        lo, hi = bot["match_equity_ci95" if match_terms else "points_ci95"]
        if se is None:
            shown, interval = f"{mean:+.3f}", "—"
        elif few:
            shown, interval = f"{mean:+.3f} ± n/a", "n/a"
        else:
            shown, interval = f"{mean:+.3f} ± {se:.3f}", f"[{lo:+.3f}, {hi:+.3f}]"
        table.add_row(
            bot["name"],
            str(bot["wins"]),
            f"{100 * bot['win_rate']:.1f}% ({100 * bot['win_rate_ci95'][0]:.0f}–{100 * bot['win_rate_ci95'][1]:.0f})",
            shown,
            interval,
        )
    console = table_console()
    console.print(table)
    breakdown = Table(
        title="Results by kind (each game once; points = what the winner scored)",
        title_justify="left",
    )
    breakdown.add_column("Result", no_wrap=True)
    breakdown.add_column("Cube", justify="right")
    breakdown.add_column("Points", justify="right")
    for label in labels:
        breakdown.add_column(f"{label} won", justify="right")
    drawn_games = sum(row["draws"] for row in summary["results"])
    if drawn_games:
        breakdown.add_column("Draws", justify="right")
    for row in summary["results"]:
        breakdown.add_row(
            row["result"],
            str(row["cube"]),
            str(row["points"]),
            *(str(w) for w in row["wins"]),
            *([str(row["draws"])] if drawn_games else []),
        )
    console.print(breakdown)
    if summary["draws"]:
        console.print(
            f"Draws: {summary['draws']} of {n} {unit}s (neither bot won).", highlight=False
        )
    seconds = summary["seconds"]
    rate = summary["games_played"] / seconds if seconds > 0 else float("inf")
    console.print(
        f"Colours alternate every {unit}; White won {summary['white_wins']} of {n}. "
        f"Options: {', '.join(f'{k}={value_text(v)}' for k, v in options.items()) or 'defaults'}. "
        f"{seconds:.1f} s, {rate:.0f} games/s.",
        highlight=False,
    )


@click.command()
@VARIANT_OPTION
@click.option(
    "--bots",
    "bots_text",
    default="heuristic,random",
    show_default=True,
    metavar="A,B",
    help="The two bots, comma-separated (built-in: heuristic, random, neural[:FILE], gnubg[:PLY]; "
    "human[:EVALUATOR]: you, at the terminal, docs/play.md).",
)
@click.option(
    "--games",
    "-n",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Games to play (matches, with --match).",
)
@click.option(
    "--seed",
    # One rule for every seed of the project (nardy arena run: the same range and message).
    type=click.IntRange(0, MAX_SEED),
    default=None,
    help="Seed of the run, 0…2**63-1; game i uses dice seed SEED*1000003+i. Default: random "
    "(printed when the run starts).",
)
@OPTIONS_OPTION
@click.option(
    "--match",
    "match",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Play matches to N points instead of single money games.",
)
@click.option(
    "--jsonl",
    "jsonl_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Write every game record to FILE, one JSON object per line (its result: winner, points, "
    "termination, multiplier, cube; see the README).",
)
@click.option(
    "--mat",
    "mat_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Backgammon: export each match (or money session) to the Jellyfish/gnubg .mat format; "
    "with several, FILE-1.mat, FILE-2.mat, ...",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def play(
    variant_name: str,
    bots_text: str,
    games: int,
    seed: int | None,
    option_items: tuple[str, ...],
    match: int | None,
    jsonl_path: Path | None,
    mat_path: Path | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Play bots against each other and summarise the results.

    The two bots swap colours every game (or match), so neither always has the same seat. The
    summary gives, for each bot, its wins and win rate, and its points per game (net: won minus lost,
    cube and gammons included) with the standard error (sample SD / √n) and a 95% interval, shown from
    10 games on (docs/statistics.md). With --match, a match counts as won or lost: its match equity
    (+1 won, -1 lost) replaces the points. The cube is used when the variant's options turn it on
    (backgammon: -o cube=false to play without it).

    \b
    Examples:
      nardy play --variant long --bots heuristic,random --games 1000 --seed 7
      nardy play --variant backgammon --games 200 --match 7 --seed 1
      nardy play -v long -o scoring=per_checker --games 50 --json --jsonl games.jsonl
      nardy play --variant long --bots human,neural     # you against the net (docs/play.md)
    """
    from nardy.bots.human import has_human, show_result, watch_game
    from nardy.bots.registry import BotMaker
    from nardy.core.record import MatchInfo, Player, of_game, outcome_of
    from nardy.results import ResultCounter

    variant = load_variant(variant_name, option_items)
    names = _parse_bots(bots_text)
    human = has_human(names)
    games_source = click.get_current_context().get_parameter_source("games")
    if human and games_source == click.core.ParameterSource.DEFAULT:
        games = 1  # a person plays one game (or match) unless --games says more
    makers = (BotMaker(names[0]), BotMaker(names[1]))  # each name resolved once, not per game
    labels = _labels(names)
    match_length = _match_length(variant, match)
    if mat_path is not None and variant.name not in ("backgammon", "hypergammon"):
        raise click.BadParameter(
            "the .mat format holds backgammon and hypergammon only", param_hint="'--mat'"
        )
    if mat_path is not None and match_length is None and variant.options.get("auto_doubles"):
        raise click.BadParameter(
            "the .mat format has no automatic doubles (gnubg would score those games at half); "
            "play without -o auto_doubles=true",
            param_hint="'--mat'",
        )
    random_seed = seed is None
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)

    from rich.console import Console
    from rich.progress import TimeRemainingColumn

    err_console = Console(stderr=True)
    units: list[_Unit] = []
    results = ResultCounter(variant.rules.scoring)
    records: IO[str] | None = jsonl_path.open("w", encoding="utf-8") if jsonl_path else None
    if random_seed and not as_json:
        # Printed before the first game, so that an interrupted run can be repeated (a seed given
        # with --seed is known already; the summary's title shows it too).
        click.echo(f"Seed {seed} (random; repeat this run with --seed {seed}).", err=True)
    started = time.perf_counter()
    interrupted = False
    unfinished: list[Callable[[], None]] = []
    """Records the game in progress as interrupted (a person stopped it: end of input, Ctrl-C)."""
    try:
        with (
            deferred_interrupt() as ctrl_c,
            # no bar under a human's board
            progress_bar(err_console, quiet or human, TimeRemainingColumn()) as progress,
        ):
            task = progress.add_task(f"{variant.name}: {labels[0]} vs {labels[1]}", total=games)
            for index in range(games):
                ctrl_c.check()  # Ctrl-C stops the run here, between two games or matches
                unit_seed = game_seed(seed, index)
                a_white = index % 2 == 0
                slots = (0, 1) if a_white else (1, 0)  # bot slot playing White, Black
                bots = (
                    makers[slots[0]](_bot_seed(unit_seed, slots[0])),
                    makers[slots[1]](_bot_seed(unit_seed, slots[1])),
                )

                unit_games: list[Game] = []

                def write(
                    game: Game,
                    number: int,
                    index: int = index,
                    unit_seed: int = unit_seed,
                    slots: tuple[int, int] = slots,
                    unit_games: list[Game] = unit_games,
                    bots: tuple[Bot, Bot] = bots,
                ) -> None:
                    unfinished.clear()
                    if game.result is not None:
                        unit_games.append(game)
                        show_result(bots, game)
                    if records is None:
                        return
                    match = MatchInfo()
                    if match_length is not None:
                        earlier = [g for g in unit_games if g is not game]
                        match = _match_info(variant, match_length, earlier, number)
                    record = of_game(
                        game,
                        seed=unit_seed,
                        players=(Player(labels[slots[0]]), Player(labels[slots[1]])),
                        match=match,
                        index=index,
                        # Stopped by the person: the game so far, marked interrupted.
                        interrupted=game.result is None,
                        # The arena records' words; "reason" stays for this release (README).
                        outcome=None if game.result is None else outcome_of(game.result),
                    )
                    records.write(record.line() + "\n")

                def start(
                    game: Game,
                    number: int,
                    bots: tuple[Bot, Bot] = bots,
                    slots: tuple[int, int] = slots,
                    write: Callable[[Game, int], None] = write,
                ) -> None:
                    watch_game(bots, game, (labels[slots[0]], labels[slots[1]]))
                    unfinished[:] = [lambda: write(game, number)]

                winner, white_points, played = _play_unit(
                    variant, bots, unit_seed, match_length, write, start
                )
                for finished in unit_games:
                    assert finished.result is not None
                    results.add(finished.result, slots[finished.result.winner])
                if mat_path is not None:
                    players = (labels[slots[0]], labels[slots[1]])
                    _write_mat(mat_path, index, games, unit_games, players, match_length)
                a_won = winner is not None and (winner == 0) == a_white
                units.append(
                    _Unit(
                        a_white,
                        a_won,
                        winner == 0,
                        white_points if a_white else -white_points,
                        played,
                        draw=winner is None,
                    )
                )
                progress.advance(task)
    except KeyboardInterrupt:
        # Ctrl-C: the summary of the finished games, the seed, and the shell's exit status 130.
        interrupted = True
        for record_unfinished in unfinished:
            record_unfinished()
    finally:
        if records is not None:
            records.close()
    if not units:  # a person stopped the first game: nothing to sum up (and no rate of 0 games)
        click.echo(
            f"Stopped before the first {'game' if match_length is None else 'match'} "
            f"ended (seed {seed})"
            + (f"; the game so far is in {jsonl_path}, marked interrupted." if jsonl_path else "."),
            err=True,
        )
        raise SystemExit(130)  # no --json summary either: its schema needs a finished unit
    summary = _summary_json(
        variant, labels, units, seed, match_length, time.perf_counter() - started
    )
    summary["results"] = results.rows()
    if interrupted:
        summary["interrupted"] = True
        click.echo(
            f"Interrupted after {len(units)} of {games} {'games' if match_length is None else 'matches'}"
            f" (seed {seed}); the summary of those:",
            err=True,
        )
    if as_json:
        click.echo(json.dumps(summary, ensure_ascii=False, indent=2))
    elif units:
        _print_summary(summary, labels)
    if interrupted:
        raise SystemExit(130)


# -- nardy show ---------------------------------------------------------------------------------------


@click.command(cls=_PositionCommand)
@click.argument("position_text", metavar="POSITION", type=_PositionText())
@VARIANT_OPTION
@click.option(
    "--side",
    type=click.Choice(["mover", "opponent"]),
    default="mover",
    show_default=True,
    help="Whose seat and coordinates to draw the board from.",
)
@click.option(
    "--absolute",
    is_flag=True,
    help="Number the points absolutely (White's coordinates) instead of the side's own.",
)
@click.option(
    "--mover",
    "mover_colour",
    type=click.Choice(["white", "black"]),
    default="white",
    show_default=True,
    help="The mover's colour (decides what --absolute means).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the position JSON, id and pip counts instead."
)
@click.option(
    "--svg",
    "svg_path",
    metavar="FILE",
    default=None,
    help="Write the board as an SVG picture to FILE ('-' for standard output) instead.",
)
def show(
    position_text: str,
    variant_name: str,
    side: str,
    absolute: bool,
    mover_colour: str,
    as_json: bool,
    svg_path: str | None,
) -> None:
    """Draw POSITION (a position id, position JSON, or for the backgammon family a gnubg Position
    ID such as 4HPwATDgc/ABMA) as a text board.

    The position is seen from the player to move (the mover), as every position in nardy is. The
    board shows the mover's points 13–24 on top and 12–1 below (home at the bottom right), X for the
    mover's checkers and O for the opponent's, the bar and borne-off counts, and both pip counts.
    --side opponent draws it from the other player's seat, in his coordinates (the flip depends on the
    variant's geometry, so give --variant).

    \b
    Examples:
      nardy show b----E/-C---e/E---c-/e----B
      nardy show b----E/-C---e/E---c-/e----B --side opponent --absolute --mover black
      nardy show ------/-----o/------/-----O --variant long
      nardy show b----E/-C---e/E---c-/e----B --json
      nardy show ------/-----o/------/-----O --variant long --svg board.svg
      nardy show 4HPwATDgc/ABMA
    """
    from nardy.core.board_text import pip_counts, render_board

    variant = one_game_variant(load_variant(variant_name, ()), "a board")
    position = _parse_position(position_text, variant)
    if svg_path is not None:
        from nardy.svg_cli import write_svg

        write_svg(position, variant, svg_path, flipped=side == "opponent", mover=mover_colour)
        return
    if as_json:
        pips = pip_counts(position, variant.rules.geometry)
        data = {
            "id": position.id(),
            "variant": variant.name,
            "position": position.to_json(),
            "pips": list(pips),
        }
        click.echo(json.dumps(data))
        return
    click.echo(
        render_board(
            position,
            variant,
            side="opponent" if side == "opponent" else "mover",
            absolute=absolute,
            mover_colour="black" if mover_colour == "black" else "white",
        ),
        nl=False,
    )


# -- nardy plays --------------------------------------------------------------------------------------


def _parse_dice(text: str) -> dict[str, list[int]]:
    values = [int(c) for c in re.findall(r"\d", text)]
    if len(values) == 2:
        return {"dice": values}
    return {"steps": values}


@click.command(cls=_PositionCommand)
@click.argument("position_text", metavar="[POSITION", required=False, type=_PositionText())
@click.argument("dice_text", metavar="DICE]", required=False)
@VARIANT_OPTION
@OPTIONS_OPTION
@click.option(
    "--jsonl",
    "jsonl",
    is_flag=True,
    help="Read one JSON query per line from standard input; write one JSON answer per line.",
)
@click.option(
    "--stats", is_flag=True, help="With --jsonl: print queries, errors and queries/s to stderr."
)
def plays(
    position_text: str | None,
    dice_text: str | None,
    variant_name: str,
    option_items: tuple[str, ...],
    jsonl: bool,
    stats: bool,
) -> None:
    """List the legal plays of one segment: of POSITION with DICE, or of JSON queries (--jsonl).

    POSITION is a position id or position JSON, seen from the mover. DICE with two numbers is a roll
    (3-1; 6-6 is four sixes); with one, three or four numbers it is the steps of one segment (6-6-6).

    \b
    Query (one per line):
      {"position": P, "dice": [6, 3]}         a roll; a double [d, d] is four steps d
      {"position": P, "steps": [6, 6]}        exactly one segment's steps: [6, 3], [5, 5], [4, 4, 4, 4]
    P = {"points": [24 ints], "bar": [m, o], "off": [m, o]}, seen from the mover (positive = mover's
    checkers); P may carry a "state" object, reserved for variant turn state (its keys are ignored
    for now). An optional "id" is echoed back.

    \b
    Answer (one per query, in order; blank lines are skipped):
      {"plays": [{"text": "24/18 13/10", "result": P'}, ...]}   P' still from the mover's view
      {"error": "..."}                                          and the next line is read
    A query whose segment has no legal step has one play, {"text": "", "result": P}.

    Answers are flushed whenever the input pauses, so a program may send one query at a time and
    wait for its answer; piped files are answered in large buffered writes.

    \b
    Examples:
      nardy plays b----E/-C---e/E---c-/e----B 3-1
      nardy plays --variant long ------/-----o/------/-----O 6-6
      nardy plays --variant backgammon --jsonl < queries.jsonl > answers.jsonl
    """
    variant = one_game_variant(load_variant(variant_name, option_items), "listing plays")
    if jsonl:
        if position_text is not None:
            raise click.UsageError(
                "--jsonl reads its queries from standard input; give no POSITION or DICE"
            )
        from nardy.core.jsonl import run_jsonl_stream

        started = time.perf_counter()
        counts = run_jsonl_stream(variant, sys.stdin.buffer, sys.stdout)
        if stats:
            seconds = time.perf_counter() - started
            rate = counts.queries / seconds if seconds > 0 else float("inf")
            click.echo(
                f"{counts.queries} queries, {counts.errors} errors, {seconds:.3f} s, {rate:.0f} queries/s",
                err=True,
            )
        return
    if position_text is None or dice_text is None:
        raise click.UsageError(
            "give POSITION and DICE (e.g. 3-1), or --jsonl to read queries from stdin"
        )
    from nardy.core.jsonl import answer_query

    position = _parse_position(position_text, variant)
    answer = answer_query(variant, {"position": position.to_json(), **_parse_dice(dice_text)})
    if "error" in answer:
        raise click.BadParameter(answer["error"], param_hint="'DICE'")
    from nardy.core.position import Position

    found = answer["plays"]
    click.echo(
        f"{len(found)} legal play{'s' if len(found) != 1 else ''} ({variant.name}, {dice_text}):"
    )
    texts = [item["text"] for item in found]
    if variant.rules.hitting.pins:  # shown with ^ on each pinning step (RULES.md §3.12.2: 13/7^)
        from nardy.core.variant import pin_marked_text

        texts = [pin_marked_text(position, text) if text else text for text in texts]
    width = max(len(text) for text in texts) if found else 0
    for number, (item, text) in enumerate(zip(found, texts, strict=True), start=1):
        result = Position.from_json(item["result"], variant.checkers)
        click.echo(f"{number:4}. {(text or '(no move)').ljust(max(width, 9))}  → {result.id()}")


# -- nardy hint ---------------------------------------------------------------------------------------

_CUBE_OWNERS: dict[str, CubeOwner] = {"centre": "centre", "mover": "mover", "opponent": "opponent"}


@click.command(cls=_PositionCommand)
@click.argument("position_text", metavar="POSITION", type=_PositionText())
@VARIANT_OPTION
@OPTIONS_OPTION
@click.option(
    "--dice",
    "dice",
    type=click.IntRange(1, 6),
    nargs=2,
    default=None,
    metavar="A B",
    help="The roll to rank the plays of (6 5; a double is its first segment, four steps). "
    "Without it: the position's equity and cube decision only.",
)
@ply_option(3, "Search depth (0 = the evaluator alone; each ply averages the next roll).")
@evaluator_option(
    "neural", "neural[:FILE], neural-consistent, heuristic, gnubg (backgammon) or an installed one."
)
@click.option(
    "--cube-owner",
    type=click.Choice(["centre", "mover", "opponent"]),
    default="centre",
    show_default=True,
    help="Who owns the cube (variants with a cube): the mover may double when centred or his.",
)
@click.option("--top", type=click.IntRange(1), default=10, show_default=True, help="Plays shown.")
@click.option("--json", "as_json", is_flag=True, help="Print the hint as JSON (every play).")
def hint(
    position_text: str,
    variant_name: str,
    option_items: tuple[str, ...],
    dice: tuple[int, int] | None,
    ply: int,
    evaluator: str,
    cube_owner: str,
    top: int,
    as_json: bool,
) -> None:
    """The engine's hint on POSITION: its legal plays with --dice ranked by equity at --ply, the
    position's equity, and the cube decision where the variant has a cube.

    POSITION is a position id, position JSON, or for the backgammon family a gnubg Position ID,
    seen from the player to move. Equities are cubeless points of one game from his side; the
    cube's (no double, double/take, double/pass) are normalised to the cube, as in `nardy analyze`.

    \b
    Examples:
      nardy hint 4HPwATDgc/ABMA --dice 6 5
      nardy hint ------/-----o/------/-----O --variant long --dice 6 5 --ply 1
      nardy hint 4HPwATDgc/ABMA --json
    """
    from nardy.analysis.hint import hint as engine_hint
    from nardy.core.errors import NardyError
    from nardy.core.jsonl import QueryError, parse_segment

    variant = one_game_variant(load_variant(variant_name, option_items), "a hint")
    position = _parse_position(position_text, variant)
    try:
        steps = parse_segment({"dice": list(dice)}) if dice else None
    except QueryError as error:
        raise click.BadParameter(str(error), param_hint="'--dice'") from None
    try:
        found = engine_hint(
            variant,
            position,
            dice=steps,
            ply=ply,
            evaluator=evaluator,
            cube_owner=_CUBE_OWNERS[cube_owner],
        )
    except ValueError as error:  # an unknown or unusable evaluator
        raise click.BadParameter(one_line(str(error)), param_hint="'--evaluator'") from None
    except NardyError as error:  # the game is over, or the dice cannot be played here
        raise click.ClickException(one_line(str(error))) from None
    if as_json:
        click.echo(json.dumps(found.to_json()))
        return
    roll = f", {dice[0]}-{dice[1]}" if dice else ""
    click.echo(
        f"{variant.name}{roll} at {ply}-ply ({evaluator}): equity before the roll "
        f"{found.equity:+.3f}"
    )
    if dice:
        count = len(found.plays)
        click.echo(f"{count} legal play{'s' if count != 1 else ''}, best first:")
        width = max(len(text) for text in found.texts[:top])
        for rank, (play, text) in enumerate(zip(found.plays[:top], found.texts, strict=False), 1):
            loss = f"  ({-play.loss:+.3f})" if rank > 1 else ""
            depth = f"  [{play.ply}-ply]" if play.ply != ply else ""
            click.echo(f"{rank:4}. {text.ljust(width)}  {play.equity:+.3f}{loss}{depth}")
        if count > top:
            click.echo(f"      … {count - top} more (--top {count}, or --json)")
    if found.cube is not None:
        cube = found.cube
        click.echo(
            f"cube: {cube.best} (no double {cube.no_double:+.3f}, double/take "
            f"{cube.double_take:+.3f}, double/pass {cube.double_pass:+.3f})"
        )


if __name__ == "__main__":  # pragma: no cover
    main()
