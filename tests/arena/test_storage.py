"""SQLite storage of tournaments: one transaction per game, no duplicates, clear errors."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from nardy.arena.storage import (
    DuplicateGameError,
    GameRow,
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
