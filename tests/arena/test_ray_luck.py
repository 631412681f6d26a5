"""A luck-adjusted SPRT with a game executor (Ray's seam, no Ray): each game's luck is analysed
in the task that played it, the value travels back with the record and is taken off it before
the record is stored, and the engine's and the ledger's SPRTs are fed it."""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from test_game_executor import ThreadsLikeRay

from nardy.arena.competition.ray_executor import play_game_task
from nardy.arena.competition.schedule import parse_definition
from nardy.arena.competition.sprt_luck import LuckAdjuster
from nardy.arena.competition.standings import standings_from_store
from nardy.arena.competition.tournament import LUCK_FIELD, GameTask, Player, Tournament
from nardy.arena.records.storage import SqliteStore
from nardy.bots.faults import FaultCounter
from nardy.core.record import GameRecord


class LuckyThreads(ThreadsLikeRay):
    """Passes the engine's ``analyse_luck`` to the task, as RayExecutor does."""

    analyse_luck = False

    def submit_game(
        self,
        task: GameTask,
        players: tuple[Player, Player],
        faults: Mapping[str, FaultCounter],
        stop: threading.Event,
    ) -> cf.Future[GameRecord | None]:
        from nardy.arena.competition import ray_executor

        specs = (ray_executor.portable(players[0]), ray_executor.portable(players[1]))
        snaps = tuple(ray_executor._snapshot(faults[p.name]) for p in players)
        return self.pool.submit(play_game_task, task, specs, snaps, self.analyse_luck)


def test_the_luck_is_analysed_where_the_game_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where: list[str] = []

    def stand_in(self: LuckAdjuster, row: Any) -> float:
        where.append(threading.current_thread().name)
        return row.a_points - 0.25 + (row.seed % 7) / 10

    monkeypatch.setattr(LuckAdjuster, "a_points", stand_in)
    d = parse_definition(
        {
            "name": "t",
            "bots": ["heuristic", "random"],
            "variant": "backgammon",
            "games": 4,
            "seed": 5,
            "sprt": {"mode": "points", "mu0": 0, "mu1": 0.1, "on": "luck-adjusted"},
        }
    )
    store = SqliteStore(tmp_path / "t.db")
    executor = LuckyThreads(2)
    t = Tournament(d, store, executor=executor)
    t.run()
    assert executor.analyse_luck  # the engine asked for it
    assert len(where) == 4 and threading.main_thread().name not in where
    rows = sorted(store.games(d.tournament_id, records=True), key=lambda r: r.unit_id)
    assert all(r.record is not None and LUCK_FIELD not in r.record for r in rows)
    (sprt,) = t.tally.sprt.values()
    fed = sorted(
        (stand_in(LuckAdjuster(), rows[i]) + stand_in(LuckAdjuster(), rows[i + 1])) / 2
        for i in (0, 2)
    )
    assert sorted(sprt.counts) == pytest.approx(fed)
    stored = standings_from_store(store, d.tournament_id).pools[0].sprt
    assert stored is not None and stored.llr == pytest.approx(sprt.llr, abs=1e-12)
    store.close()
