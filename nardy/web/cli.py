"""``nardy web --db FILE [--arena HOST:PORT] [--port N]``: serve the spectator."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["web_command"]


@click.command("web")
@click.option(
    "--db",
    default="arena.db",
    show_default=True,
    metavar="FILE|URL",
    help="The tournament database (SQLite file or postgresql:// URL), opened read-only; a file "
    "that does not exist yet is picked up once `nardy arena run` creates it.",
)
@click.option(
    "--arena",
    metavar="HOST:PORT",
    default=None,
    help="An arena server (nardy arena serve) whose WatchTournament events push live updates "
    "at once; without it, live pages see new games at the next --poll.",
)
@click.option(
    "--arena-admin",
    metavar="HOST:PORT",
    default=None,
    help="The arena's operator port (nardy arena serve --admin-port), where the Play page asks "
    "the arena's bots (default: --arena; its public port reads 32 KiB a request, less than some "
    "decisions with all their legal plays).",
)
@click.option(
    "--arena-token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="The arena's admin token (the file `nardy arena serve` writes, nardy-arena.token; "
    "without it, $NARDY_ARENA_TOKEN): with --arena, the Play page offers the arena's registered "
    "bots as opponents and asks them for their moves (docs/play.md).",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option(
    "--poll",
    type=click.FloatRange(0.05, 3600),
    default=0.5,
    show_default=True,
    metavar="SECONDS",
    help="How often live pages look at the database for new games.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on (loopback by default; 0.0.0.0 shows it to the network).",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1, None),
    default=1000,
    show_default=True,
    help="Open connections at most (lowered to fit `ulimit -n`); at the cap a new one closes "
    "the oldest idle or half-sent one (docs/spectator.md).",
)
@click.option(
    "--header-timeout",
    type=click.FloatRange(0.1, 3600),
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="A request's head must be complete this long after the connection opened (or the "
    "previous response ended), else the connection is closed.",
)
@click.option(
    "--send-timeout",
    type=click.FloatRange(0.1, 3600),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="A client that takes nothing of what is sent to it for this long is dropped (a live "
    "page whose visitor stopped reading).",
)
def web_command(
    db: str,
    arena: str | None,
    arena_admin: str | None,
    arena_token_file: Path | None,
    port: int,
    poll: float,
    host: str,
    max_connections: int,
    header_timeout: float,
    send_timeout: float,
) -> None:
    """Watch tournaments in a browser (standings updating live, every game decision by decision)
    and play at the board (/play: against a bot or a friend, docs/play.md).

    \b
    Examples:
      nardy web --db arena.db                      # then open http://127.0.0.1:8000/
      nardy web                                    # play: http://127.0.0.1:8000/play
      nardy web --db arena.db --arena 127.0.0.1:50050 --port 8080
      # the arena's bots on /play (its operator port, its admin token):
      nardy web --arena HOST:50050 --arena-admin HOST:50051 --arena-token-file nardy-arena.token
    """
    try:
        from nardy.web.app import create_app, serve
    except ImportError as exc:
        raise click.ClickException(
            f"the web spectator needs its extra ({exc.name} is missing): pip install 'nardy[web]'"
        ) from None
    from nardy.arena.records.storage import POSTGRES_SCHEMES, StorageError

    token = _arena_token(arena, arena_token_file)
    try:
        app = create_app(db, arena=arena, poll_s=poll, arena_token=token, arena_admin=arena_admin)
    except StorageError as exc:
        raise click.ClickException(str(exc)) from None
    if not db.startswith(POSTGRES_SCHEMES) and not Path(db).exists():
        click.echo(f"{db} does not exist yet: its tournaments show once it is created", err=True)
    click.echo(
        f"nardy spectator on http://{host}:{port}/ (database {db}); Ctrl-C stops it", err=True
    )
    serve(
        app,
        host,
        port,
        max_connections=max_connections,
        header_timeout_s=header_timeout,
        send_timeout_s=send_timeout,
    )


def _arena_token(arena: str | None, path: Path | None) -> str | None:
    """The admin token the Play page asks the arena's bots with: ``path``'s, else
    ``$NARDY_ARENA_TOKEN``; None without ``--arena`` or a token (no arena bots offered)."""
    import os

    from nardy.arena.service.auth import ADMIN_TOKEN_ENV, AuthError, read_admin_token

    if arena is None:
        if path is not None:
            raise click.UsageError("--arena-token-file is for an arena: give --arena HOST:PORT")
        return None
    if path is None:
        return os.environ.get(ADMIN_TOKEN_ENV) or None
    try:
        return read_admin_token(path)
    except AuthError as exc:
        raise click.ClickException(f"--arena-token-file: {exc}") from None
