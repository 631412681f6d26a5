"""The arena's games are the kernel's one record type (issue 36): a tournament game's record is a
:class:`nardy.core.record.GameRecord` from the game's worker to the store, its JSON line is that
record's codec, and it crosses a process boundary (a worker process, a Ray node) as itself."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from nardy.arena.competition.schedule import iter_schedule, parse_definition
from nardy.arena.competition.standings import standings_from_store
from nardy.arena.competition.tournament import Tournament, play_local_game, row_from_record
from nardy.arena.records.storage import SqliteStore, StorageError, stored_tournament
from nardy.arena.records.verify import verify_store
from nardy.bots import make_bot
from nardy.core.record import Event, GameRecord, from_json, of_game, replay


def _task_and_record() -> tuple[object, GameRecord]:
    d = parse_definition(
        {"name": "r", "variant": "long", "bots": ["heuristic", "random"], "seed": 3}
    )
    t = Tournament(d, SqliteStore(":memory:"))
    task = t._task(next(iter_schedule(d)), None, 1)
    infos = (
        {"bot_id": "heuristic", "name": "heuristic", "kind": "builtin"},
        {"bot_id": "random", "name": "random", "kind": "builtin"},
    )
    bots = (make_bot("heuristic", seed=1), make_bot("random", seed=2))
    return task, play_local_game(task, bots, infos)


def test_a_tournament_game_is_the_kernels_record_and_its_line_reads_back() -> None:
    task, record = _task_and_record()
    assert isinstance(record, GameRecord) and record.is_arena
    tags = dict(record.tags)
    assert tags["tournament_id"] == task.tournament_id and tags["unit_id"] == task.unit.unit_id
    assert record.setup is not None and record.match.match_id == task.unit.unit_id
    line = record.to_json()
    keys = list(line)
    # The tournament's fields between the kernel's and the setup, as the stored lines have them.
    assert keys.index("elapsed_s") < keys.index("tournament_id") < keys.index("setup")
    again = from_json(json.loads(json.dumps(line)))
    assert again.to_json() == line
    assert again.answers == record.answers and again.events == record.events
    assert replay(again).result is not None
    row = row_from_record(record, task)
    assert record.outcome is not None and row.termination == record.outcome.termination


def test_a_record_crosses_a_process_boundary_as_itself() -> None:
    """A worker process or a Ray node hands the engine the typed record (pickled)."""
    _, record = _task_and_record()
    assert pickle.loads(pickle.dumps(record)) == record


def test_the_kernels_log_taken_as_it_is_equals_the_log_read_from_its_json() -> None:
    """``Event.of`` (the arena's record of every game) and ``Event.from_json`` (a file) agree."""
    _, record = _task_and_record()
    game = replay(record)
    typed = of_game(game)
    read = [Event.from_json(e) for e in game.record()["events"]]
    assert list(typed.events) == read
    assert any(e.steps or e.dice for e in typed.events)
    assert all(isinstance(e.dice, tuple) for e in typed.events)


def test_a_stored_tournament_is_found_by_id_or_latest(tmp_path: Path) -> None:
    """One lookup for the standings and the verifier (the row, not what the audit checks)."""
    store = SqliteStore(tmp_path / "t.db")
    with pytest.raises(StorageError, match=r"^the database holds no tournament$"):
        stored_tournament(store)
    d = parse_definition({"name": "s", "variant": "long", "bots": ["random", "heuristic"]})
    Tournament(d, store).run()
    assert stored_tournament(store).tournament_id == d.tournament_id
    assert stored_tournament(store, d.tournament_id).tournament_id == d.tournament_id
    unknown = f"^no tournament 'x' \\(stored: {d.tournament_id}\\)$"
    for read in (standings_from_store, verify_store, stored_tournament):
        with pytest.raises(StorageError, match=unknown):
            read(store, "x")
    store.close()
