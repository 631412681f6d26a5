"""``nardy analyze``: the analysis of game records, per decision, per game and per bot."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nardy.analysis.records import GameInput, RecordError, from_arena_record, read_records
from nardy.cli_options import (
    check_ray_address,
    evaluator_option,
    executor_option,
    ply_option,
    progress_bar,
    ray_address_option,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType

    from rich.progress import Progress

    from nardy.analysis.game import DecisionAnalysis, GameAnalysis
    from nardy.analysis.rollout import BatchRunner, TrialJob
    from nardy.analysis.rollout_errors import RolloutSettings
    from nardy.engines.search import Searcher

__all__ = ["analyze_command", "database_games"]

MAX_PLY = 3


def database_games(target: str, tournament: str | None = None) -> list[GameInput]:
    """The stored games of a tournament database (a file or URL; all tournaments, or
    ``tournament``); :class:`RecordError` if it cannot be read or has no such tournament. Here, not
    in :mod:`~nardy.analysis.records`, because it reads the arena's storage, a layer above."""
    from nardy.arena.records.storage import StorageError, open_store

    try:
        store = open_store(target, readonly=True)
    except StorageError as error:
        raise RecordError(str(error)) from None
    try:
        ids = [t.tournament_id for t in store.tournaments()]
        if tournament is not None:
            if tournament not in ids:
                known = ", ".join(ids) or "none"
                raise RecordError(f"no tournament {tournament!r} in {target} (stored: {known})")
            ids = [tournament]
        games: list[GameInput] = []
        for tournament_id in ids:
            for row in store.games(tournament_id, records=True):
                if row.record is not None:
                    games.append(from_arena_record(row.game_id, row.record))
        return games
    finally:
        store.close()


class _Truncation(click.ParamType[Any, Any]):
    """``--rollout-truncate``: a number of rolls (0 or more), or ``full`` (None: to the end)."""

    name = "PLIES|full"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None or isinstance(value, int):
            return value
        if str(value).strip().lower() == "full":
            return None
        try:
            number = int(value)
        except ValueError:
            number = -1
        if number < 0:
            self.fail(f"{value!r} is not a number of rolls (0 or more) or 'full'", param, ctx)
        return number


def _rollout_line(item: DecisionAnalysis) -> str | None:
    """A rolled-out decision's figures, under its line (``--rollout``): the play made and the
    rolled-out best, each ± its SE, and the loss ± the SE of the paired difference."""
    found = item.rollout
    if found is None:
        return None
    data = found.played_json(item.played)
    plays = data["plays"]
    best = plays[0]
    made = next((p for p in plays if p["play"] == (item.played or "(no move)")), None)
    length = "full" if found.truncate is None else f"truncated after {found.truncate} rolls"
    line = f"       rolled out ({found.trials} trials, {length}): "
    if made is not None:
        line += f"played {made['equity']:+.3f} ± {made['se']:.3f}, "
    line += f"best {best['play']} {best['equity']:+.3f} ± {best['se']:.3f}"
    if data["loss"] is not None:
        se = "" if data["loss_se"] is None else f" ± {data['loss_se']:.3f}"
        line += f", lost {data['loss']:.3f}{se}"
    return line


def _rolled_out(
    games: Sequence[GameInput],
    analyses: list[GameAnalysis],
    searchers: Sequence[Searcher],
    settings: RolloutSettings,
    progress: Progress,
    ray: ModuleType | None,
    judges: Sequence[str],
) -> list[GameAnalysis]:
    """The analyses with their errors rolled out (:mod:`nardy.analysis.rollout_errors`), with a
    progress bar of the trials on stderr: here, or with ``ray`` (``--executor ray``) their trials
    on the cluster, each game's by its judge (``judges``, by name), with the same result."""
    from nardy.analysis.rollout_errors import rollout_errors, to_roll_out

    executors: dict[str, Callable[[TrialJob], BatchRunner]] = {}
    if ray is not None:
        from nardy.analysis.rollout_ray import on_ray

        for name in set(judges):
            executors[name] = on_ray(ray, name)

    marked = sum(len(to_roll_out(a.decisions)) for a in analyses)
    task = progress.add_task(
        f"rolling out {marked} error{'s' if marked != 1 else ''}",
        total=marked * settings.trials,
    )
    try:
        return [
            rollout_errors(
                game,
                analysis,
                searcher,
                settings,
                on_trials=lambda n: progress.advance(task, n),
                executor=executors.get(judge),
            )
            for game, analysis, searcher, judge in zip(
                games, analyses, searchers, judges, strict=True
            )
        ]
    except RecordError as error:
        raise click.ClickException(str(error)) from None


def _print_game(analysis: GameAnalysis, show: str) -> None:
    white, black = analysis.players
    winner = (
        "unfinished"
        if analysis.winner is None
        else f"{analysis.players[analysis.winner].name} wins {analysis.points}"
    )
    match = analysis.match
    if match is not None:
        # A match game in match terms too: the score it was played at and White's match equity
        # (ME = 2·MWC − 1, +1 a match won) before and after it (docs/analysis.md).
        where = f"{match.score[0]}-{match.score[1]} in a {match.length}-point match"
        where += ", Crawford" if match.crawford else ""
        if match.equity_before is not None and match.equity_after is not None:
            where += (
                f", White's match equity {match.equity_before:+.3f} → {match.equity_after:+.3f}"
            )
        winner += f" ({where})"
    click.echo(
        f"{analysis.label} ({analysis.variant}, {analysis.ply}-ply): {white.name} (White) vs "
        f"{black.name} (Black), {winner}{'' if analysis.complete else ' (record cut short)'}"
    )
    for item in analysis.decisions:
        if show == "marked" and item.mark is None:
            continue
        if show != "all" and show != "marked":
            continue
        who = analysis.players[item.player].name
        where = f"{item.segment} " if item.segment else ""
        luck = f"  luck {item.luck:+.3f}" if item.luck is not None else ""
        if item.match_luck is not None:  # in match equity, the result's unit in a match
            luck = f"  match luck {item.match_luck:+.3f}"
        label = f"  [{item.mark}]" if item.mark else ""
        click.echo(
            f"  {item.number:3}. {who}: {where}played {item.played or '(no move)'} "
            f"({item.equity_played:+.3f}), best {item.best or '(no move)'} "
            f"({item.equity_best:+.3f}), lost {item.loss:.3f}{label}{luck}"
        )
        rolled = _rollout_line(item)
        if rolled is not None:
            click.echo(rolled)
    for player in analysis.players:
        if player.match_result is None:
            click.echo(
                f"  {player.name}: {player.decisions} decisions, error rate "
                f"{player.error_rate:.4f} (PR {player.pr:.1f}), luck {player.luck:+.3f}, "
                f"result {player.points:+.0f}, luck-adjusted {player.adjusted:+.3f}"
            )
            continue
        adjusted = (
            ""
            if player.match_luck is None or player.match_adjusted is None
            else f", match luck {player.match_luck:+.3f}, luck-adjusted "
            f"{player.match_adjusted:+.3f}"
        )
        click.echo(
            f"  {player.name}: {player.decisions} decisions, error rate "
            f"{player.error_rate:.4f} (PR {player.pr:.1f}), result {player.points:+.0f} points, "
            f"match equity {player.match_result:+.3f}{adjusted}"
        )


@click.command("analyze")
@click.argument(
    "record",
    required=False,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@click.option("--db", "db", default=None, metavar="D", help="A tournament database (file or URL).")
@click.option(
    "--tournament", "tournament", default=None, metavar="T", help="With --db: only this one."
)
@ply_option(MAX_PLY, "Search depth of the analysis (0 = the evaluator alone).")
@click.option(
    "--luck-ply",
    type=click.IntRange(0, MAX_PLY),
    default=0,
    show_default=True,
    help="Depth at which the luck of each roll is measured.",
)
@evaluator_option(
    "strongest",
    "strongest (the strongest available for each variant: gnubg for backgammon where "
    "installed, else the shipped net; docs/analysis.md), neural[:FILE], neural-consistent "
    "(backgammon, long, fevga, giul, khachapuri), heuristic, gnubg (backgammon) or an installed "
    "one.",
)
@click.option(
    "--show",
    type=click.Choice(["marked", "all", "none"]),
    default="marked",
    show_default=True,
    help="Which decisions to print per game.",
)
@executor_option("Where games are analysed: this process, or in parallel on a Ray cluster.")
@ray_address_option(
    "With --executor ray: the cluster's head (host:port, ray://...; default RAY_ADDRESS, "
    "else a Ray instance on this machine)."
)
@click.option(
    "--rollout",
    "roll_out",
    is_flag=True,
    help="Roll out the plays marked error or blunder (their top plays, the play made and the "
    "best, the same dice for each) and show the rolled-out equities ± SE beside the evaluator's.",
)
@click.option(
    "--rollout-trials",
    type=click.IntRange(2),
    default=72,
    show_default=True,
    help="With --rollout: trials per play.",
)
@click.option(
    "--rollout-truncate",
    type=_Truncation(),
    default="5",
    show_default=True,
    help="With --rollout: rolls after which each game stops and is valued by the evaluator, "
    "or 'full' (to the end).",
)
@click.option(
    "--rollout-seed", type=int, default=0, show_default=True, help="With --rollout: the dice."
)
@click.option(
    "--rollout-top",
    type=click.IntRange(1),
    default=3,
    show_default=True,
    help="With --rollout: the best plays by the search rolled out.",
)
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def analyze_command(
    record: Path | None,
    db: str | None,
    tournament: str | None,
    ply: int,
    luck_ply: int,
    evaluator: str,
    show: str,
    executor: str,
    ray_address: str | None,
    roll_out: bool,
    rollout_trials: int,
    rollout_truncate: int | None,
    rollout_seed: int,
    rollout_top: int,
    as_json: bool,
    quiet: bool,
) -> None:
    """Analyse games: every play against the best at --ply, the luck of every roll, and per bot
    the error rate, PR and luck-adjusted result (docs/analysis.md).

    RECORD is a `nardy play --jsonl` file, an arena game record (JSON), or a .mat match; or give
    --db D [--tournament T] for the games of a tournament database.

    \b
    Examples:
      nardy play -v long --bots neural,heuristic --games 20 --jsonl games.jsonl
      nardy analyze games.jsonl
      nardy analyze games.jsonl --ply 1 --json > analysis.json
      nardy analyze games.jsonl --rollout --rollout-trials 144
      nardy analyze --db arena.db --tournament ladder
      nardy analyze --db arena.db --executor ray --ray-address head:6379
    """
    if (record is None) == (db is None):
        raise click.UsageError("give a RECORD file or --db D (not both)")
    check_ray_address(executor, ray_address)
    if not roll_out:
        context = click.get_current_context()
        for name in ("rollout_trials", "rollout_truncate", "rollout_seed", "rollout_top"):
            if context.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT:
                option = "--" + name.replace("_", "-")
                raise click.UsageError(f"{option} goes with --rollout")
    if roll_out and show == "none" and not as_json:
        # The rolled-out figures are printed under their decisions: none would be shown.
        raise click.UsageError("--rollout with --show none shows nothing: --show marked, or --json")
    # Imported here: `nardy --help` must work in an install without numpy (the neural extra).
    try:
        from nardy.analysis.game import analyse_game
        from nardy.analysis.stats import bot_results, judge_of, searchers_for, self_judged
        from nardy.engines.evaluator import STRONGEST
    except ImportError as error:
        raise click.ClickException(
            f"nardy analyze needs numpy ({error}): pip install 'nardy[neural]'"
        ) from None
    if tournament is not None and db is None:
        raise click.UsageError("--tournament needs --db")
    try:
        games = read_records(record) if record is not None else database_games(str(db), tournament)
    except RecordError as error:
        raise click.ClickException(str(error)) from None
    if not games:
        raise click.ClickException("no games to analyse")
    try:
        searchers = searchers_for(games, evaluator)
    except ValueError as error:
        hint = " (or analyse with --evaluator heuristic)" if evaluator == "neural" else ""
        raise click.ClickException(f"{error}{hint}") from None
    judges = sorted({judge_of(evaluator, game) for game in games})
    if evaluator == STRONGEST and len(judges) == 1:
        evaluator = judges[0]  # (the name reported, and what Ray workers are asked for)
    judged_by = ", ".join(judges)
    for bot in self_judged(games, evaluator):
        click.echo(
            f"warning: {bot} is judged by its own net ({judged_by}): its errors measure how it "
            "disagrees with itself, not its skill; judge it with another --evaluator",
            err=True,
        )

    from rich.console import Console

    from nardy.analysis.rollout_errors import RolloutSettings

    rollout_settings = (
        RolloutSettings(rollout_trials, rollout_truncate, rollout_seed, rollout_top)
        if roll_out
        else None
    )
    console = Console(stderr=True)
    analyses: list[GameAnalysis] = []
    with (
        progress_bar(console, quiet) as progress,
        ExitStack() as stack,
    ):
        task = progress.add_task(
            f"analysing {len(games)} game{'s' if len(games) != 1 else ''}",
            total=sum(len(g.actions) for g in games),
        )
        ray = None
        try:
            if executor == "ray":
                from nardy.analysis.distributed import analyse_on_ray, ray_session

                if rollout_settings is not None:  # one session: the analyses, then the rollouts
                    ray = stack.enter_context(ray_session(ray_address))
                analyses = analyse_on_ray(
                    games,
                    evaluator,
                    ply,
                    luck_ply=luck_ply,
                    address=ray_address,
                    on_game=lambda i: progress.advance(task, len(games[i].actions)),
                )
            else:
                for index, game in enumerate(games):
                    analyses.append(
                        analyse_game(
                            game,
                            searchers[index],
                            ply,
                            luck_ply=luck_ply,
                            on_decision=lambda: progress.advance(task),
                        )
                    )
        except RecordError as error:
            raise click.ClickException(str(error)) from None
        if rollout_settings is not None:
            judged = [judge_of(evaluator, game) for game in games]
            analyses = _rolled_out(
                games, analyses, searchers, rollout_settings, progress, ray, judged
            )
    results = bot_results(analyses)
    if as_json:
        out: dict[str, Any] = {
            "ply": ply,
            "luck_ply": luck_ply,
            "evaluator": judged_by,
            **({"rollout": rollout_settings.to_json()} if rollout_settings is not None else {}),
            "games": [a.to_json(decisions=show != "none") for a in analyses],
            "bots": {name: result.to_json() for name, result in results.items()},
        }
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    if show != "none":
        for analysis in analyses:
            _print_game(analysis, show)
    from nardy.analysis.report import results_table

    title = (
        f"{len(analyses)} games, {ply}-ply (judged by {judged_by}), luck at {luck_ply}-ply; ± SE"
    )
    if any(r.match is not None for r in results.values()):
        title += "; matches in match equity (+1 won, −1 lost)"
    table = results_table(results, title)
    from nardy.listing import table_console

    table_console().print(table)  # through a pipe: uncut, where rich took 80 columns
