"""The operator's commands against a running arena (``nardy arena serve``)::

    nardy arena bots                                  # name, kind, connected, last seen, faults
    nardy arena register NAME --server HOST:PORT | --dial-out [--token-file FILE]
    nardy arena create tournament.toml [--watch]      # the TOML of `nardy arena run`
    nardy arena list
    nardy arena watch TOURNAMENT                      # live standings
    nardy arena standings TOURNAMENT
    nardy arena cancel TOURNAMENT
    nardy arena games TOURNAMENT [--bot NAME] [--termination KIND] [--limit N]
    nardy arena export TOURNAMENT [-o FILE.jsonl]

Every command takes ``--arena HOST:PORT`` (default ``$NARDY_ARENA`` or ``127.0.0.1:50050``).
The admin token comes from ``$NARDY_ARENA_TOKEN`` or ``--admin-token-file`` (default
``nardy-arena.token``, the file ``nardy arena serve`` writes). Tables show bot names, not ids.
"""

from __future__ import annotations

import os
import sys
import tomllib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click
import grpc
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from nardy.arena.competition.schedule import DefinitionError, load_definition
from nardy.arena.protocol import arena_pb2 as _arena_pb2
from nardy.arena.protocol import arena_pb2_grpc as _arena_pb2_grpc
from nardy.arena.service.auth import ADMIN_TOKEN_ENV, AuthError, read_admin_token, write_secret_file
from nardy.listing import table_console

__all__ = [
    "bots_command",
    "cancel_command",
    "create_command",
    "export_command",
    "games_command",
    "list_command",
    "register_command",
    "standings_command",
    "standings_table",
    "watch_command",
]

_T = TypeVar("_T")

_STATUS = {
    _arena_pb2.TOURNAMENT_STATUS_PENDING: "pending",
    _arena_pb2.TOURNAMENT_STATUS_RUNNING: "running",
    _arena_pb2.TOURNAMENT_STATUS_FINISHED: "finished",
    _arena_pb2.TOURNAMENT_STATUS_CANCELLED: "cancelled",
}


class _Remote:
    """A connection to the arena, with the admin token when one is available."""

    def __init__(self, address: str, token_file: Path) -> None:
        self.address = address
        self.token_file = token_file
        self.channel = grpc.insecure_channel(address)
        self.stub = _arena_pb2_grpc.ArenaServiceStub(self.channel)

    def admin_metadata(self) -> tuple[tuple[str, str], ...]:
        token = os.environ.get(ADMIN_TOKEN_ENV)
        if not token and not self.token_file.exists():
            # An arena that is starting writes its token file: wait for it to answer first.
            self.unary(self.stub.ListBots, _arena_pb2.ListBotsRequest(), timeout=10)
        if not token:
            try:
                token = read_admin_token(self.token_file)
            except AuthError as exc:
                raise click.ClickException(
                    f"no admin token: set ${ADMIN_TOKEN_ENV} or give --admin-token-file ({exc})"
                ) from None
        return (("authorization", f"Bearer {token}"),)

    def call(self, fn: Callable[[], _T]) -> _T:
        """Run one RPC; a failure is one line (``Error: ...``). Unary calls wait for an arena
        that is starting up (``wait_for_ready``, up to their timeout), so that a script can
        start ``nardy arena serve &`` and go on at once."""
        try:
            return fn()
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            details = exc.details() if hasattr(exc, "details") else str(exc)
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                details = f"no answer from an arena at {self.address} ({details})"
            name = code.name if code is not None else "ERROR"
            raise click.ClickException(f"{name}: {details}") from None

    def unary(
        self, rpc: Callable[..., _T], request: object, *, timeout: float, admin: bool = False
    ) -> _T:
        """One unary call (:meth:`call`), with the admin token where ``admin`` (the operator's
        calls: registering, creating, cancelling)."""
        metadata = self.admin_metadata() if admin else None
        return self.call(
            lambda: rpc(request, timeout=timeout, wait_for_ready=True, metadata=metadata)
        )


def _remote_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--admin-token-file",
        type=click.Path(dir_okay=False, path_type=Path),
        default="nardy-arena.token",
        show_default=True,
        help=f"The admin token (${ADMIN_TOKEN_ENV} takes precedence).",
    )(fn)
    return click.option(
        "--arena",
        "address",
        default=lambda: os.environ.get("NARDY_ARENA", "127.0.0.1:50050"),
        show_default="$NARDY_ARENA or 127.0.0.1:50050",
        metavar="HOST:PORT",
        help="The arena to talk to.",
    )(fn)


def _console() -> Console:
    """Standard output: a terminal's width, or no limit through a pipe or into a file, where a
    table must not be cut (:func:`nardy.listing.table_console`)."""
    return table_console()


def _when(ts: Any, present: bool = True) -> str:
    if not present:
        return "never"
    return datetime.fromtimestamp(ts.ToNanoseconds() / 1e9, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _status(value: int) -> str:
    return str(_STATUS.get(value, "?"))  # type: ignore[call-overload]


def standings_table(s: _arena_pb2.GetStandingsResponse) -> RenderableType:
    """A ``GetStandingsResponse`` as a table (names, not ids)."""
    head = f"{s.tournament_id}: {_status(s.status)}, {s.games_played}/{s.games_total} games"
    if s.seed:
        head += f", seed {s.seed}"
    table = Table()
    table.add_column("#", justify="right")
    table.add_column("Bot", no_wrap=True)
    drawn = any(row.draws for row in s.standings)  # a D column only where a unit was drawn
    for name in ("Games", "W", "L", *(("D",) if drawn else ()), "Forf.", "Net", "Elo", "±95%"):
        table.add_column(name, justify="right")
    for row in s.standings:
        rated = row.HasField("elo_se")
        table.add_row(
            str(row.rank),
            row.bot_name,
            str(row.games),
            str(row.wins),
            str(row.losses),
            *((str(row.draws),) if drawn else ()),
            str(row.forfeits),
            f"{row.net_points:+d}",
            f"{row.elo:+.0f}" if rated else "-",
            f"{row.elo_error:.0f}" if rated else "-",
        )
    parts: list[RenderableType] = [Text(head, style="bold"), table]
    parts.extend(Text(sprt.status_line) for sprt in s.sprt)
    return Group(*parts)


def _create_request(path: Path, bots: dict[str, str]) -> _arena_pb2.CreateTournamentRequest:
    """The request for a tournament TOML file (the shape of ``nardy arena run``): its bots are
    the names of registered bots; one variant."""
    try:
        d = load_definition(path)
        # No seed in the file: the arena draws a secret one (a file's seed is as secret as the file).
        seed = d.seed if "seed" in tomllib.loads(path.read_text(encoding="utf-8")) else 0
    except DefinitionError as exc:
        raise click.ClickException(str(exc)) from None
    if len(d.pools) != 1:
        raise click.ClickException(f"{path}: the arena plays one variant per tournament")
    if d.sprt is not None and d.sprt.on != "points":
        raise click.ClickException(
            f"{path}: the arena service runs SPRTs on points only (sprt.on = {d.sprt.on!r} "
            "runs with `nardy arena run`)"
        )
    unknown = [b.name for b in d.bots if b.name not in bots]
    if unknown:
        raise click.ClickException(
            f"{path}: not registered with the arena: {', '.join(unknown)} "
            "(see `nardy arena bots`; register them first)"
        )
    names = [b.name for b in d.bots]
    if d.format == "gauntlet" and d.champion:
        names.remove(d.champion)
        names.insert(0, d.champion)
    pool = d.pools[0]
    options = {k: v for k, v in pool.options.items() if k != "match_length"}
    request = _arena_pb2.CreateTournamentRequest(
        name=d.name,
        bot_ids=[bots[n] for n in names],
        format=(
            _arena_pb2.TOURNAMENT_FORMAT_GAUNTLET
            if d.format == "gauntlet"
            else _arena_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN
        ),
        games_per_pairing=d.games,
        match_length=pool.match_length or 0,
        seed=seed,
        concurrency=d.concurrency,
    )
    request.variant.name = pool.variant
    for key, value in options.items():
        request.variant.options[key] = str(value).lower() if isinstance(value, bool) else str(value)
    request.time_control.per_decision.FromNanoseconds(int(d.per_decision * 1e9))
    if d.reserve:
        request.time_control.per_game.FromNanoseconds(int(d.reserve * 1e9))
    if d.sprt is not None:
        from nardy.arena.service.servicer import sprt_settings_to_proto

        sprt_settings_to_proto(d.sprt, match_length=pool.match_length, out=request.sprt)
    return request


def _watch(remote: _Remote, tournament_id: str) -> None:
    console = _console()
    latest: _arena_pb2.GetStandingsResponse | None = None
    stream: Iterator[_arena_pb2.WatchTournamentResponse] = remote.stub.WatchTournament(
        _arena_pb2.WatchTournamentRequest(tournament_id=tournament_id, replay=True)
    )

    def events() -> Iterator[_arena_pb2.GetStandingsResponse]:
        for event in stream:
            kind = event.WhichOneof("event")
            if kind == "tournament_started":
                yield event.tournament_started.standings
            elif kind == "standings_updated":
                yield event.standings_updated.standings
            elif kind == "tournament_ended":
                yield event.tournament_ended.standings

    with Live(Text("waiting for events ..."), console=console, transient=False) as live:
        for standings in remote.call(lambda: list(_take_until_end(events(), live))):
            latest = standings
    if not console.is_terminal:
        console.print()  # the last frame ends without a newline when not drawn on a terminal
    if latest is None:
        raise click.ClickException(f"no events from {tournament_id}")


def _take_until_end(
    items: Iterator[_arena_pb2.GetStandingsResponse], live: Live
) -> Iterator[_arena_pb2.GetStandingsResponse]:
    for standings in items:
        live.update(standings_table(standings))
        yield standings


@click.command("bots")
@_remote_options
def bots_command(address: str, admin_token_file: Path) -> None:
    """List the arena's bots: name, kind, connected, last seen, faults."""
    remote = _Remote(address, admin_token_file)
    response = remote.unary(remote.stub.ListBots, _arena_pb2.ListBotsRequest(), timeout=10)
    table = Table(title=f"bots of {address}", title_justify="left")
    for name in ("Name", "Kind", "Address", "Connected", "Last seen (UTC)", "Faults"):
        table.add_column(name, no_wrap=True)
    for b in response.bots:
        table.add_row(
            b.name,
            b.kind,
            b.address or "-",
            "yes" if b.connected else "no",
            _when(b.last_seen, b.HasField("last_seen")),
            f"{b.faults}" + (" (disqualified)" if b.disqualified else ""),
        )
    _console().print(table)


@click.command("register")
@click.argument("name")
@click.option("--server", "server_address", metavar="HOST:PORT", help="A BotService server.")
@click.option("--dial-out", is_flag=True, help="A bot that dials out (Connect).")
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the bot's token to this file (mode 0600) instead of printing it.",
)
@_remote_options
def register_command(
    name: str,
    server_address: str | None,
    dial_out: bool,
    token_file: Path | None,
    address: str,
    admin_token_file: Path,
) -> None:
    """Register a bot under NAME (a server bot at HOST:PORT, or a dial-out bot)."""
    if bool(server_address) == dial_out:
        raise click.UsageError("give exactly one of --server HOST:PORT or --dial-out")
    remote = _Remote(address, admin_token_file)
    request = _arena_pb2.RegisterBotRequest(name=name)
    if server_address:
        request.server.address = server_address
    else:
        request.dial_out.SetInParent()
    response = remote.unary(remote.stub.RegisterBot, request, timeout=30, admin=True)
    click.echo(f"registered {name} (id {response.bot_id})")
    if token_file is not None:
        try:
            write_secret_file(token_file, response.token + "\n")
        except AuthError as exc:
            click.echo(f"token {response.token}")  # not lost: it is shown only once
            raise click.ClickException(
                f"{name} is registered but its token could not be written: {exc}"
            ) from None
        click.echo(f"token written to {token_file}")
    else:
        click.echo(f"token {response.token}")


@click.command("create")
@click.argument("toml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--watch", "then_watch", is_flag=True, help="Watch it until it ends.")
@click.option("--id-only", is_flag=True, help="Print only the tournament id (for scripts).")
@_remote_options
def create_command(
    toml: Path, then_watch: bool, id_only: bool, address: str, admin_token_file: Path
) -> None:
    """Create a tournament from a TOML file (bots: names of registered bots)."""
    remote = _Remote(address, admin_token_file)
    listing = remote.unary(remote.stub.ListBots, _arena_pb2.ListBotsRequest(), timeout=10)
    request = _create_request(toml, {b.name: b.bot_id for b in listing.bots})
    response = remote.unary(remote.stub.CreateTournament, request, timeout=60, admin=True)
    if id_only:
        click.echo(response.tournament_id)
    else:
        click.echo(f"created {response.tournament_id} ({response.games_total} games)")
    if then_watch:
        _watch(remote, response.tournament_id)


@click.command("list")
@_remote_options
def list_command(address: str, admin_token_file: Path) -> None:
    """List the arena's tournaments, newest first."""
    remote = _Remote(address, admin_token_file)
    response = remote.unary(
        remote.stub.ListTournaments, _arena_pb2.ListTournamentsRequest(), timeout=30
    )
    table = Table(title=f"tournaments of {address}", title_justify="left")
    for name in ("Tournament", "Status", "Games", "Bots", "Variant", "Created (UTC)"):
        table.add_column(name, no_wrap=name != "Bots")
    for t in response.tournaments:
        table.add_row(
            t.tournament_id,
            _status(t.status),
            f"{t.games_played}/{t.games_total}",
            ", ".join(t.bot_names),
            ", ".join(t.pools),
            _when(t.created),
        )
    _console().print(table)


@click.command("watch")
@click.argument("tournament_id")
@_remote_options
def watch_command(tournament_id: str, address: str, admin_token_file: Path) -> None:
    """Show a tournament's standings live until it ends."""
    _watch(_Remote(address, admin_token_file), tournament_id)


@click.command("cancel")
@click.argument("tournament_id")
@_remote_options
def cancel_command(tournament_id: str, address: str, admin_token_file: Path) -> None:
    """Cancel a tournament: games in progress are aborted; it is never resumed."""
    remote = _Remote(address, admin_token_file)
    request = _arena_pb2.CancelTournamentRequest(tournament_id=tournament_id)
    response = remote.unary(remote.stub.CancelTournament, request, timeout=60, admin=True)
    click.echo(f"{tournament_id}: {_status(response.status)}")


@click.command("games")
@click.argument("tournament_id")
@click.option("--bot", default="", help="Only games of this bot (name).")
@click.option("--termination", default="", help="Only games that ended so (e.g. bot_failure).")
@click.option("--limit", default=0, help="Only the last N games (0: all).")
@_remote_options
def games_command(
    tournament_id: str,
    bot: str,
    termination: str,
    limit: int,
    address: str,
    admin_token_file: Path,
) -> None:
    """List a tournament's stored games."""
    remote = _Remote(address, admin_token_file)
    request = _arena_pb2.ListGamesRequest(
        tournament_id=tournament_id, bot=bot, termination=termination, limit=max(0, limit)
    )
    response = remote.unary(remote.stub.ListGames, request, timeout=30)
    table = Table(title=f"games of {tournament_id}", title_justify="left")
    for name in ("Game", "White", "Black", "Winner", "Points", "Termination"):
        table.add_column(name, no_wrap=True)
    for g in response.games:
        r = g.result
        winner = (
            "-"
            if r.termination == 0 or r.winner == 0
            else g.white_name
            if r.winner == 1
            else g.black_name
        )
        table.add_row(
            g.game_id,
            g.white_name,
            g.black_name,
            winner,
            str(r.points),
            _termination(r.termination),
        )
    _console().print(table)


@click.command("export")
@click.argument("tournament_id")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (default: standard output).",
)
@_remote_options
def export_command(
    tournament_id: str, output: Path | None, address: str, admin_token_file: Path
) -> None:
    """Write a tournament's game records as JSON lines (while it runs: admin only)."""
    remote = _Remote(address, admin_token_file)
    metadata: tuple[tuple[str, str], ...] = ()
    if os.environ.get(ADMIN_TOKEN_ENV) or admin_token_file.exists():
        metadata = remote.admin_metadata()
    request = _arena_pb2.ExportGamesRequest(tournament_id=tournament_id)
    lines = remote.call(
        lambda: [m.record_json for m in remote.stub.ExportGames(request, metadata=metadata)]
    )
    if output is None:
        for line in lines:
            sys.stdout.write(line + "\n")
    else:
        output.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        click.echo(f"{len(lines)} records written to {output}", err=True)


def _termination(value: int) -> str:
    from nardy.arena.protocol import game_pb2

    name: str = game_pb2.Termination.Name(value)  # type: ignore[arg-type]
    return name.removeprefix("TERMINATION_").lower()


def _local_standings() -> click.Command:
    from nardy.arena.tournament_cli import standings_command as local

    return local


@click.command("standings")
@click.argument("tournament", required=False)
@_remote_options
def standings_command(
    tournament: str | None, address: str, admin_token_file: Path, **local_options: Any
) -> None:
    """Standings: of TOURNAMENT in a running arena, or (no TOURNAMENT) of a database."""
    if tournament is None:
        click.get_current_context().invoke(_local_standings(), **local_options)
        return
    remote = _Remote(address, admin_token_file)
    request = _arena_pb2.GetStandingsRequest(tournament_id=tournament)
    response = remote.unary(remote.stub.GetStandings, request, timeout=30)
    _console().print(standings_table(response))


# ``nardy arena standings TOURNAMENT``: the arena's table; without TOURNAMENT the local command
# (``--db``, ``--tournament``) runs as before, with its options and its help after this one's.
standings_command.params.extend(_local_standings().params)
standings_command.help = f"{standings_command.help}\n\n{_local_standings().help or ''}"
