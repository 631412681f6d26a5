"""The spectator's standings at scale: read from the ledger, cached, one computation for
requests that arrive together (the figures: benchmarks/measure_standings.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'nardy[web]'")

from nardy.arena.competition.schedule import parse_definition
from nardy.arena.competition.standings import standings_from_records
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import SqliteStore
from nardy.web import data
from nardy.web.data import Spectator


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    d = parse_definition(
        {"name": "sf", "bots": ["heuristic", "random"], "variant": "backgammon", "games": 4}
    )
    path = tmp_path_factory.mktemp("sf") / "sf.db"
    store = SqliteStore(path)
    Tournament(d, store).run()
    store.close()
    return path, d.tournament_id


def test_requests_that_arrive_together_share_one_computation(
    db: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, tid = db
    spectator = Spectator(str(path))
    calls: list[float] = []
    compute = Spectator._compute

    def slow(self: Spectator, view: Any) -> Any:
        calls.append(time.monotonic())
        time.sleep(0.3)  # long enough for every request to arrive meanwhile
        return compute(self, view)

    monkeypatch.setattr(Spectator, "_compute", slow)
    answers: list[Any] = []
    threads = [
        threading.Thread(target=lambda: answers.append(spectator.standings(tid))) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(answers) == 8
    assert all(a is answers[0] for a in answers)  # the one result, shared
    # cached until the public count or status changes
    monkeypatch.setattr(data, "VIEW_TTL_S", 0.0)
    assert spectator.standings(tid) is answers[0] and len(calls) == 1
    assert answers[0].pools == standings_from_records(spectator.store, tid).pools
    spectator.close()


def test_the_standings_never_read_a_record(
    db: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What made a 5,000-game page take seconds: every record parsed. Now none is."""
    path, tid = db

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a record was read")

    spectator = Spectator(str(path))
    monkeypatch.setattr(SqliteStore, "find_game", refuse)
    original = SqliteStore.games

    def games(self: SqliteStore, tournament_id: str, *, records: bool = False) -> Any:
        assert not records, "records were read"
        return original(self, tournament_id, records=records)

    monkeypatch.setattr(SqliteStore, "games", games)
    standings = spectator.standings(tid)
    assert standings.games_stored == 4 and spectator.points_se(tid)
    spectator.close()
