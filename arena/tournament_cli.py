"""``nardy arena run | standings | verify | replay``: the tournament engine's commands.

``nardy.arena.cli.ARENA_COMMANDS`` names them for ``nardy arena``::

    nardy arena run tournament.toml [--db FILE] [--records FILE.jsonl] [--concurrency N] [--json] [--quiet]
    nardy arena run --variant long --bots heuristic,random --games 100 --seed 1
    nardy arena standings [--db FILE] [--tournament ID] [--json]
    nardy arena verify [TOURNAMENT] [--db FILE | --records FILE.jsonl --seed N --salt HEX] [--json]
    nardy arena replay GAME_ID [--db FILE] [--tournament ID] [--json]   # = verify --game

Also runnable alone: ``python -m nardy.arena.tournament_cli run ...``. Mistakes are one line on
standard error (``Error: ...``): exit code 2 for a bad definition (TOML, unknown bot or variant),
1 for a store or run failure (corrupt database, unreachable bot), 130 after Ctrl-C (the run can
be resumed by running the same command again).
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from nardy.arena.competition.schedule import (
    SPRT_INPUTS,
    DefinitionError,
    TournamentDef,
    TournamentError,
    check_builtins,
    definition_from_flags,
    load_definition,
)
from nardy.arena.competition.standings import PoolStandings, Standings, standings_from_store
from nardy.arena.competition.stats import MIN_UNITS_SHOWN, se_shown
from nardy.arena.competition.tournament import Tournament, TournamentEvent
from nardy.arena.records.audit import DiceAudit, public_dice
from nardy.arena.records.rows import tournament_json
from nardy.arena.records.storage import StorageError, open_store
from nardy.cli_options import (
    TableGroup,
    check_ray_address,
    evaluator_option,
    executor_option,
    ray_address_option,
)
from nardy.listing import table_console

if TYPE_CHECKING:
    from nardy.arena.competition.standings_analysis import PoolAnalysis

__all__ = ["DEFAULT_DB", "main", "render_standings", "run_command", "standings_command"]

DEFAULT_DB = "arena.db"
"""The SQLite file used when ``--db`` is not given."""


class _DefinitionProblem(click.ClickException):
    exit_code = 2


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _fail(exc: Exception) -> click.ClickException:
    if isinstance(exc, DefinitionError):
        return _DefinitionProblem(_one_line(str(exc)))
    return click.ClickException(_one_line(str(exc)))


# -- rendering --------------------------------------------------------------------------------------


def _num(x: float | None, fmt: str = "+.3f") -> str:
    return "-" if x is None or not math.isfinite(x) else format(x, fmt)


def _elo(x: float | None) -> str:
    """An Elo, signed, to the unit; one that rounds to zero is ``0``: ``+.0f`` wrote ``-0`` for
    the fit's -0.0 or -0.3 (two bots level), a sign that says nothing."""
    if x is None or not math.isfinite(x):
        return "-"
    rounded = round(x)
    return "0" if rounded == 0 else f"{rounded:+d}"


def _pool_tables(pool: PoolStandings) -> list[RenderableType]:
    unit = "Matches" if pool.match_length else "Games"
    options = ", ".join(f"{k}={v}" for k, v in sorted(pool.options.items()))
    title = f"{pool.label}" + (f" ({pool.variant}: {options})" if options else "")
    title += f" - {pool.units_done}/{pool.units_total} {unit.lower()}"
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("Bot", no_wrap=True)
    # A draws column only where a unit was drawn (a plakoto draw): other variants cannot draw.
    drawn = any(b.draws for b in pool.bots)
    # A match pool's bots play for matches, not points (issue 34): its games' points add every
    # cube uncapped (RULES.md §2.12), so in place of Net and Pts/g it shows the match equity per
    # match, +1 a match won and -1 one lost (BotStanding.match_equity), as Elo counts them.
    worth = ("Eq/match",) if pool.match_length else ("Net", "Pts/g")
    for name in (
        unit,
        "W",
        "L",
        *(("D",) if drawn else ()),
        "Forf.",
        *worth,
        "Elo",
        "±95%",
    ):
        table.add_column(name, justify="right")
    for b in pool.bots:
        ci = None if b.elo_se is None else 1.96 * b.elo_se
        table.add_row(
            str(b.rank),
            b.bot,
            str(b.units),
            str(b.wins),
            str(b.losses),
            *((str(b.draws),) if drawn else ()),
            str(b.forfeits),
            *(
                (_num(b.match_equity, "+.2f"),)
                if pool.match_length
                else (f"{b.net_points:+d}", _num(b.ppg, "+.2f"))
            ),
            _elo(b.elo),
            _num(ci, ".0f"),
        )
    out: list[RenderableType] = [table]
    if pool.pairings:
        what = "match score (+1/-1)" if pool.match_length else "points per game"
        # Below MIN_UNITS_SHOWN pairs the SE and interval are n/a (docs/statistics.md): the
        # spread of two pairs is no measure of the uncertainty ("SE 0.000" from two pairs).
        few = any(p.pairs and not se_shown(p.pairs) for p in pool.pairings)
        pt = Table(
            title=f"{pool.label} pairings: A's {what}, SE over duplicate pairs",
            title_justify="left",
            caption=f"n/a: fewer than {MIN_UNITS_SHOWN} duplicate pairs" if few else None,
            caption_justify="left",
        )
        pt.add_column("A vs B", no_wrap=True)
        for name in (unit, "W-L", "Mean", "95% CI", "SE", "SE iid", "Pairs"):
            pt.add_column(name, justify="right", no_wrap=name == "95% CI")
        for p in pool.pairings:
            low, high = p.ci
            interval = (
                "-"
                if low is None or not math.isfinite(low)
                else f"{low:+.2f}..{_num(high, '+.2f')}"
            )
            spread = (interval, _num(p.se, ".3f"), _num(p.se_independent, ".3f"))
            if p.pairs and not se_shown(p.pairs):
                spread = ("n/a", "n/a", "n/a")
            pt.add_row(
                f"{p.a} vs {p.b}",
                str(p.units),
                f"{p.a_wins}-{p.b_wins}",
                _num(p.mean, "+.2f"),
                *spread,
                str(p.pairs),
            )
        out.append(pt)
    if pool.sprt is not None:
        out.append(Text(pool.sprt.line))
    return out


def render_standings(standings: Standings) -> RenderableType:
    """The standings as rich renderables (one table per variant pool, plus pairings)."""
    head = Text(
        f"{standings.name} ({standings.tournament_id}): {standings.status}"
        + (f" - {standings.detail}" if standings.detail else "")
        + f"; {standings.games_stored} games stored",
        style="bold",
    )
    parts: list[RenderableType] = [head]
    for pool in standings.pools:
        parts.extend(_pool_tables(pool))
    return Group(*parts)


def _out() -> Console:
    """Standard output: a terminal's width, or no limit through a pipe or into a file, where a
    table must not be cut (:func:`nardy.listing.table_console`)."""
    return table_console()


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, allow_nan=False))


class _Display:
    """Progress while a tournament runs: a live view on a terminal, plain lines otherwise."""

    def __init__(self, tournament: Tournament, console: Console, quiet: bool) -> None:
        self.tournament = tournament
        self.console = console
        self.quiet = quiet
        self.live: Live | None = None
        self.standings: Standings | None = None
        self.sprt_line = ""
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("games stored: {task.fields[games]}"),
            TimeElapsedColumn(),
            console=console,
        )
        total = tournament.units_total
        self.task = self.progress.add_task(tournament.definition.name, total=total, games=0)
        self._last_line = 0.0

    def _renderable(self) -> RenderableType:
        parts: list[RenderableType] = [self.progress]
        if self.sprt_line:
            parts.append(Text(self.sprt_line))
        if self.standings is not None:
            for pool in self.standings.pools:
                parts.append(_pool_tables(pool)[0])
        return Group(*parts)

    def __enter__(self) -> _Display:
        if not self.quiet and self.console.is_terminal:
            self.live = Live(
                self._renderable(), console=self.console, refresh_per_second=4, transient=True
            )
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)
            self.live = None

    def __call__(self, event: TournamentEvent) -> None:
        if self.quiet:
            return
        tally = self.tournament.tally
        self.progress.update(self.task, completed=tally.units_completed, games=tally.games_stored)
        if event.kind == "tournament_started" and event.detail != "new":
            self.console.print(f"{self.tournament.tournament_id}: {event.detail}")
        elif event.kind == "sprt_updated":
            self.sprt_line = event.detail
            if self.live is None:
                self.console.print(event.detail, highlight=False)
        elif event.kind == "standings_updated":
            self.standings = event.standings
        elif event.kind == "game_ended" and self.live is None:
            now = time.monotonic()
            if now - self._last_line >= 5.0:
                self._last_line = now
                self.console.print(
                    f"{tally.units_completed}/{tally.units_total} units, "
                    f"{tally.games_stored} games stored",
                    highlight=False,
                )
        if self.live is not None:
            self.live.update(self._renderable())


# -- commands ---------------------------------------------------------------------------------------


def _definition(
    tournament_file: Path | None,
    variants: Sequence[str],
    bots: str | None,
    games: int | None,
    seed: int | None,
    fmt: str | None,
    match_length: int | None,
    duplicate: bool,
    sprt: str | None,
    name: str | None,
    sprt_on: str | None = None,
) -> TournamentDef:
    flag_form = bool(variants or bots or fmt or match_length or sprt or name)
    if tournament_file is not None:
        if flag_form or seed is not None:
            raise DefinitionError(
                "give a tournament file or --variant/--bots flags, not both "
                "(--games, --concurrency and the output options go with a file)"
            )
        definition = load_definition(tournament_file)
        if games is not None:
            data = definition.to_json()
            data["games"] = games
            definition = TournamentDef.from_json(data)
        if not duplicate:
            raise DefinitionError(
                "--independent-dice goes with flags; set duplicate = false in the file"
            )
        if sprt_on is not None:
            if definition.sprt is None:
                raise DefinitionError("--sprt-on needs an [sprt] table in the tournament file")
            data = definition.to_json()
            data["sprt"] = {**data["sprt"], "on": sprt_on}
            definition = TournamentDef.from_json(data)
        return definition
    if not bots or not variants:
        raise DefinitionError("give a tournament file, or --variant and --bots")
    return definition_from_flags(
        variants=variants,
        bots=bots,
        games=games if games is not None else 2,
        seed=seed if seed is not None else 1,
        name=name,
        format=fmt or "round_robin",
        match_length=match_length,
        duplicate=duplicate,
        sprt=sprt,
        sprt_on=sprt_on or "points",
    )


_DB_OPTION = click.option(
    "--db",
    default=DEFAULT_DB,
    show_default=True,
    help="SQLite file or postgresql:// URL of results.",
)
"""The results database option shared by ``run``, ``standings`` and ``replay``."""


@click.command("run")
@click.argument("tournament_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@_DB_OPTION
@click.option(
    "--records",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also append each game's record to this JSON-lines file as it ends.",
)
@click.option(
    "--concurrency",
    "-j",
    type=click.IntRange(min=1),
    help="Games played at once (each bot at most its capacity).",
)
@executor_option("Where games run: this machine, or a Ray cluster (docs/distributed.md).")
@ray_address_option(
    "With --executor ray: the cluster's head (host:port, ray://...; default RAY_ADDRESS, "
    "or a Ray instance of this machine)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the final standings as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@click.option(
    "--variant",
    "variants",
    multiple=True,
    help="Flag form: a variant (repeat for several rating pools).",
)
@click.option("--bots", help="Flag form: heuristic,random or NAME=builtin or NAME=host:port.")
@click.option("--games", type=click.IntRange(min=1), help="Games (matches) per pairing.")
@click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), help="Flag form: the seed.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["round_robin", "gauntlet"]),
    help="Flag form: pairings (gauntlet: the first bot against the others).",
)
@click.option(
    "--match-length",
    type=click.IntRange(min=1),
    help="Flag form: play matches to this many points.",
)
@click.option(
    "--independent-dice", "independent", is_flag=True, help="Flag form: no duplicate dice."
)
@click.option(
    "--sprt",
    metavar="ELO0,ELO1",
    help="Flag form (head-to-head): stop when the SPRT decides, e.g. 0,50.",
)
@click.option(
    "--sprt-on",
    "sprt_on",
    type=click.Choice(SPRT_INPUTS),
    help="The SPRT's input: points (default) or luck-adjusted points (nardy.analysis, 0-ply "
    "neural; fewer games). With flags, --sprt then gives MU0,MU1 in points per game.",
)
@click.option("--name", help="Flag form: the tournament's name.")
def run_command(
    tournament_file: Path | None,
    db: str,
    records: Path | None,
    concurrency: int | None,
    executor: str,
    ray_address: str | None,
    as_json: bool,
    quiet: bool,
    variants: tuple[str, ...],
    bots: str | None,
    games: int | None,
    seed: int | None,
    fmt: str | None,
    match_length: int | None,
    independent: bool,
    sprt: str | None,
    sprt_on: str | None,
    name: str | None,
) -> None:
    """Run (or resume) a tournament defined by TOURNAMENT_FILE (TOML) or by flags.

    Every game is stored in --db as it ends; run the same command again after an interruption
    and the tournament resumes where it stopped (no game lost, none played twice).

    \b
    Examples:
      nardy arena run examples/tournament.toml --concurrency 4
      nardy arena run examples/round_robin_js.toml   # starts the JavaScript example bot
      nardy arena run --variant long --bots heuristic,random --games 100 --seed 1
      nardy arena run --variant backgammon --bots heuristic,random --games 1000 --sprt 0,50
      nardy arena run T.toml --executor ray --ray-address head:6379   # on a Ray cluster
    """
    try:
        definition = _definition(
            tournament_file,
            variants,
            bots,
            games,
            seed,
            fmt,
            match_length,
            not independent,
            sprt,
            name,
            sprt_on,
        )
        check_builtins(definition)  # as `nardy play` does: gnubg missing is said up front
        check_ray_address(executor, ray_address)
        where: Any = "auto"
        if executor == "ray":
            from nardy.arena.competition.ray_executor import RayExecutor

            where = RayExecutor(ray_address)
            concurrency = concurrency or where.default_concurrency(definition)
        store = open_store(db)
        tournament = Tournament(
            definition, store, records=records, concurrency=concurrency, executor=where
        )
    except (DefinitionError, StorageError, TournamentError) as exc:
        raise _fail(exc) from None
    console = Console(stderr=True, soft_wrap=True)
    display = _Display(tournament, console, quiet)
    tournament.subscribe(display)
    try:
        with display:
            result = tournament.run()
    except KeyboardInterrupt:
        console.print("interrupted; run the same command again to resume")
        sys.exit(130)
    except (DefinitionError, StorageError, TournamentError) as exc:
        raise _fail(exc) from None
    finally:
        store.close()
    if as_json:
        _print_json(standings_json(result.standings, tournament.dice))
    else:
        _out().print(render_standings(result.standings))


@click.command("standings")
@_DB_OPTION
@click.option(
    "--tournament", "tournament_id", help="Tournament id (default: the most recently updated)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--list", "list_all", is_flag=True, help="List the stored tournaments.")
@click.option(
    "--analysis",
    "analysis",
    is_flag=True,
    help="Also analyse the stored games (0-ply): each bot's error rate and luck-adjusted "
    "points per game with standard errors.",
)
@evaluator_option(
    "strongest",
    "With --analysis: the evaluator (strongest: the strongest available for each variant, "
    "docs/analysis.md; neural, gnubg for backgammon, a plugin's).",
)
def standings_command(
    db: str,
    tournament_id: str | None,
    as_json: bool,
    list_all: bool,
    analysis: bool = False,
    evaluator: str = "strongest",
) -> None:
    """Show the standings of a finished or running tournament."""
    try:
        store = open_store(db, readonly=True)
    except StorageError as exc:
        raise _fail(exc) from None
    try:
        if list_all:
            rows = store.tournaments()
            if as_json:
                _print_json([tournament_json(r) for r in rows])
            else:
                for r in rows:
                    click.echo(
                        f"{r.tournament_id}\t{r.status}\t{r.games_stored} games stored\t{r.detail}"
                    )
            return
        standings = standings_from_store(store, tournament_id)
        dice = public_dice(store, standings.tournament_id)
    except StorageError as exc:
        raise _fail(exc) from None
    finally:
        store.close()
    analysed = _analysis(db, standings.tournament_id, evaluator, as_json) if analysis else None
    if as_json:
        out = standings_json(standings, dice)
        if analysed is not None:
            out["analysis"] = {
                "evaluator": ", ".join(sorted({pool.judge for pool in analysed})),
                "ply": 0,
                "pools": [pool.to_json() for pool in analysed],
            }
        _print_json(out)
    else:
        _out().print(render_standings(standings))
        if dice is not None:
            click.echo(dice_line(dice))
        if analysed is not None:
            from nardy.arena.competition.standings_analysis import analysis_table

            for pool in analysed:
                _out().print(analysis_table(pool))


def _analysis(db: str, tournament_id: str, evaluator: str, quiet: bool) -> list[PoolAnalysis]:
    """``nardy arena standings --analysis``: the games analysed, with a progress bar on a
    terminal (on standard error)."""
    from nardy.arena.competition.standings_analysis import AnalysisError, analysed_standings

    console = Console(stderr=True)
    show = not quiet and console.is_terminal
    with Progress(
        TextColumn("analysing"), BarColumn(), MofNCompleteColumn(), console=console
    ) as bar:
        task = bar.add_task("games", total=None, visible=show)

        def step(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            return analysed_standings(db, tournament_id, evaluator, on_game=step)
        except AnalysisError as exc:
            raise click.ClickException(f"cannot analyse the games: {exc}") from None


def standings_json(standings: Standings, dice: DiceAudit | None) -> dict[str, Any]:
    """What ``run --json`` and ``standings --json`` print (schema ``arena-standings``): the
    standings and the tournament's dice (the seed and salt once revealed)."""
    return {**standings.to_json(), "dice": None if dice is None else dice.to_json()}


def dice_line(dice: DiceAudit) -> str:
    """One line on a tournament's dice: the commitment, and the seed and salt once revealed."""
    if not dice.revealed:
        return f"dice: commitment {dice.commitment} ({dice.scheme}; seed secret until the end)"
    return (
        f"dice: seed {dice.seed}, salt {dice.salt}, commitment {dice.commitment} "
        f"({dice.scheme}; revealed: check with `nardy arena verify`)"
    )


main = TableGroup(
    "arena",
    table={
        "replay": "nardy.arena.audit_cli:replay_command",
        "run": "nardy.arena.tournament_cli:run_command",
        "standings": "nardy.arena.tournament_cli:standings_command",
        "verify": "nardy.arena.audit_cli:verify_command",
    },
    help="Tournaments: run, standings, verify, replay.",
)
"""``python -m nardy.arena.tournament_cli``: the tournament commands alone (``nardy arena`` has
them in ``nardy.arena.cli.ARENA_COMMANDS``, its standings also asking a running arena)."""

if __name__ == "__main__":
    main()
