"""Commit and reveal of the tournament seed, and `nardy arena verify` / `replay` / `standings`
against honest and tampered databases and records files (docs/audit.md)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st
from test_audit_independent import MT, derive

from nardy.arena.competition.schedule import (
    TournamentDef,
    TournamentError,
    derive_seed,
    parse_definition,
)
from nardy.arena.competition.tournament import PythonPlayer, Tournament, TournamentEvent
from nardy.arena.records import audit
from nardy.arena.records.storage import SqliteStore
from nardy.arena.records.verify import verify_store
from nardy.arena.tournament_cli import main as cli
from nardy.bots import Bot
from nardy.core.dice import SeededDice
from nardy.core.game import PlayDecision


def _definition(**kw: Any) -> TournamentDef:
    data: dict[str, Any] = {
        "name": "audit",
        "bots": ["heuristic", "random"],
        "variant": "long",
        "games": 4,
        "seed": 8123,
    }
    data.update(kw)
    return parse_definition(data)


class CrashBot(Bot):
    def choose_play(self, decision: PlayDecision) -> int:
        raise RuntimeError("boom")


class FirstBot(Bot):
    def choose_play(self, decision: PlayDecision) -> int:
        return 0


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, TournamentDef]:
    """A finished tournament: its database and its JSONL records (copied by each test)."""
    base = tmp_path_factory.mktemp("honest")
    d = _definition()
    store = SqliteStore(base / "a.db")
    assert Tournament(d, store, records=base / "a.jsonl").run().status == "finished"
    store.close()
    return base / "a.db", base / "a.jsonl", d


@pytest.fixture
def db(honest: tuple[Path, Path, TournamentDef], tmp_path: Path) -> Path:
    target = tmp_path / "copy.db"
    src = sqlite3.connect(honest[0])
    dst = sqlite3.connect(target)
    src.backup(dst)
    src.close()
    dst.close()
    return target


def _cli(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _verify(db: Path) -> Result:
    return _cli("verify", "--db", str(db))


def _edit_record(db: Path, game_id: str, change: Callable[[dict[str, Any]], None]) -> None:
    con = sqlite3.connect(db)
    (text,) = con.execute("SELECT record FROM games WHERE game_id = ?", (game_id,)).fetchone()
    record = json.loads(text)
    change(record)
    con.execute("UPDATE games SET record = ? WHERE game_id = ?", (json.dumps(record), game_id))
    con.commit()
    con.close()


def _sql(db: Path, statement: str, *params: Any) -> None:
    con = sqlite3.connect(db)
    con.execute(statement, params)
    con.commit()
    con.close()


def _mismatches(result: Result) -> list[str]:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("MISMATCH ")]
    assert lines and result.output.splitlines()[-1].startswith("FAILED ")
    return lines


GAME = "long:heuristic~random:0002a"


# -- honest -----------------------------------------------------------------------------------------


def test_verify_passes_on_an_honest_database_and_its_records(
    honest: tuple[Path, Path, TournamentDef],
) -> None:
    path, records, d = honest
    result = _verify(path)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"OK {d.tournament_id}: 4 games, ")
    shown = json.loads(_cli("standings", "--db", str(path), "--json").stdout)["dice"]
    assert shown["revealed"] and shown["seed"] == d.seed and len(shown["salt"]) == 64
    assert shown["commitment"] == audit.commitment(d.seed, bytes.fromhex(shown["salt"]))
    from_file = _cli(
        "verify", "--records", str(records), "--seed", str(d.seed), "--salt", shown["salt"]
    )
    assert from_file.exit_code == 0 and from_file.output.startswith("OK "), from_file.output
    one = _cli("replay", GAME, "--db", str(path))
    assert one.exit_code == 0 and one.output.startswith(f"OK {d.tournament_id}: 1 games")
    report = verify_store(SqliteStore(path, readonly=True))
    assert report.ok and report.games == 4 and report.rolls > 200 and report.decisions > 100


# -- tampered ---------------------------------------------------------------------------------------


def test_a_changed_roll_fails(db: Path, honest: tuple[Path, Path, TournamentDef]) -> None:
    def change(record: dict[str, Any]) -> None:
        roll = record["game"]["rolls"][5]
        record["game"]["rolls"][5] = [roll[1] % 6 + 1, roll[0]]

    _edit_record(db, GAME, change)
    lines = _mismatches(_verify(db))  # the roll, and the re-played game that it no longer gives
    assert lines[0].startswith(f"MISMATCH {GAME}: roll 6 is ")
    assert all(x.startswith(f"MISMATCH {GAME}: ") for x in lines)
    # The same change in the JSONL records.
    records = db.parent / "r.jsonl"
    lines = [json.loads(x) for x in honest[1].read_text().splitlines()]
    for record in lines:
        if record["game_id"] == GAME:
            change(record)
    records.write_text("".join(json.dumps(r) + "\n" for r in lines))
    salt = audit.public_dice(SqliteStore(honest[0], readonly=True), honest[2].tournament_id)
    assert salt is not None and salt.salt is not None
    result = _cli(
        "verify", "--records", str(records), "--seed", str(honest[2].seed), "--salt", salt.salt
    )
    assert any("roll 6" in x for x in _mismatches(result))


def test_a_changed_play_fails(db: Path) -> None:
    def change(record: dict[str, Any]) -> None:
        plays = [x for x in record["decisions"] if x["kind"] == "play" and x["player"] == "White"]
        plays[3]["answer"], plays[4]["answer"] = plays[4]["answer"], plays[3]["answer"]

    _edit_record(db, GAME, change)
    lines = _mismatches(_verify(db))
    assert len(lines) == 1 and lines[0].startswith(f"MISMATCH {GAME}: ")
    assert _cli("replay", GAME, "--db", str(db)).exit_code == 1


def test_a_changed_points_column_fails_and_standings_refuse_it(db: Path) -> None:
    _sql(db, "UPDATE games SET points = points + 1 WHERE game_id = ?", GAME)
    (line,) = _mismatches(_verify(db))
    assert "stored points is" in line and "its record says" in line
    assert _cli("replay", GAME, "--db", str(db)).exit_code == 1
    shown = _cli("standings", "--db", str(db))
    assert shown.exit_code == 1 and "Traceback" not in shown.output
    (error,) = shown.output.strip().splitlines()
    assert error.startswith("Error: tournament ") and GAME in error and "points" in error


@pytest.mark.parametrize(
    ("column", "value"),
    [("winner", "1 - winner"), ("termination", "'bot_failure'"), ("white", "'random'"), ("a", "b")],
)
def test_any_changed_column_the_standings_use_fails(db: Path, column: str, value: str) -> None:
    _sql(db, f"UPDATE games SET {column} = {value} WHERE game_id = ?", GAME)
    lines = _mismatches(_verify(db))
    assert any(f"the stored {column} is " in x for x in lines), lines
    assert _cli("replay", GAME, "--db", str(db)).exit_code == 1
    assert _cli("standings", "--db", str(db)).exit_code == 1


def test_points_changed_in_the_record_too_fail(db: Path) -> None:
    _edit_record(db, GAME, lambda r: r["result"].update(points=r["result"]["points"] + 1))
    _sql(db, "UPDATE games SET points = points + 1 WHERE game_id = ?", GAME)
    assert _cli("standings", "--db", str(db)).exit_code == 0  # columns and record agree ...
    (line,) = _mismatches(_verify(db))  # ... but the re-played game does not
    assert "the result says" in line and "the re-played game" in line


def test_a_text_winner_is_one_line_everywhere(db: Path) -> None:
    _sql(db, "UPDATE games SET winner = 'nobody' WHERE game_id = ?", GAME)
    for args in (["standings"], ["verify"], ["replay", GAME], ["standings", "--json"]):
        result = _cli(*args, "--db", str(db))
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert "column winner holds 'nobody'" in result.output
        assert len(result.output.strip().splitlines()) <= 2


@pytest.mark.parametrize("where", ["revealed", "definition", "record", "cli"])
def test_a_changed_seed_fails(
    db: Path, honest: tuple[Path, Path, TournamentDef], where: str
) -> None:
    d = honest[2]
    if where == "revealed":
        _sql(db, "UPDATE dice_commitments SET revealed_seed = revealed_seed + 1")
        (line,) = _mismatches(_verify(db))
        assert "do not give the commitment" in line
    elif where == "definition":
        con = sqlite3.connect(db)
        (text,) = con.execute("SELECT definition FROM tournaments").fetchone()
        con.close()
        _sql(
            db,
            "UPDATE tournaments SET definition = ?",
            text.replace(f'"seed":{d.seed}', '"seed":1'),
        )
        lines = _mismatches(_verify(db))
        assert any("definition's seed 1 is not the revealed seed" in x for x in lines)
    elif where == "record":
        _edit_record(db, GAME, lambda r: r.update(seed=r["seed"] + 1))
        _sql(db, "UPDATE games SET seed = seed + 1 WHERE game_id = ?", GAME)
        lines = _mismatches(_verify(db))
        assert any("the revealed seed gives" in x for x in lines)
    else:
        dice = audit.public_dice(SqliteStore(honest[0], readonly=True), d.tournament_id)
        assert dice is not None and dice.salt is not None
        args = ["verify", "--records", str(honest[1]), "--salt", dice.salt]
        (line,) = _mismatches(_cli(*args, "--seed", str(d.seed + 1)))
        assert "do not give the commitment" in line


def test_a_missing_game_of_a_finished_tournament_fails(db: Path) -> None:
    _sql(db, "DELETE FROM games WHERE game_id = ?", GAME)
    (line,) = _mismatches(_verify(db))
    assert "finished, yet 1 scheduled units are not complete" in line


# -- commit while running, reveal at the end ---------------------------------------------------------


def test_seed_secret_while_running_then_revealed(tmp_path: Path) -> None:
    d = _definition(games=4, seed=2**62 + 17)
    store = SqliteStore(tmp_path / "r.db")
    t = Tournament(d, store)
    published = t.prepare()
    assert not published.revealed and published.seed is None and published.salt is None
    seen: list[tuple[audit.DiceAudit | None, bool]] = []

    def during(event: TournamentEvent) -> None:
        if event.kind == "game_ended":
            running = verify_store(store)
            seen.append((audit.public_dice(store, d.tournament_id), running.ok))
            assert "not revealed yet" in running.problems[0]

    t.subscribe(during)
    assert t.run().status == "finished"
    assert len(seen) == 4
    for dice, ok in seen:
        assert dice == published and not ok
        assert str(d.seed) not in json.dumps(dice.to_json() if dice else None)
    final = audit.public_dice(store, d.tournament_id)
    assert final is not None and final.revealed and final.seed == d.seed
    assert final.commitment == published.commitment
    assert audit.matches(d.seed, final.salt or "", final.commitment)
    for g in store.games(d.tournament_id, records=True):
        assert g.record is not None
        assert g.record["dice_commitment"] == {
            "scheme": "nardy-dice-v1",
            "commitment": published.commitment,
            "duplicate": True,
        }
        assert str(d.seed) not in json.dumps(g.record)
    assert verify_store(store).ok


def test_interrupted_keeps_the_secret_resume_keeps_the_commitment(tmp_path: Path) -> None:
    d = _definition(games=4)
    store = SqliteStore(tmp_path / "i.db")
    t = Tournament(d, store)
    t.subscribe(lambda event: t.stop() if event.kind == "game_ended" else None)
    assert t.run().status == "interrupted"
    sealed = audit.public_dice(store, d.tournament_id)
    assert sealed is not None and not sealed.revealed and sealed.salt is None
    assert Tournament(d, store).run().status == "finished"
    final = audit.public_dice(store, d.tournament_id)
    assert final is not None and final.revealed and final.commitment == sealed.commitment
    assert verify_store(store).ok
    # More games on a revealed seed would be predictable: refused.
    with pytest.raises(TournamentError, match="seed is revealed"):
        Tournament(_definition(games=6), store).run()


def test_forfeits_are_attributed_and_checked(tmp_path: Path) -> None:
    d = _definition(bots=["first", "crash"], games=2, variant="backgammon")
    players = {
        "first": PythonPlayer("first", lambda seed: FirstBot()),
        "crash": PythonPlayer("crash", lambda seed: CrashBot()),
    }
    path = tmp_path / "f.db"
    store = SqliteStore(path)
    Tournament(d, store, players=players).run()
    store.close()
    assert _verify(path).exit_code == 0
    game = "backgammon:first~crash:0001a"  # crash is Black and forfeits

    def flip(record: dict[str, Any]) -> None:
        record["result"]["winner"] = "Black"

    _edit_record(path, game, flip)
    _sql(path, "UPDATE games SET winner = 1 WHERE game_id = ?", game)
    (line,) = _mismatches(_verify(path))
    assert "the forfeit gives winner White" in line


# -- the independent implementation against the engine, on any seed ---------------------------------

_NAMES = st.text(alphabet="ABCxyz019_.+-", min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(seed=st.one_of(st.integers(0, 2**32 + 5), st.integers(0, 2**63 - 1)))
def test_documented_generator_is_the_engines_dice(seed: int) -> None:
    mine, engine = MT(seed), SeededDice(seed)
    assert [mine.roll() for _ in range(40)] == [list(engine.roll()) for _ in range(40)]


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.one_of(st.integers(0, 2**63 - 1), _NAMES), min_size=1, max_size=5))
def test_documented_derive_is_the_engines(parts: list[object]) -> None:
    assert derive(*parts) == derive_seed(*parts)


def test_verify_replays_plakoto_ends(tmp_path: Path) -> None:
    """A plakoto tournament (RULES.md §3.12.2): games end by bear-off or by the mother rule (or in
    a draw), each recorded with its own termination, and the verifier's re-played games agree."""
    d = parse_definition(
        {"name": "pl", "bots": ["random", "heuristic"], "variant": "plakoto", "games": 8, "seed": 3}
    )
    store = SqliteStore(tmp_path / "pl.db")
    assert Tournament(d, store).run().status == "finished"
    report = verify_store(store)
    assert report.ok and report.games == 8, report
    ends = {row.termination for row in store.games(d.tournament_id)}
    store.close()
    assert ends <= {"borne_off", "mother", "draw"} and "mother" in ends, ends
