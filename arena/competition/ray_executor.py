"""Tournaments on a Ray cluster: ``nardy arena run T.toml --executor ray [--ray-address ADDR]``.

The engine (:class:`nardy.arena.competition.tournament.Tournament`) stays on the driver: it schedules, stores
and rates exactly as with the local executors. Only the games move: each one is a Ray task, a pure
function from its :class:`~nardy.arena.competition.tournament.GameTask` (ids, seed, seats) to its record. No
task writes anything; the driver is the single writer, and stores each record (several that end
together in one transaction) under the key ``(tournament_id, game_id)``, so a game is stored once
whatever Ray does:

* a worker process or node that dies takes its running games with it; Ray runs those tasks again
  elsewhere (``max_retries``), and because the dice and the built-in bots' choices depend only on
  the game's seeds, the rerun returns the same record;
* the driver killed: Ray ends its job (and its tasks); ``nardy arena run`` again resumes from the
  database like a local run: only games not yet stored are submitted;
* back-pressure: the engine never has more than ``concurrency`` games in flight, so the driver
  never holds more than that many unstored results.

Bots: built-in and Python bots travel with the task (a fresh instance per game, seeded as
locally). Endpoint bots are dialled from the worker; a ``command`` bot is started by each worker
process that plays one of its games, kept for that worker's later games, and killed with the
worker (``die_with_parent``). A bot the driver holds a connection to (the arena server's
registered bots) cannot play on a cluster.

Ray is imported only here, and only when the executor is used (``pip install 'nardy[ray]'``).
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import dataclasses
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from nardy.arena.competition.schedule import TournamentDef, TournamentError
from nardy.arena.competition.sprt_luck import LuckAdjuster
from nardy.arena.competition.tournament import (
    LUCK_FIELD,
    BuiltinPlayer,
    CommandPlayer,
    EndpointPlayer,
    GameTask,
    Player,
    PythonPlayer,
    row_from_record,
    run_task_in_thread,
)
from nardy.bots.faults import FAULT_KINDS, FaultCounter, FaultPolicy
from nardy.collector import tune as tune_collector
from nardy.core.record import GameRecord
from nardy.ray_address import unreachable

__all__ = ["RAY_MISSING", "RayExecutor", "play_game_task"]

log = logging.getLogger(__name__)

RAY_MISSING = "the Ray executor needs ray: pip install 'nardy[ray]'"


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise TournamentError(RAY_MISSING) from None
    module: ModuleType = ray  # (untyped where the nardy[ray] extra is not installed)
    return module


# ==================================================================================================
# What travels with a task, and what a worker opens
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class RemoteBot:
    """An endpoint or command bot as a worker opens it (hashable: the worker keeps it open).
    The token travels with the task, as it would be read from the driver's environment; it is
    never stored."""

    name: str
    capacity: int
    endpoint: str | None = None
    command: tuple[str, ...] | None = None
    token: str = ""


PortablePlayer = BuiltinPlayer | PythonPlayer | RemoteBot


def portable(player: Player) -> PortablePlayer:
    """What a Ray task needs to play ``player`` on another machine."""
    if isinstance(player, CommandPlayer):
        return RemoteBot(player.name, player.capacity, None, tuple(player.command), player.token)
    if isinstance(player, EndpointPlayer):
        return RemoteBot(player.name, player.capacity, player.endpoint, None, player.token)
    if isinstance(player, BuiltinPlayer | PythonPlayer):
        return player
    raise TournamentError(
        f"bot {player.name!r} ({type(player).__name__}) is a connection of this process and "
        "cannot play on a Ray cluster; give it an endpoint or a command"
    )


class _WorkerCommandPlayer(CommandPlayer):
    """A command bot started by a Ray worker: killed with it, so a killed worker leaves no
    orphan bot process behind."""

    die_with_parent = True


_OPENED: dict[RemoteBot, EndpointPlayer] = {}
"""The remote bots this worker process has opened: a command bot is started once per worker and
reused by its later games (a cache of processes and connections, not game state)."""
_OPENED_LOCK = threading.Lock()


def _close_opened() -> None:
    with _OPENED_LOCK:
        for player in _OPENED.values():
            try:
                player.close()
            except Exception:  # pragma: no cover - exiting anyway
                log.exception("closing %s failed", player.name)
        _OPENED.clear()


def _worker_player(spec: PortablePlayer) -> Player:
    if not isinstance(spec, RemoteBot):
        return spec
    with _OPENED_LOCK:
        player = _OPENED.get(spec)
        if player is None:
            if spec.command is not None:
                player = _WorkerCommandPlayer(spec.name, spec.command, spec.capacity, spec.token)
            else:
                assert spec.endpoint is not None
                player = EndpointPlayer(spec.name, spec.endpoint, spec.capacity, spec.token)
            player.open()  # TournamentError: the task fails and says why
            if not _OPENED:
                atexit.register(_close_opened)
            _OPENED[spec] = player
    return player


def _counter(snapshot: Mapping[str, Any]) -> FaultCounter:
    counter = FaultCounter()
    counter.counts.update(snapshot["counts"])
    counter.disqualified = bool(snapshot["disqualified"])
    return counter


def _snapshot(counter: FaultCounter) -> dict[str, Any]:
    data = counter.to_json()
    return {"counts": {k: data[k] for k in FAULT_KINDS}, "disqualified": data["disqualified"]}


_ADJUSTER: list[LuckAdjuster] = []
"""The worker process's luck analysis (its nets and caches kept from game to game)."""


def _worker_luck(record: GameRecord, task: GameTask) -> float | None:
    """The game's luck-adjusted points for ``a`` (None for an aborted game, or a record the
    analysis refuses: the driver then analyses it and reports the problem)."""
    row = dataclasses.replace(row_from_record(record, task), record=record.to_json())
    if row.winner is None and row.termination != "draw":
        return None
    if not _ADJUSTER:
        _ADJUSTER.append(LuckAdjuster())
    try:
        return _ADJUSTER[0].a_points(row)
    except ValueError:
        return None


def play_game_task(
    task: GameTask,
    specs: tuple[PortablePlayer, PortablePlayer],
    faults: tuple[Mapping[str, Any], Mapping[str, Any]],
    luck: bool = False,
) -> GameRecord:
    """The body of a game's Ray task: play it, return its record; no side effects beyond the
    worker's cache of open bots. ``faults``: the bots' fault counts so far (a disqualified bot
    stays disqualified); the game's own faults go back in its record. ``luck``: also analyse
    the game for a luck-adjusted SPRT, on this worker, into the record's
    :data:`~nardy.arena.competition.tournament.LUCK_FIELD` tag (which the driver takes off before
    storing)."""
    tune_collector()  # a Ray worker starts with Python's defaults (nardy.collector)
    players = (_worker_player(specs[0]), _worker_player(specs[1]))
    counters = {players[0].name: _counter(faults[0]), players[1].name: _counter(faults[1])}
    record = run_task_in_thread(task, players, counters, threading.Event())
    assert record is not None  # only a stop aborts a game, and a task is never asked to stop
    if luck:
        value = _worker_luck(record, task)
        if value is not None:
            return dataclasses.replace(record, tags_after=(*record.tags_after, (LUCK_FIELD, value)))
    return record


# ==================================================================================================
# The driver's side
# ==================================================================================================


@dataclass(slots=True)
class _Pending:
    future: cf.Future[GameRecord | None]
    task: GameTask
    counters: tuple[FaultCounter, FaultCounter] | None
    """The driver's counters to add the game's faults to (games with a remote bot)."""


class RayExecutor:
    """A :class:`nardy.arena.competition.tournament.GameExecutor` that plays each game as a Ray task.

    ``address``: the cluster to join (``host:port`` of the head, ``ray://host:10001``, ``auto``),
    or None for ``RAY_ADDRESS`` or else a Ray instance started for this process alone.
    ``max_retries``: how often Ray reruns a game whose worker died (then the run fails; run it
    again to resume). ``runtime_env``: Ray's, e.g. ``{"pip": ["my-bots"]}`` for the workers.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        max_retries: int = 3,
        runtime_env: Mapping[str, Any] | None = None,
        num_cpus: int | None = None,
    ) -> None:
        self.address = address
        self.max_retries = max_retries
        self.runtime_env = dict(runtime_env) if runtime_env else None
        self.num_cpus = num_cpus
        """For a Ray instance started here (no address): its CPUs (default: all)."""
        self.analyse_luck = False
        """Whether each game's task also analyses its luck (the engine sets it under a
        luck-adjusted SPRT): the analysis then runs on the workers, not on the driver."""
        self.peak_in_flight = 0
        """The most games this executor had in flight at once (the back-pressure bound)."""
        self._ray: ModuleType | None = None
        self._owns_connection = False
        self._remote: Any = None
        self._pending: dict[Any, _Pending] = {}
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._stop: threading.Event | None = None
        self._closed = False
        self._collector: threading.Thread | None = None
        self._specs: dict[str, PortablePlayer] = {}

    # -- connection ---------------------------------------------------------------------------

    def connect(self) -> None:
        """Join the cluster (once); :class:`TournamentError` if it cannot be reached."""
        if self._ray is not None:
            return
        ray = _ray()
        problem = None if self.address is None else unreachable(self.address)
        if problem is not None:
            raise TournamentError(problem)
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
            if self.runtime_env:
                kwargs["runtime_env"] = self.runtime_env
            if self.address is None and self.num_cpus is not None:
                kwargs["num_cpus"] = self.num_cpus
            try:
                ray.init(address=self.address, **kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = self.address or "a local Ray instance"
                raise TournamentError(f"cannot connect to Ray at {where}: {exc}") from None
            self._owns_connection = True
        self._remote = ray.remote(max_retries=self.max_retries, num_cpus=1)(play_game_task)
        self._ray = ray

    def cluster_cpus(self) -> int:
        """The CPUs of the cluster now (what a default concurrency is sized by)."""
        self.connect()
        assert self._ray is not None
        return int(self._ray.cluster_resources().get("CPU", 1))

    def default_concurrency(self, definition: TournamentDef) -> int:
        """Games in flight when ``--concurrency`` is not given: the definition's, or one per CPU
        of the cluster if that is more."""
        return max(definition.concurrency, self.cluster_cpus())

    # -- GameExecutor ---------------------------------------------------------------------------

    def submit_game(
        self,
        task: GameTask,
        players: tuple[Player, Player],
        faults: Mapping[str, FaultCounter],
        stop: threading.Event,
    ) -> cf.Future[GameRecord | None]:
        self.connect()
        specs = (self._spec(players[0]), self._spec(players[1]))
        white, black = faults[players[0].name], faults[players[1].name]
        remote = isinstance(specs[0], RemoteBot) or isinstance(specs[1], RemoteBot)
        future: cf.Future[GameRecord | None] = cf.Future()
        future.set_running_or_notify_cancel()
        ref = self._remote.remote(
            task, specs, (_snapshot(white), _snapshot(black)), self.analyse_luck
        )
        with self._wake:
            if self._closed:
                raise TournamentError("the Ray executor is shut down")
            self._stop = stop
            self._pending[ref] = _Pending(future, task, (white, black) if remote else None)
            self.peak_in_flight = max(self.peak_in_flight, len(self._pending))
            if self._collector is None:
                self._collector = threading.Thread(
                    target=self._collect, name="nardy-ray-results", daemon=True
                )
                self._collector.start()
            self._wake.notify()
        return future

    def _spec(self, player: Player) -> PortablePlayer:
        spec = self._specs.get(player.name)
        if spec is None:
            spec = self._specs[player.name] = portable(player)
        return spec

    def _collect(self) -> None:
        """Resolve the futures of finished tasks, several at a time, in completion order."""
        ray = self._ray
        assert ray is not None
        while True:
            with self._wake:
                while not self._pending and not self._closed:
                    self._wake.wait(0.5)
                if self._closed:
                    return
                stop = self._stop
                refs = list(self._pending)
            if stop is not None and stop.is_set():
                self._abort(refs)
                continue
            ready, rest = ray.wait(refs, num_returns=1, timeout=0.1)
            if ready and rest:  # whatever else has finished meanwhile, in the same batch
                more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
                ready += more
            if ready:
                self._resolve(ready)

    def _resolve(self, refs: list[Any]) -> None:
        assert self._ray is not None
        try:
            values: list[Any] = self._ray.get(refs)
            outcomes: list[tuple[GameRecord | None, BaseException | None]] = [
                (v, None) for v in values
            ]
        except Exception:  # at least one failed: take them one by one
            outcomes = []
            for ref in refs:
                try:
                    outcomes.append((self._ray.get(ref), None))
                except Exception as exc:
                    outcomes.append((None, exc))
        with self._lock:
            entries = [self._pending.pop(ref) for ref in refs]
        for entry, (record, error) in zip(entries, outcomes, strict=True):
            if error is not None:
                entry.future.set_exception(self._explain(entry.task, error))
                continue
            assert record is not None
            if entry.counters is not None:
                _count_faults(record, entry.task, entry.counters)
            entry.future.set_result(record)

    def _explain(self, task: GameTask, error: BaseException) -> TournamentError:
        cause = getattr(error, "cause", None) or error
        if isinstance(cause, TournamentError):
            return TournamentError(f"game {task.game_id} on the Ray cluster: {cause}")
        lines = str(cause).strip().splitlines()
        return TournamentError(
            f"game {task.game_id} failed on the Ray cluster ({type(error).__name__}, "
            f"{self.max_retries} retries): {lines[-1] if lines else ''}; run again to resume"
        )

    def _abort(self, refs: list[Any]) -> None:
        """The tournament stops: cancel the games in flight; they end unstored (None)."""
        assert self._ray is not None
        with self._lock:
            entries = [self._pending.pop(ref) for ref in refs if ref in self._pending]
        for ref in refs:
            try:
                self._ray.cancel(ref, force=True)
            except Exception:  # already finished, or the worker is gone
                log.debug("cancelling a game task failed", exc_info=True)
        for entry in entries:
            entry.future.set_result(None)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._wake:
            refs = list(self._pending)
            self._closed = True
            self._wake.notify_all()
        if self._collector is not None:
            self._collector.join(5.0)
        if refs and self._ray is not None:
            self._abort(refs)
        if self._owns_connection and self._ray is not None:
            self._ray.shutdown()
            self._owns_connection = False
        self._ray = None


def _count_faults(
    record: GameRecord, task: GameTask, counters: tuple[FaultCounter, FaultCounter]
) -> None:
    """Add a game's faults to the driver's counters (what the shared counters of a local run
    do during the game): a bot that reaches ``max_faults`` is disqualified for later games."""
    policy = FaultPolicy(on_fault=task.on_fault, max_faults=task.max_faults)
    faults = record.faults or ({}, {})
    for colour_faults, counter in zip(faults, counters, strict=True):
        for kind, n in colour_faults.items():
            if kind in FAULT_KINDS:
                for _ in range(int(n)):
                    counter.record(kind, policy)
