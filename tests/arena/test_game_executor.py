"""The engine's GameExecutor seam and the Ray executor's parts that need no Ray: the task body
(:func:`play_game_task`) run by a thread-pool stand-in for Ray, what travels with a task, the
fault counts carried from game to game, and the CLI's errors."""

from __future__ import annotations

import concurrent.futures as cf
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nardy.arena.competition import ray_executor
from nardy.arena.competition.ray_executor import RemoteBot, play_game_task, portable
from nardy.arena.competition.schedule import TournamentError, iter_schedule, parse_definition
from nardy.arena.competition.tournament import (
    ClientPlayer,
    EndpointPlayer,
    GameTask,
    Player,
    PythonPlayer,
    Tournament,
)
from nardy.arena.records.storage import SqliteStore
from nardy.arena.tournament_cli import main as cli
from nardy.bots import RandomBot
from nardy.bots.faults import FaultCounter
from nardy.core.record import GameRecord

HERE = Path(__file__).resolve().parent


class ThreadsLikeRay:
    """A GameExecutor doing what RayExecutor does, with threads for workers: tasks get only
    portable data (pickled and unpickled, as Ray would), the driver keeps the fault counters."""

    def __init__(self, workers: int = 3) -> None:
        self.pool = cf.ThreadPoolExecutor(workers)
        self.submitted = 0
        self.stored = 0
        """Counted by the tournament's on_record (called once a game is stored)."""
        self.peak_unstored = 0
        """The most games submitted and not yet stored at once: the back-pressure bound."""

    def count_stored(self, record: GameRecord) -> None:
        self.stored += 1

    def submit_game(
        self,
        task: GameTask,
        players: tuple[Player, Player],
        faults: Mapping[str, FaultCounter],
        stop: threading.Event,
    ) -> cf.Future[GameRecord | None]:
        import pickle

        specs = (portable(players[0]), portable(players[1]))
        snaps = tuple(ray_executor._snapshot(faults[p.name]) for p in players)
        self.submitted += 1
        self.peak_unstored = max(self.peak_unstored, self.submitted - self.stored)
        payload = pickle.dumps((task, specs, snaps)) if not _has_lambda(specs) else None
        args = pickle.loads(payload) if payload is not None else (task, specs, snaps)
        return self.pool.submit(play_game_task, *args)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.pool.shutdown(wait, cancel_futures=cancel_futures)


def _has_lambda(specs: tuple[Any, ...]) -> bool:
    return any(isinstance(s, PythonPlayer) for s in specs)  # Ray uses cloudpickle for those


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "t.db")
    yield s
    s.close()


def _rows(store: SqliteStore, tournament_id: str) -> list[tuple[Any, ...]]:
    out = []
    for g in store.games(tournament_id, records=True):
        assert g.record is not None
        decisions = [
            {k: v for k, v in d.items() if k != "latency_ms"} for d in g.record["decisions"]
        ]
        out.append((g.game_id, g.winner, g.points, g.record["game"], decisions))
    return sorted(out, key=lambda r: r[0])


@pytest.mark.slow  # a tournament run by a game executor
def test_a_game_executor_stores_the_games_of_the_local_run(tmp_path: Path) -> None:
    """Built-in bots and a command bot started by the worker side: the same games as the
    local executor; the engine opens no player itself; the command bot is started once per
    worker process (here: once) and stopped by the worker's exit hook."""
    command = [sys.executable, str(HERE / "per_game_bot.py")]
    d = parse_definition(
        {
            "name": "seam",
            "variant": "long",
            "games": 2,
            "seed": 9,
            "bots": [
                {"name": "heuristic", "builtin": "heuristic", "capacity": 3},
                {"name": "random", "builtin": "random", "capacity": 3},
                {"name": "cmd", "command": command, "capacity": 2},
            ],
        }
    )
    local = SqliteStore(tmp_path / "local.db")
    assert Tournament(d, local, concurrency=3).run().status == "finished"
    seam = SqliteStore(tmp_path / "seam.db")
    executor = ThreadsLikeRay()
    try:
        t = Tournament(d, seam, concurrency=3, executor=executor, on_record=executor.count_stored)
        result = t.run()
        assert result.status == "finished" and result.played == 6 == executor.submitted
        assert executor.peak_unstored == 3  # never more results in flight than the concurrency
        assert len(ray_executor._OPENED) == 1  # one bot process for every game of this worker
        (bot,) = ray_executor._OPENED.values()
        process = bot._process  # type: ignore[attr-defined]
        assert process is not None and process.die_with_parent
    finally:
        ray_executor._close_opened()
    assert process.pid is not None and process._proc.poll() is not None  # stopped
    assert _rows(seam, d.tournament_id) == _rows(local, d.tournament_id)
    local.close()
    seam.close()


def test_python_players_travel_and_clients_cannot(store: SqliteStore) -> None:
    d = parse_definition({"name": "py", "variant": "backgammon", "games": 2, "bots": ["a", "b"]})
    players = {
        "a": PythonPlayer("a", lambda seed: RandomBot(seed)),
        "b": PythonPlayer("b", lambda seed: RandomBot(seed + 1)),
    }
    result = Tournament(d, store, players=players, executor=ThreadsLikeRay()).run()
    assert result.played == 2
    held = ClientPlayer("c", client=object())  # type: ignore[arg-type]
    with pytest.raises(TournamentError, match="connection of this process"):
        portable(held)
    endpoint = portable(EndpointPlayer("e", "10.0.0.1:5000", 2, "secret"))
    assert endpoint == RemoteBot("e", 2, "10.0.0.1:5000", None, "secret")


def test_fault_counts_come_back_to_the_driver() -> None:
    """A game's faults (from its record) are added to the driver's counter; at max_faults the
    bot is disqualified, and the next task starts with that state."""
    d = parse_definition({"name": "f", "variant": "backgammon", "bots": ["heuristic", "random"]})
    t = Tournament(d, SqliteStore(":memory:"))
    task = t._task(next(iter_schedule(d)), None, 1)
    counters = (FaultCounter(), FaultCounter())
    record = GameRecord("backgammon", {}, faults=({"timeout": 2, "crash": 0}, {}))
    ray_executor._count_faults(record, task, counters)
    assert counters[0].counts["timeout"] == 2 and not counters[0].disqualified
    again_record = GameRecord("backgammon", {}, faults=({"illegal": 1}, {}))
    ray_executor._count_faults(again_record, task, counters)
    assert counters[0].disqualified and counters[1].total == 0
    again = ray_executor._counter(ray_executor._snapshot(counters[0]))
    assert again.disqualified and again.total == 3


def test_cli_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["run", "--variant", "long", "--bots", "heuristic,random", "--db", str(tmp_path / "x")]
    wrong = runner.invoke(cli, [*args, "--ray-address", "127.0.0.1:6379"])
    assert wrong.exit_code == 2 and "--ray-address goes with --executor ray" in wrong.output
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    missing = runner.invoke(cli, [*args, "--executor", "ray"])
    assert missing.exit_code == 1
    assert missing.output.strip() == "Error: the Ray executor needs ray: pip install 'nardy[ray]'"
    assert not (tmp_path / "x").exists()  # nothing created


def test_cli_an_address_nobody_listens_on(tmp_path: Path) -> None:
    """Ray itself retries for minutes; the executor says at once that nothing listens there."""
    pytest.importorskip("ray", reason="the Ray executor needs ray: pip install 'nardy[ray]'")
    import socket

    with socket.socket() as s:  # a free port, closed again: nothing listens on it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["run", "--variant", "long", "--bots", "heuristic,random", "--db", str(tmp_path / "x")]
    result = CliRunner().invoke(
        cli, [*args, "--executor", "ray", "--ray-address", f"127.0.0.1:{port}"]
    )
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: cannot connect to Ray at 127.0.0.1:{port}: ")
    assert not (tmp_path / "x").exists()


def test_a_failed_task_is_one_clear_error() -> None:
    """A task that raised on the worker (Ray wraps the exception; ``cause`` is the original)
    and a worker lost for good both fail the run with one line naming the game."""
    d = parse_definition({"name": "e", "variant": "backgammon", "bots": ["heuristic", "random"]})
    t = Tournament(d, SqliteStore(":memory:"))
    task = t._task(next(iter_schedule(d)), None, 1)

    class Wrapped(Exception):
        cause = TournamentError("bot 'x': cannot start /no/such/bot: [Errno 2] No such file")

    executor = ray_executor.RayExecutor("127.0.0.1:1")
    error = executor._explain(task, Wrapped("traceback\n..."))
    assert str(error) == (
        f"game {task.game_id} on the Ray cluster: bot 'x': cannot start /no/such/bot: "
        "[Errno 2] No such file"
    )
    lost = executor._explain(task, RuntimeError("The worker died.\nWorkerCrashedError: gone"))
    assert str(lost) == (
        f"game {task.game_id} failed on the Ray cluster (RuntimeError, 3 retries): "
        "WorkerCrashedError: gone; run again to resume"
    )
