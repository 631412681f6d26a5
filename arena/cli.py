"""Command line: ``nardy arena serve`` and ``nardy bot serve``.

:data:`arena_group` and :data:`bot_group` are click groups that ``nardy.cli`` attaches to the main
``nardy`` command; ``python -m nardy.arena.cli`` runs them standalone. Both servers print
``LISTENING <host>:<port>`` once they accept connections (the line
:class:`~nardy.arena.clients.local.LocalBotProcess` waits for), so ``--port 0`` is usable from scripts.
"""

from __future__ import annotations

import logging
import shlex
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

import click

from nardy.arena.service.limits import (
    DEFAULT_HELLO_TIMEOUT,
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_CALLS_PER_PEER,
    DEFAULT_MAX_PENDING_HELLOS,
    DEFAULT_MAX_REQUEST_BYTES,
    DEFAULT_MAX_STREAMS,
    DEFAULT_MAX_STREAMS_PER_PEER,
)
from nardy.cli_options import TableGroup

__all__ = ["arena_group", "bot_group", "main"]


def _announce(address: str) -> None:
    click.echo(f"LISTENING {address}")
    sys.stdout.flush()


SWITCH_INTERVAL = 0.001
"""Seconds a Python thread may hold the GIL while others wait, in ``nardy arena serve``."""


ARENA_COMMANDS = {
    "bots": "nardy.arena.operator_cli:bots_command",
    "cancel": "nardy.arena.operator_cli:cancel_command",
    "create": "nardy.arena.operator_cli:create_command",
    "export": "nardy.arena.operator_cli:export_command",
    "games": "nardy.arena.operator_cli:games_command",
    "list": "nardy.arena.operator_cli:list_command",
    "register": "nardy.arena.operator_cli:register_command",
    "replay": "nardy.arena.audit_cli:replay_command",
    "run": "nardy.arena.tournament_cli:run_command",
    "serve": "nardy.arena.cli:serve_arena",
    "standings": "nardy.arena.operator_cli:standings_command",
    "verify": "nardy.arena.audit_cli:verify_command",
    "watch": "nardy.arena.operator_cli:watch_command",
}
"""``nardy arena``'s commands, as ``nardy.cli.COMMANDS`` has ``nardy``'s (each loaded when used)."""

BOT_COMMANDS = {"serve": "nardy.arena.cli:serve_bot_command"}
"""``nardy bot``'s commands."""


@click.group("arena", cls=TableGroup, table=ARENA_COMMANDS)
def arena_group() -> None:
    """Run the bot arena."""


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=50050, show_default=True, help="Port; 0 picks a free one.")
@click.option(
    "--records",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append every finished game's record to this JSON-lines file.",
)
@click.option(
    "--db",
    default="nardy-arena.db",
    show_default=True,
    help="SQLite file or postgresql:// URL the arena keeps its bots and tournaments in "
    "(unfinished tournaments resume on restart); :memory: keeps nothing.",
)
@click.option(
    "--admin-token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default="nardy-arena.token",
    show_default=True,
    help="File holding the admin token that state-changing calls need; created (mode 0600, "
    "a fresh token) if missing.",
)
@click.option(
    "--allow-private-addresses",
    is_flag=True,
    help="Let server bots be registered at loopback and private addresses (default: public only).",
)
@click.option(
    "--max-games-per-pairing", default=10_000, show_default=True, help="Limit per request."
)
@click.option("--max-bots-per-tournament", default=64, show_default=True, help="Limit per request.")
@click.option(
    "--max-running-tournaments", default=8, show_default=True, help="Tournaments at once."
)
@click.option(
    "--standings-interval",
    default=0.5,
    show_default=True,
    help="Least seconds between two StandingsUpdated events of a tournament.",
)
@click.option("--per-decision", default=5.0, show_default=True, help="Seconds per decision.")
@click.option(
    "--reserve",
    default=0.0,
    show_default=True,
    help="Per-game time bank (seconds) for decisions that exceed --per-decision.",
)
@click.option(
    "--on-fault",
    type=click.Choice(["forfeit", "random"]),
    default="forfeit",
    show_default=True,
    help="Forfeit the game, or play a random legal play (a strike).",
)
@click.option(
    "--max-faults",
    default=3,
    show_default=True,
    help="Disqualify a bot after this many faults (0 = never).",
)
@click.option(
    "--reconnect-grace",
    default=5.0,
    show_default=True,
    help="Seconds a dial-out bot may stay disconnected before forfeiting.",
)
@click.option(
    "--local-bot",
    "local_bots",
    multiple=True,
    metavar="NAME=COMMAND",
    help="Start a bot process (restarted if it crashes); it must print LISTENING host:port.",
)
@click.option(
    "--grace",
    default=10.0,
    show_default=True,
    help="Seconds running games may take to finish on SIGTERM/SIGINT.",
)
@click.option(
    "--max-message-bytes",
    default=4 * 1024 * 1024,
    show_default=True,
    type=click.IntRange(min=1024),
    help="Largest message sent, and read on --admin-port; a larger request is refused unread "
    "(RESOURCE_EXHAUSTED).",
)
@click.option(
    "--max-request-bytes",
    default=DEFAULT_MAX_REQUEST_BYTES,
    show_default=True,
    type=click.IntRange(min=1024),
    help="Largest message read on --port (from bots, watchers and the admin without "
    "--admin-port); a larger one is refused unread (RESOURCE_EXHAUSTED). Small, since a "
    "stream holds its message whole before it is checked (docs/arena.md).",
)
@click.option(
    "--max-streams",
    default=DEFAULT_MAX_STREAMS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Streams open at once from everyone (watchers, exports, health; not Connect before its "
    "Hello, see --max-pending-hellos).",
)
@click.option(
    "--max-streams-per-peer",
    default=DEFAULT_MAX_STREAMS_PER_PEER,
    show_default=True,
    type=click.IntRange(min=1),
    help="Streams open at once from one IP address; the one over is refused RESOURCE_EXHAUSTED.",
)
@click.option(
    "--max-calls-per-peer",
    default=DEFAULT_MAX_CALLS_PER_PEER,
    show_default=True,
    type=click.IntRange(min=1),
    help="Unary calls running or waiting at once from one IP address (the admin's not counted).",
)
@click.option(
    "--max-calls",
    default=DEFAULT_MAX_CALLS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Unary calls read and running at once, from everyone but the admin; the others wait "
    "their turn unread, address by address: bounds the request bodies held for anonymous callers.",
)
@click.option(
    "--hello-timeout",
    default=DEFAULT_HELLO_TIMEOUT,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds a Connect stream may stay open without its Hello (then DEADLINE_EXCEEDED).",
)
@click.option(
    "--max-pending-hellos",
    default=DEFAULT_MAX_PENDING_HELLOS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Connect streams open without a Hello yet, from everyone; when full a new one replaces "
    "the oldest silent stream of the address holding the most.",
)
@click.option(
    "--admin-port",
    type=click.IntRange(min=0, max=65535),
    default=None,
    help="Also serve the operator's calls on this port (0: a free one), a listener of its own "
    "that answers the admin token only: the operator is not queued behind a flood of "
    "anonymous calls on --port.",
)
@click.option(
    "--admin-host",
    default="127.0.0.1",
    show_default=True,
    help="Interface of --admin-port.",
)
@click.option(
    "--workers",
    default=32,
    show_default=True,
    type=click.IntRange(min=1),
    help="Threads for the unary calls (GetStandings, admin calls ...); streams take none.",
)
def serve_arena(
    host: str,
    port: int,
    records: Path | None,
    db: str | None,
    standings_interval: float,
    per_decision: float,
    reserve: float,
    on_fault: str,
    max_faults: int,
    reconnect_grace: float,
    local_bots: tuple[str, ...],
    grace: float,
    max_message_bytes: int,
    max_request_bytes: int,
    admin_token_file: Path,
    allow_private_addresses: bool,
    max_games_per_pairing: int,
    max_bots_per_tournament: int,
    max_running_tournaments: int,
    max_streams: int,
    max_streams_per_peer: int,
    max_calls_per_peer: int,
    max_calls: int,
    hello_timeout: float,
    max_pending_hellos: int,
    admin_port: int | None,
    admin_host: str,
    workers: int,
) -> None:
    """Serve ArenaService (+ health, reflection) until SIGTERM/SIGINT.

    Bots and tournaments are kept in --db; on start the unfinished tournaments created over
    gRPC resume. Registering bots and creating or cancelling tournaments needs the admin token
    of --admin-token-file (``nardy arena register|create|cancel`` read it).
    """
    from nardy.arena.records.storage import StorageError
    from nardy.arena.service.auth import AuthError, load_or_create_admin_token
    from nardy.arena.service.core import Arena
    from nardy.arena.service.limits import ArenaLimits
    from nardy.arena.service.server import ArenaServer
    from nardy.bots.faults import FaultPolicy
    from nardy.bots.loop import TimeControl

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        admin_token, created = load_or_create_admin_token(admin_token_file)
    except AuthError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(
        f"admin token {'written to' if created else 'read from'} {admin_token_file.resolve()}",
        err=True,
    )
    limits = ArenaLimits(
        max_games_per_pairing=max_games_per_pairing,
        max_bots_per_tournament=max_bots_per_tournament,
        max_running_tournaments=max_running_tournaments,
        allow_private_addresses=allow_private_addresses,
    )
    try:
        arena = Arena(
            time_control=TimeControl(per_decision=per_decision, reserve=reserve),
            policy=FaultPolicy(on_fault=on_fault, max_faults=max_faults),  # type: ignore[arg-type]
            reconnect_grace=reconnect_grace,
            records_path=records,
            db=db,
            standings_interval=standings_interval,
            secret=admin_token,
            limits=limits,
        )
    except StorageError as exc:
        raise click.ClickException(str(exc)) from None
    for spec in local_bots:
        name, sep, command = spec.partition("=")
        if not sep:
            raise click.BadParameter(f"{spec!r}: write NAME=COMMAND", param_hint="--local-bot")
        entry = arena.add_local_bot(name, shlex.split(command))
        click.echo(f"local bot {name}: id {entry.bot_id} at {entry.address}", err=True)
    # The operator's listener, the event loop and the workers share the GIL: a thread that
    # waits for it gets it after this interval at most (5 ms by default), and an admin call
    # takes it a few times. Under a flood the shorter interval keeps the operator's p99 low.
    sys.setswitchinterval(SWITCH_INTERVAL)
    server = ArenaServer(
        arena,
        host=host,
        port=port,
        max_message_bytes=max_message_bytes,
        max_request_bytes=max_request_bytes,
        admin_token=admin_token,
        max_streams=max_streams,
        max_streams_per_peer=max_streams_per_peer,
        max_calls_per_peer=max_calls_per_peer,
        max_calls=max_calls,
        hello_timeout=hello_timeout,
        max_pending_hellos=max_pending_hellos,
        admin_port=admin_port,
        admin_host=admin_host,
        max_workers=workers,
    ).start()
    if server.admin_address is not None:
        click.echo(f"admin port: {server.admin_address}", err=True)
    _announce(server.address)
    for t in arena.resume_tournaments():
        click.echo(f"resuming tournament {t.tournament_id}", err=True)
    server.serve_forever(grace)


@click.group("bot", cls=TableGroup, table=BOT_COMMANDS)
def bot_group() -> None:
    """Run a bot."""


@click.command("serve")
@click.option(
    "--builtin",
    "builtin_name",
    required=True,
    help="Built-in bot: random, heuristic, neural[:FILE], gnubg[:PLY].",
)
@click.option("--seed", type=int, default=None, help="Seed of the bot's own randomness.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=0, show_default=True, help="Port to serve on; 0 picks one.")
@click.option(
    "--token",
    default=None,
    envvar="NARDY_BOT_TOKEN",
    help="Arena token: required from callers (server mode), "
    "or presented to the arena (with --arena). Default: $NARDY_BOT_TOKEN (not shown by ps).",
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Read the token from this file instead; a server reads it at every call, so the file "
    "may be written after the bot started (`nardy arena register --token-file`).",
)
@click.option(
    "--arena",
    "arena_address",
    default=None,
    metavar="HOST:PORT",
    help="Dial out to this arena instead of serving (needs --token or --token-file).",
)
def serve_bot_command(
    builtin_name: str,
    seed: int | None,
    host: str,
    port: int,
    token: str | None,
    token_file: Path | None,
    arena_address: str | None,
) -> None:
    """Run a built-in bot as a BotService server, or dial out to an arena."""
    from nardy.arena.sdk import DialOutRejectedError, builtin, dial_out, serve_bot

    if token_file is not None:
        source = click.get_current_context().get_parameter_source("token")
        if token is not None and source == click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError("give --token or --token-file, not both")
        token = None  # the file wins over $NARDY_BOT_TOKEN
    if token_file is not None and (arena_address is not None or token_file.exists()):
        # A server bot may start before its file is written (it is read at every call), but a
        # file that exists must hold a token: an empty one would be no token at all.
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise click.BadParameter(f"{token_file}: {reason}", param_hint="--token-file") from None
        if not token:
            raise click.BadParameter(
                f"{token_file} is empty; write the bot's token into it "
                "(`nardy arena register NAME --token-file FILE`)",
                param_hint="--token-file",
            )
    elif token is not None and not token.strip():
        raise click.BadParameter("the token is empty", param_hint="--token")

    try:
        bot = builtin(builtin_name, seed)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--builtin") from None
    done = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        done.set()

    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, handler)
    if arena_address is not None:
        if not token:
            raise click.BadParameter("dialling out needs --token", param_hint="--token")
        # The client prints its connection lines (connected, lost, retrying) to standard error.
        client = dial_out(bot, arena_address, token).start()
        while not done.wait(0.2):
            if isinstance(client.error, DialOutRejectedError):
                raise click.exceptions.Exit(1)  # the client has said so in one line
            if client.error is not None:
                raise click.ClickException(f"dial-out failed: {client.error}")
        client.stop()
        return
    server = serve_bot(bot, port, host=host, token=token_file if token_file else token)
    _announce(server.address)
    while not done.wait(0.5):
        pass
    server.stop(1.0)


main = click.Group("nardy", commands={"arena": arena_group, "bot": bot_group})
"""A standalone entry point (``python -m nardy.arena.cli``) until ``nardy.cli`` includes these."""

if __name__ == "__main__":
    main()
