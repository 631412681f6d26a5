"""PostgreSQL storage (``--db postgresql://...``): the storage contract on both backends, a
tournament run, kill and resume, and concurrent writers, against a real server.

The server is ``NARDY_TEST_POSTGRES_URL`` when set (each test works in a schema of its own, dropped
afterwards); otherwise a throwaway cluster of the Debian PostgreSQL binaries
(``/usr/lib/postgresql/*/bin``, installed by ``.ci/postgres.sh``), started on a free loopback port
for the session (as the ``postgres`` user when we are root) and removed at the end. Without either
the PostgreSQL tests skip; with ``CI`` set and the binaries installed, a server that cannot be had
is a failure.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import pwd
import shlex
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
from click.testing import CliRunner

from nardy.arena.competition.schedule import TournamentDef, parse_definition
from nardy.arena.competition.tournament import Tournament, replay_record
from nardy.arena.records.storage import (
    DuplicateGameError,
    GameRow,
    PostgresStore,
    SqliteStore,
    StorageError,
    Store,
    open_store,
    redact_url,
)
from nardy.arena.tournament_cli import main as cli

URL_ENV = "NARDY_TEST_POSTGRES_URL"


# -- the server -----------------------------------------------------------------------------------


def _installed() -> list[Path]:
    """The bin folders of the Debian PostgreSQL packages, newest version first."""
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    found = [d for d in found if (d / "pg_ctl").exists()]

    def version(d: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in d.parent.name.split(".") if x.isdigit())

    return sorted(found, key=version, reverse=True)


def _unavailable(reason: str) -> NoReturn:
    """Skip; but in CI, with the server binaries installed, fail."""
    if os.environ.get("CI") and _installed():
        pytest.fail(f"PostgreSQL tests cannot run in CI with PostgreSQL installed: {reason}")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _others_can_enter(folder: Path) -> bool:
    """Whether every folder down to ``folder`` lets other users through."""
    folder = folder.resolve()
    return all(f.stat().st_mode & stat.S_IXOTH for f in (folder, *folder.parents))


class _Cluster:
    """A throwaway PostgreSQL cluster in a temporary folder (trust auth, loopback only)."""

    def __init__(self, bindir: Path, user: pwd.struct_passwd | None) -> None:
        self.bindir = bindir
        self.user = user  # run the server as this user (we are root), or as ourselves
        parent = tempfile.gettempdir()
        if user is not None and not _others_can_enter(Path(parent)):
            parent = "/tmp"  # the server's user must reach its folder
        self.root = Path(tempfile.mkdtemp(prefix="nardy-pg-", dir=parent))
        if user is not None:
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self.data = self.root / "data"
        self.port = 0

    def _run(self, *args: str, timeout: float = 60) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.user is not None:
            if shutil.which("runuser"):
                cmd = ["runuser", "-u", self.user.pw_name, "--", *cmd]
            else:
                cmd = ["su", self.user.pw_name, "-s", "/bin/sh", "-c", shlex.join(cmd)]
        done = subprocess.run(
            cmd, cwd=self.root, capture_output=True, text=True, timeout=timeout, check=False
        )
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{' '.join(args[:1])} failed ({done.returncode}): {done.stderr.strip()} {tail}"
            )

    def start(self) -> str:
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
            "--locale=C", "--no-sync",
        )  # fmt: skip
        for attempt in range(3):  # a free port can be taken before the server binds it
            self.port = _free_port()
            options = (
                f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            )
            try:
                self._run(
                    "pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"),
                    "-w", "-t", "30", "-o", options, "start",
                )  # fmt: skip
                break
            except RuntimeError:
                if attempt == 2:
                    raise
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server (superuser or a role that may create schemas)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed: pip install 'nardy[postgres]'")
    url = os.environ.get(URL_ENV)
    if url:
        yield url
        return
    installed = _installed()
    if not installed:
        pytest.skip(
            f"no PostgreSQL server: set {URL_ENV}, or install the Debian postgresql package "
            "(.ci/postgres.sh)"
        )
    user = None
    if os.geteuid() == 0:  # postgres refuses to run as root
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server as")
    cluster = _Cluster(installed[0], user)
    try:
        url = cluster.start()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        cluster.stop()
        _unavailable(f"cannot start a throwaway PostgreSQL cluster: {exc}")
    try:
        yield url
    finally:
        cluster.stop()


def _with_schema(url: str, schema: str) -> str:
    option = f"options=-c%20search_path%3D{schema}"
    return f"{url}{'&' if '?' in url else '?'}{option}"


@pytest.fixture
def pg_url(postgres_server: str) -> Iterator[str]:
    """A URL whose tables live in a fresh schema of their own (dropped afterwards)."""
    import psycopg

    schema = f"nardy_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
    try:
        yield _with_schema(postgres_server, schema)
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as db:
            db.execute(f"DROP SCHEMA {schema} CASCADE")


def _pg_sql(url: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        cursor = db.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


# -- both backends ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Backend:
    name: str
    target: str
    """A SQLite path or a PostgreSQL URL: what --db takes."""

    def open(self, readonly: bool = False) -> Store:
        return open_store(self.target, readonly=readonly)

    def sql(self, statement: str) -> None:
        """Run one statement on the database, outside the store."""
        if self.name == "sqlite":
            with sqlite3.connect(self.target) as db:
                db.execute(statement)
            db.close()
        else:
            _pg_sql(self.target, statement)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "a.db"))
    return Backend("postgres", request.getfixturevalue("pg_url"))


def _row(
    game_id: str = "long:a~b:0001a",
    winner: int | None = 0,
    points: int = 2,
    leg: int = 0,
    tournament_id: str = "t-1",
) -> GameRow:
    return GameRow(
        tournament_id=tournament_id,
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
        seed=2**63 - 1,
        winner=winner,
        points=points,
        termination="borne_off",
        finished=1754000000.123456,
    )


def _opened(backend: Backend) -> Store:
    store = backend.open()
    store.open_tournament("t-1", "t", {"games": 2}, {"seed": 1}, 2)
    return store


def test_save_and_read_back(backend: Backend) -> None:
    store = _opened(backend)
    record = {"game_id": "long:a~b:0001a", "rolls": [[3, 1]], "text": "ünïcode ✓"}
    store.save_game(_row(), record)
    store.save_game(_row("long:a~b:0001b", winner=0, points=1, leg=1), {"x": 1})
    store.save_game(_row("long:a~b:0000a", winner=None, points=0), {})  # stored order, not ids
    rows = store.games("t-1")
    assert [r.game_id for r in rows] == ["long:a~b:0001a", "long:a~b:0001b", "long:a~b:0000a"]
    assert rows[0].record is None
    assert (rows[0].seed, rows[0].finished) == (2**63 - 1, 1754000000.123456)  # 64-bit, float64
    assert [r.a_points for r in rows] == [2, -1, 0]  # leg 1: a plays Black; White won
    assert rows[2].winner is None
    assert store.find_game("long:a~b:0001a").record == record
    assert store.games("t-1", records=True)[1].record == {"x": 1}
    (t,) = store.tournaments()
    assert (t.tournament_id, t.status, t.games_stored, t.games_total) == ("t-1", "pending", 3, 2)
    assert t.definition == {"games": 2} and t.updated == 1754000000.123456  # the last game
    store.set_status("t-1", "finished", "done")
    assert (store.tournaments()[0].status, store.tournaments()[0].detail) == ("finished", "done")
    store.close()
    again = backend.open()  # the schema is there already: opening again changes nothing
    assert len(again.games("t-1")) == 3
    again.close()


def test_a_game_is_stored_once(backend: Backend) -> None:
    store = _opened(backend)
    store.save_game(_row(), {"first": True})
    with pytest.raises(DuplicateGameError, match="already stored"):
        store.save_game(_row(), {"second": True})
    assert store.find_game("long:a~b:0001a").record == {"first": True}
    assert len(store.games("t-1")) == 1
    store.save_game(_row("long:a~b:0002a"), {})  # the store is still usable
    assert len(store.games("t-1")) == 2
    store.close()


def test_a_batch_is_one_transaction(backend: Backend) -> None:
    """save_games: the games of a batch are stored together, in order, or not at all (one of
    them already stored rolls the whole batch back)."""
    store = _opened(backend)
    store.save_games([(_row("long:a~b:0002a"), {"n": 2}), (_row("long:a~b:0001a"), {"n": 1})])
    assert [r.game_id for r in store.games("t-1")] == ["long:a~b:0002a", "long:a~b:0001a"]
    batch = [(_row("long:a~b:0003a"), {"n": 3}), (_row("long:a~b:0001a"), {"again": True})]
    with pytest.raises(DuplicateGameError, match="nothing of the batch"):
        store.save_games(batch)
    assert [r.game_id for r in store.games("t-1")] == ["long:a~b:0002a", "long:a~b:0001a"]
    assert store.find_game("long:a~b:0001a").record == {"n": 1}
    store.save_games([])
    store.save_games([(_row("long:a~b:0003a"), {"n": 3})])  # still usable
    assert len(store.games("t-1")) == 3
    store.close()


def test_identity_mismatch(backend: Backend) -> None:
    store = _opened(backend)
    store.open_tournament("t-1", "t", {"games": 4}, {"seed": 1}, 4)  # more games: fine
    assert store.tournaments()[0].games_total == 4
    assert store.tournaments()[0].definition == {"games": 4}
    with pytest.raises(StorageError, match="different definition"):
        store.open_tournament("t-1", "t", {"games": 4}, {"seed": 2}, 4)
    assert store.tournaments()[0].games_total == 4
    store.close()


def test_find_game_errors_and_unknown_tournament(backend: Backend) -> None:
    store = _opened(backend)
    store.open_tournament("t-2", "t", {}, {"seed": 2}, 1)
    store.save_game(_row(), {})
    store.save_game(_row(tournament_id="t-2"), {})
    with pytest.raises(StorageError, match="no game 'nope'"):
        store.find_game("nope")
    with pytest.raises(StorageError, match="several tournaments"):
        store.find_game("long:a~b:0001a")
    assert store.find_game("long:a~b:0001a", "t-2").tournament_id == "t-2"
    with pytest.raises(StorageError) as info:  # a game of a tournament never opened
        store.save_game(_row(tournament_id="t-9"), {})
    assert not isinstance(info.value, DuplicateGameError)
    assert [len(store.games(t)) for t in ("t-1", "t-2", "t-9")] == [1, 1, 0]
    store.close()


def test_reader_while_writing(backend: Backend) -> None:
    store = _opened(backend)
    reader = backend.open(readonly=True)
    store.save_game(_row(), {})
    assert [r.game_id for r in reader.games("t-1")] == ["long:a~b:0001a"]
    assert reader.tournaments()[0].games_stored == 1
    reader.close()
    store.close()


def test_a_reader_of_an_empty_database(backend: Backend) -> None:
    if backend.name == "sqlite":
        Path(backend.target).write_bytes(b"")
    with pytest.raises(StorageError, match="not a nardy tournament database"):
        backend.open(readonly=True)


def test_schema_version_mismatch(backend: Backend) -> None:
    _opened(backend).close()
    backend.sql("UPDATE meta SET value = '99' WHERE key = 'schema'")
    with pytest.raises(StorageError, match="schema 99, this nardy reads 2"):
        backend.open()


def test_threads_share_one_store(backend: Backend) -> None:
    store = _opened(backend)
    errors: list[BaseException] = []

    def save(k: int) -> None:
        try:
            for i in range(10):
                store.save_game(_row(f"g{k}-{i}"), {"k": k, "i": i})
                store.games("t-1")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    games = store.games("t-1", records=True)
    assert sorted(g.game_id for g in games) == sorted(
        f"g{k}-{i}" for k in range(4) for i in range(10)
    )
    assert all(g.record == {"k": int(g.game_id[1]), "i": int(g.game_id[3:])} for g in games)
    store.close()


# -- PostgreSQL only, without a server ------------------------------------------------------------


def test_without_psycopg_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    with pytest.raises(StorageError) as info:
        open_store("postgresql://nardy@localhost/arena")
    assert str(info.value) == "PostgreSQL storage needs psycopg: pip install 'nardy[postgres]'"
    result = CliRunner().invoke(cli, ["standings", "--db", "postgres://localhost/arena"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: PostgreSQL storage needs psycopg: pip install 'nardy[postgres]'"
    ]


def test_unreachable_server_hides_the_password() -> None:
    pytest.importorskip("psycopg")
    url = f"postgresql://nardy:s3cret@127.0.0.1:{_free_port()}/arena?sslmode=disable"
    with pytest.raises(StorageError, match="cannot connect to PostgreSQL") as info:
        open_store(url)
    message = str(info.value)
    assert message.startswith("postgresql://nardy:***@127.0.0.1:")
    assert "s3cret" not in message and "\n" not in message


def test_a_url_mangled_into_a_path_is_refused() -> None:
    with pytest.raises(StorageError, match="taken for a file path"):
        open_store(Path("postgresql://nardy@localhost/arena"))  # "postgresql:/nardy@..."


def test_redact_url() -> None:
    assert redact_url("postgresql://u:p@h:5/d?password=x") == "postgresql://u:***@h:5/d"
    assert redact_url("postgres://u@h/d") == "postgres://u@h/d"
    assert redact_url("postgresql://u:p:w@x@h/d") == "postgresql://u:***@h/d"
    assert redact_url("postgresql://u:p@[::1/d") == "postgresql://..."  # not a URL: say little


# -- PostgreSQL only ---------------------------------------------------------------------------------


@pytest.mark.slow  # a PostgreSQL server
def test_postgres_schema(pg_url: str) -> None:
    _opened(Backend("postgres", pg_url)).close()
    types = dict(
        _pg_sql(
            pg_url,
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = 'games'",
        )
    )
    assert (types["seed"], types["finished"], types["seq"]) == (
        "bigint",
        "double precision",
        "bigint",
    )
    tables = {
        r[0]
        for r in _pg_sql(
            pg_url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        )
    }
    assert tables == {
        "meta",
        "tournaments",
        "games",
        "dice_commitments",
        *("ledger_units", "ledger_bots", "ledger_pairings", "ledger_pools", "ledger_rounds"),
    }


@pytest.mark.slow  # a PostgreSQL server
def test_postgres_reader_cannot_write(pg_url: str) -> None:
    _opened(Backend("postgres", pg_url)).close()
    reader = PostgresStore(pg_url, readonly=True)
    with pytest.raises(StorageError, match="read-only"):
        reader.save_game(_row(), {})
    assert reader.games("t-1") == []
    reader.close()


@pytest.mark.slow  # a PostgreSQL server
def test_postgres_reconnects_after_a_broken_connection(pg_url: str) -> None:
    store = _opened(Backend("postgres", pg_url))
    store.save_game(_row(), {})
    assert isinstance(store, PostgresStore)
    pid = store._db.info.backend_pid
    _pg_sql(pg_url, "SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(StorageError):  # the call that finds the connection dead fails ...
        store.games("t-1")
    assert len(store.games("t-1")) == 1  # ... and the next one opens a new one
    store.save_game(_row("long:a~b:0002a"), {})
    assert len(store.games("t-1")) == 2
    store.close()


@pytest.mark.slow  # a PostgreSQL server
def test_concurrent_first_opens(pg_url: str) -> None:
    """Several connections create the schema and the same tournament at the same moment."""
    n = 6
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []
    stores: list[Store] = []

    def open_one() -> None:
        try:
            barrier.wait(10)
            store = open_store(pg_url)
            store.open_tournament("t-1", "t", {"games": 2}, {"seed": 1}, 2)
            stores.append(store)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(stores) == n
    assert [t.tournament_id for t in stores[0].tournaments()] == ["t-1"]
    for store in stores:
        store.close()


_WRITER = r"""
import json, sys
from nardy.arena.records.storage import DuplicateGameError, GameRow, open_store

url, name, ids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
store = open_store(url)
store.open_tournament("t-1", "t", {"games": len(ids)}, {"seed": 1}, len(ids))
print("ready", flush=True)
sys.stdin.readline()
saved, duplicates = [], []
for game_id in ids:
    row = GameRow("t-1", game_id, game_id, "long", "a", "b", 0, 0, 1, "a", "b", 7, 0, 1,
                  "borne_off", 1.0)
    try:
        store.save_game(row, {"game_id": game_id, "by": name, "pad": "x" * 4000})
        saved.append(game_id)
    except DuplicateGameError:
        duplicates.append(game_id)
store.set_status("t-1", "running", name)
store.close()
print(json.dumps({"saved": saved, "duplicates": duplicates}), flush=True)
"""


@pytest.mark.slow  # a PostgreSQL server
def test_two_processes_write_the_same_tournament(pg_url: str) -> None:
    """Two processes store the same 80 games, one in order and one in reverse: each game is
    stored once, by one of them, with its record whole; the other one is told it is there."""
    ids = [f"long:a~b:{i:04d}a" for i in range(80)]
    writers = {
        name: subprocess.Popen(
            [sys.executable, "-c", _WRITER, pg_url, name, json.dumps(order)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, order in (("up", ids), ("down", ids[::-1]))
    }
    for proc in writers.values():
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.communicate()[1]
    results = {}
    for proc in writers.values():  # both are ready: let them go together
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for name, proc in writers.items():
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        results[name] = json.loads(out.splitlines()[-1])
    up, down = results["up"], results["down"]
    assert sorted(up["saved"] + down["saved"]) == sorted(ids)
    assert not set(up["saved"]) & set(down["saved"])
    assert sorted(up["duplicates"]) == sorted(down["saved"])
    assert sorted(down["duplicates"]) == sorted(up["saved"])
    assert up["saved"] and down["saved"], "the two writers never overlapped"
    store = open_store(pg_url, readonly=True)
    games = store.games("t-1", records=True)
    assert sorted(g.game_id for g in games) == sorted(ids)
    by = {g.game_id: g.record["by"] for g in games if g.record is not None}
    assert {gid for gid, who in by.items() if who == "up"} == set(up["saved"])
    assert all(g.record is not None and len(g.record["pad"]) == 4000 for g in games)
    (t,) = store.tournaments()
    assert (t.games_stored, t.status) == (80, "running")
    store.close()


# -- tournaments on PostgreSQL ---------------------------------------------------------------------


def _definition(**kw: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "heuristic-random-long",
        "bots": ["heuristic", "random"],
        "variant": "long",
        "games": 24,
        "seed": 7,
    }
    data.update(kw)
    return data


def _games(store: Store, d: TournamentDef) -> list[tuple[Any, ...]]:
    """What must be identical between two runs: ids, seeds, results and the dice."""
    out = []
    for g in store.games(d.tournament_id, records=True):
        assert g.record is not None
        rolls = json.dumps(g.record["game"]["rolls"])
        out.append((g.game_id, g.seed, g.winner, g.points, rolls))
    return sorted(out)


@pytest.fixture
def reference(tmp_path: Path) -> Callable[[TournamentDef], list[tuple[Any, ...]]]:
    """The games of an uninterrupted run into SQLite."""

    def run(d: TournamentDef) -> list[tuple[Any, ...]]:
        store = SqliteStore(tmp_path / f"ref-{d.tournament_id}.db")
        assert Tournament(d, store).run().status == "finished"
        games = _games(store, d)
        store.close()
        return games

    return run


@pytest.mark.slow  # a PostgreSQL server
def test_stop_and_resume_with_matches(
    pg_url: str, reference: Callable[[TournamentDef], list[tuple[Any, ...]]]
) -> None:
    # Long nardy matches to 5: a match has two games or more, so the stop falls mid-match.
    d = parse_definition(
        {
            "name": "m",
            "bots": ["heuristic", "random"],
            "variants": [{"name": "long", "options": {"match_length": 5}}],
            "games": 2,
            "seed": 4,
        }
    )
    store = open_store(pg_url)
    t = Tournament(d, store)
    t.subscribe(lambda event: t.stop() if event.kind == "game_ended" else None)
    first = t.run()
    assert first.status == "interrupted" and first.played == 1
    second = Tournament(d, store).run()
    games = store.games(d.tournament_id, records=True)
    assert second.status == "finished" and second.skipped == 1
    assert second.played == len(games) - 1
    ids = [g.game_id for g in games]
    assert len(ids) == len(set(ids))
    assert _games(store, d) == reference(d)
    for g in games:
        assert g.record is not None and replay_record(g.record).ok
    store.close()


@pytest.mark.slow  # a PostgreSQL server
@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs POSIX process groups")
def test_cli_run_killed_and_resumed(
    pg_url: str, tmp_path: Path, reference: Callable[[TournamentDef], list[tuple[Any, ...]]]
) -> None:
    """`nardy arena run --db postgresql://...`, SIGKILLed after some games are stored, then run
    again: every game of the schedule once, the same as an uninterrupted run; then `standings`
    and `replay` read the database."""
    args = [
        sys.executable, "-m", "nardy.arena.tournament_cli", "run", "--variant", "long",
        "--bots", "heuristic,random", "--games", "24", "--seed", "7", "--quiet", "--db", pg_url,
    ]  # fmt: skip
    proc = subprocess.Popen(
        args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    stored = 0
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                stored = _pg_sql(pg_url, "SELECT COUNT(*) FROM games")[0][0]
            except Exception:  # the tables do not exist yet
                stored = 0
            if stored >= 3:
                break
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert 3 <= stored < 24
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    d = parse_definition(_definition())
    store = open_store(pg_url, readonly=True)
    ids = [g.game_id for g in store.games(d.tournament_id)]
    assert len(ids) == len(set(ids)) == 24
    assert _games(store, d) == reference(d)
    assert store.tournaments()[0].status == "finished"
    store.close()

    runner = CliRunner()
    standings = runner.invoke(cli, ["standings", "--db", pg_url, "--json"])
    assert standings.exit_code == 0, standings.output
    table = json.loads(standings.output)
    assert table["games_stored"] == 24
    (pool,) = table["pools"]
    assert sum(b["games"] for b in pool["standings"]) == 48  # 24 games, two bots each
    replay = runner.invoke(cli, ["replay", ids[5], "--db", pg_url])
    assert replay.exit_code == 0, replay.output


def test_the_arena_registry_on_both_backends(backend: Backend) -> None:
    """The arena's bots and tournaments (nardy.arena.service.registry) survive reopening the store."""
    from nardy.arena.service.registry import BotRow, Registry

    store = backend.open()
    try:
        registry = Registry(store)
        row = BotRow("heur", "heur", "server", "127.0.0.1:1", "ab" * 32, b"\x00\xffinfo", 1.5)
        registry.add_bot(row)
        registry.add_tournament("t-1")
        registry.add_tournament("t-1")  # twice: one row
        registry.cancel_tournament("t-1")
        with pytest.raises(StorageError):
            registry.add_bot(row)  # the same id
    finally:
        store.close()
    again = backend.open()
    try:
        registry = Registry(again)
        assert registry.bots() == [row]
        [entry] = registry.tournaments()
        assert entry.tournament_id == "t-1" and entry.cancelled
    finally:
        again.close()


def test_fault_counts_on_both_backends(backend: Backend) -> None:
    """A bot's fault counts (arena_faults) are replaced on each save and survive reopening."""
    from nardy.arena.service.registry import Registry

    store = backend.open()
    try:
        registry = Registry(store)
        registry.save_faults("heur", {"timeout": 1}, False)
        registry.save_faults("heur", {"timeout": 2, "illegal": 1}, True)
        registry.save_faults("rand", {}, False)
    finally:
        store.close()
    again = backend.open()
    try:
        faults = Registry(again).faults()
        assert (faults["heur"].counts, faults["heur"].disqualified) == (
            {"timeout": 2, "illegal": 1},
            True,
        )
        assert (faults["rand"].counts, faults["rand"].disqualified) == ({}, False)
    finally:
        again.close()


def test_the_ledger_on_both_backends(backend: Backend) -> None:
    """The standings' running totals (nardy.arena.competition.ledger) are the same SQL on both backends:
    random games stored one by one and in batches equal the standings recounted from them."""
    import random

    from test_ledger import _definition, _random_games, _same, _tally

    from nardy.arena.competition.standings import standings_from_aggregates
    from nardy.arena.records.storage import SqlStore

    d = _definition(games=5)
    rows = _random_games(d, random.Random(8))
    store = backend.open()
    try:
        store.open_tournament(d.tournament_id, d.name, d.to_json(), d.identity(), d.total_units)
        store.save_game(rows[0], {})
        store.save_games([(r, {}) for r in rows[1:7]])
        for r in rows[7:]:
            store.save_game(r, {})
        assert isinstance(store, SqlStore)
        totals = store.ledger(d.tournament_id)
        assert totals is not None
        expected = _tally(d, rows)
        _same(standings_from_aggregates(d, totals, tournament_id=d.tournament_id), expected)
    finally:
        store.close()
    reader = backend.open(readonly=True)  # a reader's snapshot (read-only transactions)
    try:
        assert isinstance(reader, SqlStore)
        snapshot = reader.ledger_snapshot(d.tournament_id, check=True)
        assert snapshot is not None and snapshot.totals.games == len(rows)
        assert snapshot.columns
    finally:
        reader.close()


def test_a_schema_1_database_is_migrated_on_both_backends(backend: Backend, tmp_path: Path) -> None:
    from test_ledger import _bots, _same, _schema_1_module

    from nardy.arena.competition.standings import standings_from_records, standings_from_store
    from nardy.arena.competition.tournament import Tournament

    old_module = _schema_1_module(tmp_path)
    old = (
        old_module.SqliteStore(backend.target)
        if backend.name == "sqlite"
        else old_module.PostgresStore(backend.target)
    )
    d = parse_definition({"name": "old", "bots": _bots(3), "variant": "backgammon", "games": 3})
    Tournament(d, old).run()
    old.close()
    store = backend.open()  # migrated here
    try:
        _same(
            standings_from_store(store, d.tournament_id),
            standings_from_records(store, d.tournament_id),
        )
        assert store.ledger(d.tournament_id).games == 9  # type: ignore[attr-defined]
    finally:
        store.close()
