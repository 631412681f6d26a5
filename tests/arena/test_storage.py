"""SQLite storage of tournaments: one transaction per game, no duplicates, clear errors."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from nardy.arena.records.storage import (
    DuplicateGameError,
    GameRow,
    MalformedDatabaseError,
    SqliteStore,
    StorageError,
    open_store,
)


def _row(
    game_id: str = "long:a~b:0001a", winner: int | None = 0, points: int = 2, leg: int = 0
) -> GameRow:
    return GameRow(
        tournament_id="t-1",
        game_id=game_id,
        unit_id=game_id,
        pool="long",
        a="a",
        b="b",
        round=0,
        leg=leg,
        game_no=1,
        white="a" if leg == 0 else "b",
        black="b" if leg == 0 else "a",
        seed=2**62 + 5,
        winner=winner,
        points=points,
        termination="borne_off",
        finished=1.0,
    )


def _open(path: Path) -> SqliteStore:
    store = SqliteStore(path)
    store.open_tournament("t-1", "t", {"games": 2}, {"seed": 1}, 2)
    return store


def test_save_and_read_back(tmp_path: Path) -> None:
    store = _open(tmp_path / "a.db")
    store.save_game(_row(), {"game_id": "long:a~b:0001a", "rolls": [[3, 1]]})
    store.save_game(_row("long:a~b:0001b", winner=0, points=1, leg=1), {"x": 1})
    rows = store.games("t-1")
    assert [r.game_id for r in rows] == ["long:a~b:0001a", "long:a~b:0001b"]
    assert rows[0].record is None and rows[0].seed == 2**62 + 5
    assert [r.a_points for r in rows] == [2, -1]  # leg 1: a plays Black; White won
    found = store.find_game("long:a~b:0001a")
    assert found.record == {"game_id": "long:a~b:0001a", "rolls": [[3, 1]]}
    (t,) = store.tournaments()
    assert (t.tournament_id, t.status, t.games_stored, t.games_total) == ("t-1", "pending", 2, 2)
    store.set_status("t-1", "finished", "done")
    assert store.tournaments()[0].status == "finished"
    store.close()


def test_wal_and_reader_while_writing(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    store = _open(path)
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reader = open_store(path, readonly=True)
    store.save_game(_row(), {})
    assert [r.game_id for r in reader.games("t-1")] == ["long:a~b:0001a"]
    reader.close()
    store.close()


def test_a_game_is_stored_once(tmp_path: Path) -> None:
    store = _open(tmp_path / "a.db")
    store.save_game(_row(), {"first": True})
    with pytest.raises(DuplicateGameError, match="already stored"):
        store.save_game(_row(), {"second": True})
    assert store.find_game("long:a~b:0001a").record == {"first": True}
    assert len(store.games("t-1")) == 1


def test_identity_mismatch(tmp_path: Path) -> None:
    store = _open(tmp_path / "a.db")
    store.open_tournament("t-1", "t", {"games": 4}, {"seed": 1}, 4)  # more games: fine
    assert store.tournaments()[0].games_total == 4
    with pytest.raises(StorageError, match="different definition"):
        store.open_tournament("t-1", "t", {"games": 4}, {"seed": 2}, 4)


def test_find_game_errors(tmp_path: Path) -> None:
    store = _open(tmp_path / "a.db")
    store.open_tournament("t-2", "t", {}, {"seed": 2}, 1)
    store.save_game(_row(), {})
    store.save_game(dataclasses.replace(_row(), tournament_id="t-2"), {})
    with pytest.raises(StorageError, match="no game 'nope'"):
        store.find_game("nope")
    with pytest.raises(StorageError, match="several tournaments"):
        store.find_game("long:a~b:0001a")
    assert store.find_game("long:a~b:0001a", "t-2").tournament_id == "t-2"


@pytest.mark.parametrize("content", [b"this is not a database at all" * 100, b""])
def test_corrupt_or_foreign_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.db"
    path.write_bytes(content)
    if content:
        with pytest.raises(StorageError, match="not a database"):
            open_store(path)
    else:  # an empty file is a new database for a writer, but not a nardy one for a reader
        with pytest.raises(StorageError, match="not a nardy tournament database"):
            open_store(path, readonly=True)


def test_foreign_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE x (y)")
    db.commit()
    db.close()
    with pytest.raises(StorageError, match="not a nardy tournament database"):
        open_store(path, readonly=True)


def test_missing_file_for_readers_and_postgres(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="no such database"):
        open_store(tmp_path / "missing.db", readonly=True)
    assert not (tmp_path / "missing.db").exists()
    with pytest.raises(StorageError, match="PostgreSQL"):
        open_store("postgresql://localhost/nardy")


def _damage_a_record_page(path: Path) -> None:
    """Break the page chain of one stored record: an overflow page of the ``games`` table, which
    the standings (read from the ledger) never touch, now names a page that does not exist."""
    db = sqlite3.connect(path)
    try:
        found = db.execute(
            "SELECT max(pageno) FROM dbstat WHERE name = 'games' AND pagetype = 'overflow'"
        ).fetchone()
    except sqlite3.OperationalError:  # pragma: no cover - SQLite built without dbstat
        pytest.skip("this SQLite has no dbstat table to find a record's page")
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    assert found[0] is not None, "no record long enough to overflow its page"
    with path.open("r+b") as f:
        f.seek((found[0] - 1) * page_size)
        f.write(b"\xff" * 4)  # an overflow page starts with the number of the next one


def test_a_malformed_file_is_refused_on_opening(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    store = _open(path)
    for i in range(4):
        store.save_game(_row(f"long:a~b:000{i}a"), {"padding": "x" * 20_000})
    store.close()
    _damage_a_record_page(path)
    for readonly in (True, False):
        with pytest.raises(MalformedDatabaseError, match="malformed database") as caught:
            open_store(path, readonly=readonly)
        assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_every_command_refuses_a_malformed_database_in_one_line(tmp_path: Path) -> None:
    from nardy.arena.service.core import Arena
    from nardy.cli import cli

    db = tmp_path / "t.db"
    play = ["arena", "run", "--variant", "trictrac", "--bots", "heuristic,random"]
    play += ["--games", "2", "--seed", "3", "--db", str(db), "--quiet"]
    runner = CliRunner()
    assert runner.invoke(cli, play).exit_code == 0
    _damage_a_record_page(db)
    commands = [
        ["arena", "standings", "--db", str(db)],
        ["arena", "standings", "--db", str(db), "--list"],
        ["arena", "verify", "--db", str(db)],
        ["arena", "replay", "trictrac:heuristic~random:0000a", "--db", str(db)],
        ["analyze", "--db", str(db)],
        play,
    ]
    for args in commands:
        result = runner.invoke(cli, args)
        assert result.exit_code == 1, (args, result.output)
        assert "Traceback" not in result.output
        (line,) = result.output.strip().splitlines()
        assert line.startswith("Error: ") and "malformed database" in line, (args, line)
    with pytest.raises(StorageError, match="malformed database"):  # nardy arena serve's Arena
        Arena(db=str(db))
