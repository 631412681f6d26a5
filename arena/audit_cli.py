"""``nardy arena verify`` and ``nardy arena replay``: audit stored games (:mod:`nardy.arena.records.verify`).

::

    nardy arena verify --db arena.db [TOURNAMENT]              # every game, from the revealed seed
    nardy arena verify --records games.jsonl --seed N --salt HEX [TOURNAMENT]
    nardy arena verify --db arena.db --game GAME_ID            # one game
    nardy arena replay GAME_ID --db arena.db                   # the same as --game
    nardy arena replay GAME_ID --db arena.db --show            # and print it move by move

Every mismatch is one line (``MISMATCH game: what differs``), then a summary line; the exit code
is 0 when everything agrees, 1 on any mismatch or when the game or tournament cannot be read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from nardy.arena.records.storage import StorageError, open_store
from nardy.arena.records.verify import VerifyReport, verify_game, verify_records, verify_store

__all__ = ["replay_command", "verify_command"]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _finish(report: VerifyReport, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        for problem in report.problems:
            click.echo(f"MISMATCH {_one_line(problem)}")
        click.echo(report.summary())
    if not report.ok:
        sys.exit(1)


def _read_records(path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise click.ClickException(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise click.ClickException(f"{path}:{number}: not a JSON record") from None
        if not isinstance(obj, dict):
            raise click.ClickException(f"{path}:{number}: not a JSON object")
        records.append(obj)
    return records


@click.command("verify")
@click.argument("tournament_id", required=False)
@click.option("--db", help="SQLite file or postgresql:// URL of the tournament (default arena.db).")
@click.option(
    "--records",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Verify the game records of this JSON-lines file instead (with --seed and --salt).",
)
@click.option("--seed", type=click.IntRange(min=0, max=2**64 - 1), help="The revealed seed.")
@click.option("--salt", help="The revealed salt (64 hex digits).")
@click.option("--game", "game_id", help="Check only this game of the database.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def verify_command(
    tournament_id: str | None,
    db: str | None,
    records: Path | None,
    seed: int | None,
    salt: str | None,
    game_id: str | None,
    as_json: bool,
) -> None:
    """Audit a tournament that has ended: recompute its dice commitment from the revealed seed
    and salt, re-derive every roll of every game from the seed, re-play every game through the
    kernel, and check every stored column the standings use.

    TOURNAMENT defaults to the most recently updated one (or the only one of the records file).
    The derivation is documented in docs/audit.md, so that the check can be written anew.

    \b
    Examples:
      nardy arena verify --db arena.db
      nardy arena verify --records games.jsonl --seed 7 --salt 3fa4...
      nardy arena verify --db arena.db --game 'long:heuristic~random:0001a'
    """
    if records is not None:
        if db is not None or game_id is not None:
            raise click.UsageError("--records goes without --db and --game")
        if seed is None or salt is None:
            raise click.UsageError(
                "--records needs the revealed --seed and --salt (`nardy arena standings --json` "
                "shows them under 'dice' once the tournament has ended)"
            )
        try:
            report = verify_records(
                _read_records(records), seed=seed, salt=salt, tournament_id=tournament_id
            )
        except ValueError as exc:
            raise click.ClickException(_one_line(str(exc))) from None
        _finish(report, as_json)
        return
    if seed is not None or salt is not None:
        raise click.UsageError("--seed and --salt go with --records (a database holds them)")
    try:
        store = open_store(db or "arena.db", readonly=True)
        try:
            if game_id is not None:
                report = verify_game(store, game_id, tournament_id)
            else:
                report = verify_store(store, tournament_id)
        finally:
            store.close()
    except StorageError as exc:
        raise click.ClickException(_one_line(str(exc))) from None
    _finish(report, as_json)


@click.command("replay")
@click.argument("game_id")
@click.option(
    "--db", default="arena.db", show_default=True, help="SQLite file or postgresql:// URL."
)
@click.option("--tournament", "tournament_id", help="Tournament id, if the id is ambiguous.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--show", is_flag=True, help="First print every decision with its text board.")
@click.option(
    "--svg",
    "svg_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="First write one SVG board per decision into this directory.",
)
def replay_command(
    game_id: str,
    db: str,
    tournament_id: str | None,
    as_json: bool,
    show: bool = False,
    svg_dir: Path | None = None,
) -> None:
    """Check one stored game (the same as `verify --game GAME_ID`).

    Its recorded decisions are re-played through the kernel on its recorded dice, and the
    events, result, forfeits and faults must be those of the record; the columns the standings
    use (winner, points, termination, seats, seed) must agree with the record; once the
    tournament's seed is revealed, the game's seed and every roll must derive from it. With
    --show the game is first printed decision by decision with text boards, with --svg DIR
    drawn as one SVG board per decision. Exit code 0 when everything agrees, 1 otherwise.
    """
    if show and as_json:
        raise click.UsageError("--show and --json both print to standard output; choose one")
    try:
        store = open_store(db, readonly=True)
        try:
            if show or svg_dir is not None:
                from nardy.replay_show import show_replay

                row = store.find_game(game_id, tournament_id)
                assert row.record is not None
                show_replay(row.record, show=show, svg_dir=svg_dir)
            report = verify_game(store, game_id, tournament_id)
        finally:
            store.close()
    except StorageError as exc:
        raise click.ClickException(_one_line(str(exc))) from None
    _finish(report, as_json)
