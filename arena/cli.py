"""Command line: ``nardy arena serve`` and ``nardy bot serve``.

:data:`arena_group` and :data:`bot_group` are click groups that ``nardy.cli`` attaches to the main
``nardy`` command; ``python -m nardy.arena.cli`` runs them standalone. Both servers print
``LISTENING <host>:<port>`` once they accept connections (the line
:class:`~nardy.arena.local.LocalBotProcess` waits for), so ``--port 0`` is usable from scripts.
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

__all__ = ["arena_group", "bot_group", "main"]


def _announce(address: str) -> None:
    click.echo(f"LISTENING {address}")
    sys.stdout.flush()


@click.group("arena")
def arena_group() -> None:
    """Run the bot arena."""


@arena_group.command("serve")
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
    default=None,
    help="SQLite file or postgresql:// URL that tournaments are stored in (the tournament engine's; "
    "GetStandings also reads tournaments already in it). Default: in memory.",
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
@click.option("--max-message-bytes", default=4 * 1024 * 1024, show_default=True)
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
) -> None:
    """Serve ArenaService (+ health, reflection) until SIGTERM/SIGINT."""
    from nardy.arena.runner import FaultPolicy, TimeControl
    from nardy.arena.server import Arena, ArenaServer
    from nardy.arena.storage import StorageError

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        arena = Arena(
            time_control=TimeControl(per_decision=per_decision, reserve=reserve),
            policy=FaultPolicy(on_fault=on_fault, max_faults=max_faults),  # type: ignore[arg-type]
            reconnect_grace=reconnect_grace,
            records_path=records,
            db=db,
            standings_interval=standings_interval,
        )
    except StorageError as exc:
        raise click.ClickException(str(exc)) from None
    for spec in local_bots:
        name, sep, command = spec.partition("=")
        if not sep:
            raise click.BadParameter(f"{spec!r}: write NAME=COMMAND", param_hint="--local-bot")
        entry = arena.add_local_bot(name, shlex.split(command))
        click.echo(f"local bot {name}: id {entry.bot_id} at {entry.address}", err=True)
    server = ArenaServer(arena, host=host, port=port, max_message_bytes=max_message_bytes).start()
    _announce(server.address)
    server.serve_forever(grace)


def _attach_tournament_commands() -> None:
    from nardy.arena.tournament_cli import register_tournament_commands

    register_tournament_commands(arena_group)


_attach_tournament_commands()


@click.group("bot")
def bot_group() -> None:
    """Run a bot."""


@bot_group.command("serve")
@click.option("--builtin", "builtin_name", required=True, help="Built-in bot: random, heuristic.")
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
    "--arena",
    "arena_address",
    default=None,
    metavar="HOST:PORT",
    help="Dial out to this arena instead of serving (needs --token).",
)
def serve_bot_command(
    builtin_name: str,
    seed: int | None,
    host: str,
    port: int,
    token: str | None,
    arena_address: str | None,
) -> None:
    """Run a built-in bot as a BotService server, or dial out to an arena."""
    from nardy.arena.sdk import DialOutRejectedError, builtin, dial_out, serve_bot

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
    server = serve_bot(bot, port, host=host, token=token)
    _announce(server.address)
    while not done.wait(0.5):
        pass
    server.stop(1.0)


main = click.Group("nardy", commands={"arena": arena_group, "bot": bot_group})
"""A standalone entry point (``python -m nardy.arena.cli``) until ``nardy.cli`` includes these."""

if __name__ == "__main__":
    main()
