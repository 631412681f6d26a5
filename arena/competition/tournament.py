"""The tournament engine: schedule, run, store, rate, and tell subscribers what happens.

::

    from nardy.arena.competition.schedule import load_definition
    from nardy.arena.records.storage import open_store
    from nardy.arena.competition.tournament import Tournament

    t = Tournament(load_definition("tournament.toml"), open_store("arena.db"))
    t.subscribe(print)                     # every TournamentEvent, as it happens
    result = t.run()                       # resumes if the database already holds some games
    result.standings.to_json()

Bots plug in through the small :class:`Player` protocol: :class:`BuiltinPlayer` (a
:func:`nardy.bots.make_bot` bot, in-process), :class:`EndpointPlayer` (a gRPC ``BotService``
through :class:`nardy.arena.clients.bot_client.GrpcBotClient`), :class:`CommandPlayer` (a ``BotService``
program the engine starts itself), :class:`ClientPlayer` (a bot the caller already has a client
for: the arena server's registered bots) and :class:`PythonPlayer` (any
:class:`~nardy.bots.Bot` factory, for tests and embedding). Every game is played by the one game
loop (:class:`nardy.bots.loop.GameLoop`): a game between two in-process bots with the fault policy
and no clock (:func:`play_local_game`, in a worker process when both are built-ins), a game with a
remote bot through the arena's runner (:func:`nardy.arena.clients.runner.run_game`: the clock too), where
an in-process bot sits in its seat as itself. Both write the same record, and both start a later
game of a match with the colour :meth:`nardy.core.match.Match.starter` names.

Concurrency: up to ``concurrency`` games at once, never more than a bot's ``capacity`` for any
bot; units are started in schedule order as capacity allows. Built-in-only tournaments run games
in worker processes (real parallelism); others in threads. Only the engine's thread writes to the
store, each game in one transaction as soon as it ends, so a killed run resumes where it stopped.

The live view (for ``WatchTournament``): :meth:`Tournament.subscribe` and :meth:`Tournament.watch`
deliver :class:`TournamentEvent` objects: ``tournament_started``, ``game_started``, ``game_ended``,
``standings_updated`` (at most every ``standings_interval`` seconds, and at the end),
``sprt_updated`` and, last, ``tournament_ended``.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import json
import logging
import multiprocessing
import os
import queue
import random
import shlex
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from nardy.arena.clients.bot_client import BotClient, GrpcBotClient
from nardy.arena.clients.local import LocalBotProcess, LocalBotStartError
from nardy.arena.clients.runner import Seat, played_record, run_game
from nardy.arena.competition.schedule import (
    BotEntry,
    DefinitionError,
    ScheduledUnit,
    TournamentDef,
    TournamentError,
    UnitStream,
    unit_streams,
    variants_refused,
)
from nardy.arena.competition.standings import (
    Standings,
    Tally,
    add_to_match,
)
from nardy.arena.records import audit
from nardy.arena.records.storage import GameRow, StorageError, Store
from nardy.arena.records.verify import ReplayReport, cached_variant, replay_record
from nardy.bots import Bot, builtin_bot_names, is_builtin_bot
from nardy.bots.faults import BotError, FaultCounter, FaultPolicy
from nardy.bots.loop import GameLoop, TimeControl
from nardy.bots.registry import BotMaker
from nardy.collector import tune as tune_collector
from nardy.core.dice import SeededDice
from nardy.core.errors import NardyError
from nardy.core.game import (
    WHITE,
    CubeSettings,
    Game,
    cube_settings_for,
)
from nardy.core.match import Match
from nardy.core.plugins import load_variant
from nardy.core.record import GameRecord, MatchInfo, Setup, from_json
from nardy.core.record import Player as RecordPlayer

__all__ = [
    "LUCK_FIELD",
    "BuiltinPlayer",
    "ClientPlayer",
    "CommandPlayer",
    "EndpointPlayer",
    "GameExecutor",
    "GameSummary",
    "GameTask",
    "Player",
    "PythonPlayer",
    "ReplayReport",
    "RunResult",
    "Tournament",
    "TournamentEvent",
    "check_definition",
    "play_local_game",
    "replay_record",
    "typed_record",
]

log = logging.getLogger(__name__)

EventKind = Literal[
    "tournament_started",
    "game_started",
    "game_ended",
    "standings_updated",
    "sprt_updated",
    "tournament_ended",
]
Status = Literal["pending", "running", "finished", "stopped", "interrupted", "failed"]


# ==================================================================================================
# Players
# ==================================================================================================


@runtime_checkable
class Player(Protocol):
    """A bot as the tournament sees it.

    ``new_bot(seed)`` returns a fresh in-process :class:`~nardy.bots.Bot` for one game (so
    that its random choices depend on the game's seed only), or ``None`` for a remote bot, which is
    then reached through ``client()``.
    """

    @property
    def name(self) -> str: ...

    @property
    def capacity(self) -> int: ...

    def open(self) -> None:
        """Connect / check the bot before the first game; raise :class:`TournamentError`."""

    def close(self) -> None: ...

    def info(self) -> dict[str, str]:
        """What the records say about the bot (``name``, ``kind``, version ...)."""

    def new_bot(self, seed: int) -> Bot | None: ...

    def client(self) -> BotClient:
        """The protocol client of a remote bot (shared by its games; must be thread-safe)."""


class BuiltinPlayer:
    """An in-process bot by :func:`~nardy.bots.make_bot` name (``make_bot(builtin, seed)``), a
    fresh instance per game: a built-in (``heuristic``, ``neural:FILE``), another installed bot,
    or ``module:Class`` of a Python bot, as ``nardy play --bots`` takes them. The name is
    resolved once (:class:`~nardy.bots.BotMaker`), not read from the packages' metadata per game."""

    def __init__(self, name: str, builtin: str, capacity: int) -> None:
        self._maker = _bot_maker(name, builtin)
        self.name = name
        self.builtin = builtin
        self.capacity = capacity

    def open(self) -> None:
        return None

    def close(self) -> None:
        return None

    def info(self) -> dict[str, str]:
        return {"bot_id": self.name, "name": self.name, "kind": "builtin", "builtin": self.builtin}

    def new_bot(self, seed: int) -> Bot:
        return self._maker(seed)

    def client(self) -> BotClient:  # pragma: no cover - never remote
        raise TournamentError(f"{self.name} is an in-process bot")


class PythonPlayer:
    """Any in-process bot: ``factory(seed)`` makes the bot of one game."""

    def __init__(
        self,
        name: str,
        factory: Callable[[int], Bot],
        capacity: int = 2,
        description: str = "python",
    ) -> None:
        self.name = name
        self.factory = factory
        self.capacity = capacity
        self.description = description

    def open(self) -> None:
        return None

    def close(self) -> None:
        return None

    def info(self) -> dict[str, str]:
        return {"bot_id": self.name, "name": self.name, "kind": self.description}

    def new_bot(self, seed: int) -> Bot:
        return self.factory(seed)

    def client(self) -> BotClient:  # pragma: no cover - never remote
        raise TournamentError(f"{self.name} is an in-process bot")


class EndpointPlayer:
    """A bot server (``nardy.bot.v1.BotService``) at ``host:port``."""

    kind = "endpoint"

    def __init__(self, name: str, endpoint: str, capacity: int, token: str = "") -> None:
        self.name = name
        self.endpoint = endpoint
        self.capacity = capacity
        self.token = token
        """The token its calls carry (empty: none); a Ray worker plays it with the same."""
        self._client: GrpcBotClient | None = None
        self._info: dict[str, str] = {"bot_id": name, "name": name, "kind": self.kind}
        self.declared: tuple[str, ...] = ()
        """The variants its ``GetInfo`` lists (empty: any), known once it is opened."""
        if endpoint:
            self._info["endpoint"] = endpoint

    def _connect(self, address: str, failure: str) -> GrpcBotClient:
        """A client of the bot at ``address`` that has answered GetInfo (its name and version
        go into the record); raises :class:`TournamentError` with ``failure`` otherwise."""
        client = GrpcBotClient(address, self.token)
        try:
            info = client.get_info(timeout=10.0)
        except BotError as exc:
            client.close()
            raise TournamentError(f"bot {self.name!r} {failure}: {exc}") from None
        if info.name:
            self._info["bot_name"] = info.name
        if info.version:
            self._info["version"] = info.version
        self.declared = tuple(info.variants)
        return client

    def open(self) -> None:
        self._client = self._connect(self.endpoint, f"at {self.endpoint} does not answer")

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def info(self) -> dict[str, str]:
        return dict(self._info)

    def new_bot(self, seed: int) -> None:
        return None

    def client(self) -> BotClient:
        if self._client is None:
            raise TournamentError(f"bot {self.name!r} is not connected")
        return self._client


class CommandPlayer(EndpointPlayer):
    """A ``BotService`` process the engine starts for the run (:class:`nardy.arena.clients.local.
    LocalBotProcess`: it must print ``LISTENING host:port``; restarted if it crashes) and stops
    after it. With a token, the process gets it as ``NARDY_BOT_TOKEN`` and calls carry it."""

    kind = "command"
    die_with_parent = False
    """Whether the bot process is killed when the process that started it dies."""

    def __init__(self, name: str, command: Sequence[str], capacity: int, token: str = "") -> None:
        super().__init__(name, "", capacity, token)
        self.command = list(command)
        self._process: LocalBotProcess | None = None
        self._info["command"] = shlex.join(self.command)

    def open(self) -> None:
        env = {"NARDY_BOT_TOKEN": self.token} if self.token else None
        process = LocalBotProcess(self.command, env=env, die_with_parent=self.die_with_parent)
        try:
            address = process.start()
        except (LocalBotStartError, OSError) as exc:
            process.stop()
            raise TournamentError(
                f"bot {self.name!r}: cannot start {shlex.join(self.command)}: {exc}"
            ) from None
        try:
            client = self._connect(address, f"started at {address} but does not answer")
        except TournamentError:
            process.stop()
            raise
        process.on_address = client.retarget
        self._process, self._client = process, client
        self.endpoint = address
        self._info["endpoint"] = address

    def close(self) -> None:
        super().close()
        if self._process is not None:
            self._process.stop()
            self._process = None


class ClientPlayer:
    """A remote bot the caller already has a :class:`~nardy.arena.clients.bot_client.BotClient` for
    (e.g. a bot registered with the arena server, over either transport). Not closed here."""

    def __init__(
        self, name: str, client: BotClient, capacity: int = 1, info: Mapping[str, str] | None = None
    ) -> None:
        self.name = name
        self.capacity = capacity
        self._client = client
        self._info = {"bot_id": name, "name": name, "kind": "client", **dict(info or {})}

    def open(self) -> None:
        return None

    def close(self) -> None:
        return None

    def info(self) -> dict[str, str]:
        return dict(self._info)

    def new_bot(self, seed: int) -> None:
        return None

    def client(self) -> BotClient:
        return self._client


def _bot_maker(name: str, builtin: str) -> BotMaker:
    """The maker of the entry ``name``'s bot ``builtin``, resolved now: an unknown bot, or a
    ``module:Class`` whose module cannot be imported, is a :class:`DefinitionError` before the
    first game. Any name :func:`~nardy.bots.make_bot` takes is accepted (``nardy play`` takes
    the same), so a Python bot needs no ``command`` running ``nardy bot serve`` around it."""
    maker = BotMaker(builtin)
    try:
        maker.check()
        if not is_builtin_bot(builtin):  # a Python bot: made once now, as check_builtins does
            maker(0)  # for the built-ins, so that one that cannot start fails up front
    except ValueError as exc:
        if ":" in builtin or is_builtin_bot(builtin):  # a Python bot or a built-in's argument
            raise DefinitionError(f"bot {name!r}: {exc}") from None
        known = ", ".join(builtin_bot_names())
        raise DefinitionError(
            f"bot {name!r}: unknown builtin {builtin!r} (known: {known}, or module:Class of a "
            "Python bot)"
        ) from None
    if maker.interactive:
        raise DefinitionError(
            f"bot {name!r}: {builtin!r} is a person at a terminal, and a tournament has none to "
            f"ask; play one with `nardy play --bots {builtin},…` or the web's Play page"
        )
    return maker


def player_for(entry: BotEntry) -> Player:
    """The player of one definition entry (an endpoint's token is read from its variable)."""
    if entry.builtin is not None:
        return BuiltinPlayer(entry.name, entry.builtin, entry.capacity)
    token = os.environ.get(entry.token_env, "") if entry.token_env else ""
    if entry.token_env and not token:
        raise DefinitionError(
            f"bot {entry.name!r}: environment variable {entry.token_env} is not set"
        )
    if entry.command is not None:
        return CommandPlayer(entry.name, entry.command, entry.capacity, token)
    assert entry.endpoint is not None
    return EndpointPlayer(entry.name, entry.endpoint, entry.capacity, token)


def check_definition(definition: TournamentDef, *, given: Sequence[str] = ()) -> None:
    """Check what parsing cannot: variants, their options, built-in bot names (except for the
    bots in ``given``, whose players are supplied by the caller)."""
    for pool in definition.pools:
        try:
            variant = load_variant(pool.variant, dict(pool.options))
        except (NardyError, ValueError) as exc:
            raise DefinitionError(f"variant {pool.label!r}: {exc}") from None
        if pool.match_length is not None and variant.options.get("match_length") is None:
            raise DefinitionError(f"variant {pool.label!r}: match_length is not an option of it")
        if variant.is_match_variant and pool.match_length is None:
            raise DefinitionError(
                f"variant {pool.label!r} is played only as a match "
                f"({' → '.join(variant.info.cycle)}; a whole match is one unit): give match_length"
            )
    for entry in definition.bots:
        if entry.name not in given and entry.builtin is not None:
            _bot_maker(entry.name, entry.builtin)


# ==================================================================================================
# Games
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class GameTask:
    """Everything needed to play one scheduled game (picklable, for worker processes)."""

    tournament_id: str
    unit: ScheduledUnit
    game_no: int
    variant: str
    options: dict[str, Any]
    starter: int | None
    cube: dict[str, Any]
    score: tuple[int, int] = (0, 0)
    """Match score before the game, (White, Black)."""
    crawford: bool = False
    post_crawford: bool = False
    per_decision: float = 5.0
    reserve: float = 0.0
    on_fault: Literal["forfeit", "random"] = "forfeit"
    max_faults: int = 3
    builtins: tuple[str | None, str | None] = (None, None)
    """Built-in names of (White, Black) when both are built-ins (process workers rebuild them)."""

    @property
    def game_id(self) -> str:
        return self.unit.game_id(self.game_no)

    @property
    def seed(self) -> int:
        return self.unit.game_seed(self.game_no)

    @property
    def white(self) -> str:
        return self.unit.white

    @property
    def black(self) -> str:
        return self.unit.black

    def bot_seed(self, colour: int) -> int:
        return self.unit.bot_seed(self.white if colour == WHITE else self.black, self.game_no)

    def match_info(self) -> MatchInfo:
        """Where the game stands in its unit (the unit is its match: ``match_id``)."""
        return MatchInfo(
            self.unit.match_length or 0,
            self.score,
            self.game_no,
            self.crawford,  # post-Crawford follows from these (MatchInfo.post_crawford)
            self.unit.unit_id,
        )

    def tags(self) -> tuple[tuple[str, Any], ...]:
        """The tournament's fields of the game's record, in the order it writes them."""
        unit = self.unit
        return (
            ("tournament_id", self.tournament_id),
            ("pool", unit.pool),
            ("unit_id", unit.unit_id),
            ("pair_id", unit.pair_id),
            ("round", unit.round),
            ("leg", unit.leg),
        )

    def record_setup(self) -> Setup:
        """How the game was set up (stored in its record; replays use it)."""
        return Setup(self.starter, CubeSettings(**self.cube), (self.bot_seed(0), self.bot_seed(1)))

    def annotate(self, record: GameRecord | Mapping[str, Any]) -> GameRecord:
        """``record`` (typed, or its JSON line's dict) with the tournament's fields: its tags,
        where it stands in its unit and its setup."""
        return dataclasses.replace(
            typed_record(record),
            match=self.match_info(),
            setup=self.record_setup(),
            tags=self.tags(),
        )


def typed_record(record: GameRecord | Mapping[str, Any]) -> GameRecord:
    """The kernel's record, read through its JSON codec when an executor hands it over as a
    JSON line's dict (:func:`nardy.core.record.from_json`)."""
    return record if isinstance(record, GameRecord) else from_json(record)


def play_local_game(
    task: GameTask, bots: tuple[Bot, Bot], infos: tuple[dict[str, str], dict[str, str]]
) -> GameRecord:
    """Play one game between two in-process bots; return its record.

    The one game loop (:class:`nardy.bots.loop.GameLoop`) plays it with the task's fault policy
    and no clock: a bot that raises, or answers something the rules do not allow, commits a fault
    and forfeits the game (``on_fault="forfeit"``) or a random legal answer is played for it
    (``"random"``). In-process bots are not timed out (their latency is recorded). Each bot is
    told the score before the game (None in money play), as ``nardy play`` tells it: a bot weighs
    its cube by it (the built-in bots turn no dead cube, ``Bot.dead_cube``).
    """
    variant = cached_variant(task.variant, task.options)
    game = Game(
        variant, SeededDice(task.seed), starter=task.starter, cube=CubeSettings(**task.cube)
    )
    started = time.time()
    played = GameLoop(
        game,
        bots,
        names=(infos[0]["name"], infos[1]["name"]),
        # No fault counters: a local game counts its own faults only (no disqualification).
        policy=FaultPolicy(on_fault=task.on_fault, max_faults=task.max_faults),
        fallback=random.Random(f"{task.seed}:{task.game_id}:fallback"),
        match=(task.unit.match_length, task.score),
    ).play()
    return played_record(
        played,
        game_id=task.game_id,
        seed=task.seed,
        players=(
            RecordPlayer(infos[0]["name"], infos[0]),
            RecordPlayer(infos[1]["name"], infos[1]),
        ),
        match=task.match_info(),
        started=started,
        setup=task.record_setup(),
        tags=task.tags(),
    )


def _worker_init(parent: int) -> None:
    """Worker-process initializer. Ctrl-C is the engine's business (it stops the pool), so
    workers ignore SIGINT; and they exit when the engine's process is gone (e.g. SIGKILLed),
    as they would otherwise wait for tasks forever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tune_collector()  # as the nardy command that spawned it (a spawned child starts afresh)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="nardy-parent-watch", daemon=True).start()


_WORKER_MAKERS: dict[str, BotMaker] = {}
"""A pool worker's bot makers by name: each name is resolved once per worker process."""


def _worker_bot(name: str, seed: int) -> Bot:
    maker = _WORKER_MAKERS.get(name)
    if maker is None:
        maker = _WORKER_MAKERS[name] = BotMaker(name)
    return maker(seed)


def _run_task_in_worker(task: GameTask) -> GameRecord:
    """Process-pool entry point: both bots are built-ins, rebuilt here from their names."""
    white, black = task.builtins
    assert white is not None and black is not None
    bots = (_worker_bot(white, task.bot_seed(0)), _worker_bot(black, task.bot_seed(1)))
    infos = (
        {"bot_id": task.white, "name": task.white, "kind": "builtin", "builtin": white},
        {"bot_id": task.black, "name": task.black, "kind": "builtin", "builtin": black},
    )
    return play_local_game(task, bots, infos)


def _play_runner_game(
    task: GameTask, players: tuple[Player, Player], faults: Mapping[str, Any], stop: threading.Event
) -> GameRecord | None:
    """A game with at least one remote bot, through :func:`nardy.arena.clients.runner.run_game`.
    Returns None when the game was aborted because the tournament is stopping."""
    variant = cached_variant(task.variant, task.options)
    seats = []
    for colour, player in enumerate(players):
        # An in-process bot sits in its seat as itself (the same decider protocol as the
        # remote one's client), on the same clock.
        bot = player.new_bot(task.bot_seed(colour))
        info = player.info()
        seats.append(
            Seat(
                bot_id=player.name,
                name=info.get("name") or player.name,
                client=player.client() if bot is None else None,
                faults=faults[player.name],
                bot=bot,
                info=info,
            )
        )
    record = run_game(
        variant,
        (seats[0], seats[1]),
        game_id=task.game_id,
        seed=task.seed,
        dice=SeededDice(task.seed),
        match=task.match_info(),
        time_control=TimeControl(per_decision=task.per_decision, reserve=task.reserve),
        policy=FaultPolicy(on_fault=task.on_fault, max_faults=task.max_faults),
        cube=CubeSettings(**task.cube),
        stop=stop,
        starter=task.starter,
        setup=task.record_setup(),
        tags=task.tags(),
    )
    if record.outcome is not None and record.outcome.termination == "aborted" and stop.is_set():
        return None
    return record


def run_task_in_thread(
    task: GameTask, players: tuple[Player, Player], faults: Mapping[str, Any], stop: threading.Event
) -> GameRecord | None:
    """Thread-pool entry point (and a Ray worker's, :mod:`nardy.arena.competition.ray_executor`): the record, or
    None for a game aborted by a stop."""
    bots = (players[0].new_bot(task.bot_seed(0)), players[1].new_bot(task.bot_seed(1)))
    if bots[0] is not None and bots[1] is not None:
        return play_local_game(task, (bots[0], bots[1]), (players[0].info(), players[1].info()))
    return _play_runner_game(task, players, faults, stop)


def row_from_record(record: GameRecord | Mapping[str, Any], task: GameTask) -> GameRow:
    """The storage row of a finished game (without its record's JSON)."""
    outcome = typed_record(record).outcome
    winner = None if outcome is None else outcome.winner
    return GameRow.of_unit(
        task.tournament_id,
        task.unit,
        task.game_no,
        winner=winner,
        points=outcome.points if outcome is not None and winner is not None else 0,
        termination="aborted" if outcome is None else outcome.termination,
        finished=time.time(),
    )


# ==================================================================================================
# Events
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class GameSummary:
    """A game in an event: ids, seats and (when ended) its outcome."""

    game_id: str
    match_id: str
    pool: str
    white: str
    black: str
    outcome: dict[str, Any] | None = None
    """The runner's outcome JSON: winner (colour name), points, multiplier, termination, reason."""
    decisions: int = 0

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class TournamentEvent:
    """One event of a running tournament; ``sequence`` counts from 1 within a run."""

    kind: EventKind
    sequence: int
    time: float
    tournament_id: str
    game: GameSummary | None = None
    standings: Standings | None = None
    status: str | None = None
    detail: str = ""
    """tournament_started: e.g. "resuming: 12 of 40 games stored"; sprt_updated: the status line."""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "sequence": self.sequence,
            "time": self.time,
            "tournament_id": self.tournament_id,
            "game": None if self.game is None else self.game.to_json(),
            "standings": None if self.standings is None else self.standings.to_json(),
            "status": self.status,
            "detail": self.detail,
        }


class _RecordsFile:
    """Game records as JSON lines, appended (and flushed) as games are stored."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: Any = None

    def sync(self, store: Store, tournament_id: str) -> None:
        """Make the file hold every stored game: drop a torn last line, append missing ones."""
        present: set[str] = set()
        if self.path.exists():
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):
                cut = data.rfind(b"\n") + 1
                with self.path.open("r+b") as f:
                    f.truncate(cut)
                data = data[:cut]
            for line in data.splitlines():
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict) and obj.get("tournament_id") == tournament_id:
                    present.add(str(obj.get("game_id")))
        self._file = self.path.open("a", encoding="utf-8")
        missing = [g.game_id for g in store.games(tournament_id) if g.game_id not in present]
        for game_id in missing:
            row = store.find_game(game_id, tournament_id)
            assert row.record is not None
            self.write(row.record)

    def write(self, record: Mapping[str, Any]) -> None:
        self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


# ==================================================================================================
# The engine
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class RunResult:
    status: Status
    detail: str
    standings: Standings
    played: int
    """Games played (and stored) by this run."""
    skipped: int
    """Games found already stored at the start (resumed)."""


LUCK_FIELD = "luck_adjusted_a"
"""A tag a :class:`GameExecutor` may add to a record under a luck-adjusted SPRT: the game's
luck-adjusted points for ``a``, analysed where the game ran (one whose ``analyse_luck`` attribute
the engine sets to True does: :class:`nardy.arena.competition.ray_executor.RayExecutor`). The engine takes it
off before storing the record, and analyses the game itself when it is absent."""


@runtime_checkable
class GameExecutor(Protocol):
    """Plays games away from the engine's process (:class:`nardy.arena.competition.ray_executor.RayExecutor`).

    It gets the players unopened (it opens them where the games run, e.g. starts a ``command``
    bot on the node that plays) and the engine's fault counters (to carry a bot's faults from
    game to game); ``submit_game`` returns a future of the game's record (the kernel's
    :class:`~nardy.core.record.GameRecord`, or its JSON line's dict), or of None for a game
    aborted because ``stop`` was set. The engine stays the only writer: it stores each record.
    """

    def submit_game(
        self,
        task: GameTask,
        players: tuple[Player, Player],
        faults: Mapping[str, FaultCounter],
        stop: threading.Event,
    ) -> cf.Future[GameRecord | Mapping[str, Any] | None]: ...

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None: ...


class _InlineExecutor(cf.Executor):
    """Runs each task at submit time (concurrency 1: no threads, no processes)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            future.set_exception(exc)
        return future


class Tournament:
    """Runs (or resumes) one tournament into a store."""

    def __init__(
        self,
        definition: TournamentDef,
        store: Store,
        *,
        players: Mapping[str, Player] | None = None,
        records: str | Path | None = None,
        concurrency: int | None = None,
        executor: Literal["auto", "inline", "thread", "process"] | GameExecutor = "auto",
        standings_interval: float = 0.5,
        faults: Mapping[str, FaultCounter] | None = None,
        on_record: Callable[[GameRecord], None] | None = None,
    ) -> None:
        """:param players: players for some bots of the definition (the others are built from
            their entries: :func:`player_for`).
        :param faults: fault counters of some remote bots, shared with the caller (an arena
            counts a bot's faults over all its games); the others get fresh ones per run.
        :param on_record: called in the engine's thread with each game's record once stored.
        :param executor: where games run: in this process (``auto``: worker processes for
            built-in bots only, threads otherwise; ``inline``, ``thread``, ``process``) or a
            :class:`GameExecutor` (e.g. a Ray cluster), which opens the players itself.
        """
        check_definition(definition, given=list(players or ()))
        self.definition = definition
        self.store = store
        self.tournament_id = definition.tournament_id
        self.concurrency = concurrency or definition.concurrency
        if self.concurrency < 1:
            raise DefinitionError("concurrency must be at least 1")
        given = dict(players or {})
        unknown = sorted(set(given) - {b.name for b in definition.bots})
        if unknown:
            raise DefinitionError(f"players for unknown bots: {', '.join(unknown)}")
        self.players: dict[str, Player] = {
            b.name: given[b.name] if b.name in given else player_for(b) for b in definition.bots
        }
        self._builtin_only = all(isinstance(p, BuiltinPlayer) for p in self.players.values())
        self.executor_kind = executor
        self.records_path = Path(records) if records is not None else None
        self.standings_interval = standings_interval
        self.tally = Tally(definition)
        self.status: Status = "pending"
        self.detail = ""
        self._lock = threading.Lock()
        self._tally_lock = threading.Lock()
        self._subscribers: list[Callable[[TournamentEvent], None]] = []
        self._history: list[TournamentEvent] = []
        self._sequence = 0
        self._stop = threading.Event()
        self._drain = threading.Event()
        self._given_faults = dict(faults or {})
        self._faults: dict[str, FaultCounter] = {}
        self.on_record = on_record
        self.dice: audit.DiceAudit | None = None
        """The public view of the dice commitment (:mod:`nardy.arena.records.audit`), set by :meth:`run`."""

    @property
    def units_total(self) -> int:
        """Games (matches) scheduled in all."""
        return self.tally.units_total

    # -- events ---------------------------------------------------------------------------------

    def subscribe(
        self, callback: Callable[[TournamentEvent], None], *, replay: bool = False
    ) -> Callable[[], None]:
        """Call ``callback(event)`` for every event from now on (first every past event, with
        ``replay``). Callbacks run in the engine's thread and must be quick; an exception in one
        is logged and ignored. Returns a function that unsubscribes."""
        with self._lock:
            past = list(self._history) if replay else []
            self._subscribers.append(callback)
        for event in past:
            self._safe_call(callback, event)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def watch(
        self,
        *,
        replay: bool = False,
        timeout: float | None = None,
        until: Callable[[], bool] | None = None,
    ) -> Iterator[TournamentEvent]:
        """Iterate over events as they happen (blocking), until ``tournament_ended`` — the shape
        a streaming RPC wants. With ``replay`` past events come first. ``timeout``: give up after
        that many seconds without an event. ``until``: stop as soon as it returns true (checked
        at least every 0.2 s; e.g. "the RPC was cancelled")."""
        q: queue.Queue[TournamentEvent] = queue.Queue()
        with self._lock:
            past = list(self._history) if replay else []
            ended = any(e.kind == "tournament_ended" for e in self._history)
            if not ended:
                self._subscribers.append(q.put)
        try:
            for event in past:
                yield event
                if event.kind == "tournament_ended":
                    return
            if ended:
                return
            idle_since = time.monotonic()
            while True:
                if until is not None and until():
                    return
                wait = 0.2 if until is not None else timeout
                if timeout is not None and wait is not None:
                    wait = min(wait, max(0.0, idle_since + timeout - time.monotonic()))
                try:
                    event = q.get(timeout=wait)
                except queue.Empty:
                    if timeout is not None and time.monotonic() - idle_since >= timeout:
                        return
                    continue
                idle_since = time.monotonic()
                if replay and event.sequence <= (past[-1].sequence if past else 0):
                    continue
                yield event
                if event.kind == "tournament_ended":
                    return
        finally:
            with self._lock:
                if q.put in self._subscribers:
                    self._subscribers.remove(q.put)

    @staticmethod
    def _safe_call(callback: Callable[[TournamentEvent], None], event: TournamentEvent) -> None:
        try:
            callback(event)
        except Exception:
            log.exception("tournament event subscriber failed")

    def _emit(self, kind: EventKind, **fields: Any) -> TournamentEvent:
        with self._lock:
            self._sequence += 1
            event = TournamentEvent(kind, self._sequence, time.time(), self.tournament_id, **fields)
            self._history.append(event)
            subscribers = list(self._subscribers)
        for callback in subscribers:
            self._safe_call(callback, event)
        return event

    @property
    def history(self) -> list[TournamentEvent]:
        with self._lock:
            return list(self._history)

    # -- control --------------------------------------------------------------------------------

    def stop(self, *, finish_running: bool = False) -> None:
        """Ask a running :meth:`run` to stop: no new games; remote games in progress are
        aborted (not stored), or with ``finish_running`` played to their end and stored (a
        later plain :meth:`stop` still aborts them); the run returns with status
        ``interrupted`` (unless nothing was left to play)."""
        if finish_running:
            self._drain.set()
        else:
            self._stop.set()

    def prepare(self) -> audit.DiceAudit:
        """Store the tournament (or check the stored one) and its dice commitment, and return
        the commitment's public view. :meth:`run` starts with it; call it before to publish the
        commitment before the first game is played."""
        d = self.definition
        self.store.open_tournament(
            self.tournament_id, d.name, d.to_json(), d.identity(), self.units_total
        )
        self.dice = audit.commit(self.store, self.tournament_id, d.seed)
        return self.dice

    def reveal_dice(self) -> audit.DiceAudit:
        """Publish the seed and salt (:func:`nardy.arena.records.audit.reveal`): called when the
        tournament has finished or its SPRT decided, and by whoever cancels it for good."""
        self.dice = audit.reveal(self.store, self.tournament_id, self.definition.seed)
        return self.dice

    def standings(self) -> Standings:
        """The standings now (safe to call from any thread while the tournament runs)."""
        with self._tally_lock:
            return self.tally.standings(
                tournament_id=self.tournament_id, status=self.status, detail=self.detail
            )

    # -- running --------------------------------------------------------------------------------

    def _make_executor(self) -> cf.Executor | GameExecutor:
        kind = self.executor_kind
        if isinstance(kind, GameExecutor):
            return kind
        if kind == "auto":
            if self.concurrency == 1:
                kind = "inline"
            else:
                kind = "process" if self._builtin_only else "thread"
        if kind == "inline":
            return _InlineExecutor()
        if kind == "process":
            if not self._builtin_only:
                raise TournamentError("worker processes need built-in bots only")
            workers = min(self.concurrency, os.cpu_count() or 1)
            return cf.ProcessPoolExecutor(
                workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_init,
                initargs=(os.getpid(),),
            )
        return cf.ThreadPoolExecutor(self.concurrency, thread_name_prefix="nardy-game")

    def _task(self, unit: ScheduledUnit, match: Match | None, game_no: int) -> GameTask:
        d = self.definition
        pool = d.pool(unit.pool)
        variant = cached_variant(pool.variant, pool.options)
        if match is None:
            cube = cube_settings_for(variant, match_length=None)
            starter = WHITE if variant.rules.turn.opening == "white_starts" else None
            score, crawford, post = (0, 0), False, False
        else:
            cube = match.cube_settings()
            starter = match.starter()
            score = (match.score[0], match.score[1])
            crawford = match.crawford_game
            n = match.length or 0
            # Someone is at n-1 and this is not the Crawford game: it has been played.
            post = not crawford and n > 1 and max(match.score) == n - 1
        builtins: tuple[str | None, str | None] = (None, None)
        white, black = self.players[unit.white], self.players[unit.black]
        if isinstance(white, BuiltinPlayer) and isinstance(black, BuiltinPlayer):
            builtins = (white.builtin, black.builtin)
        # A match that cycles variants (tavli, RULES.md §3.12.3) plays each game with its own
        # variant, which the task carries, so each request tells the bots this game's variant.
        name, options = pool.variant, dict(pool.options)
        if match is not None and match.cycle:
            name, options = match.game_variant.name, dict(match.game_variant.options)
        return GameTask(
            tournament_id=self.tournament_id,
            unit=unit,
            game_no=game_no,
            variant=name,
            options=options,
            starter=starter,
            cube=dataclasses.asdict(cube),
            score=score,
            crawford=crawford,
            post_crawford=post,
            per_decision=d.per_decision,
            reserve=d.reserve,
            on_fault=d.on_fault,
            max_faults=d.max_faults,
            builtins=builtins,
        )

    def _check_declared(self, player: Player) -> None:
        """A bot whose ``GetInfo`` lists variants plays only those ("the arena will not schedule a
        bot for a variant it does not list"; a match variant: see :func:`variants_refused`)."""
        declared = getattr(player, "declared", ())
        for pool in self.definition.pools:
            variant = cached_variant(pool.variant, pool.options)
            why = variants_refused(declared, variant.name, variant.info.cycle)
            if why is not None:
                raise TournamentError(f"bot {player.name!r} does not play {pool.label}: {why}")

    def _stored(self, unit: ScheduledUnit) -> bool:
        return self.tally.unit_done(unit.unit_id)

    def _match_for(self, unit: ScheduledUnit) -> Match | None:
        """The match state of a unit from its stored games (None for a single game)."""
        if unit.match_length is None:
            return None
        pool = self.definition.pool(unit.pool)
        # A match variant (tavli, RULES.md §3.12.3) cycles its games' variants.
        match = Match.of(cached_variant(pool.variant, pool.options), unit.match_length)
        for g in sorted(self.tally.games_of(unit.unit_id), key=lambda r: r.game_no):
            add_to_match(match, g.winner, g.points)
        return match

    def run(self) -> RunResult:
        """Play every scheduled game not yet stored; returns when the schedule is complete, the
        SPRT has decided, or :meth:`stop` was called (KeyboardInterrupt also stops it, and is
        re-raised after the store is marked ``interrupted``)."""
        store = self.store
        self.prepare()
        luck = self.tally.luck is not None  # the luck-adjusted SPRT reads each game's record
        for row in store.games(self.tournament_id, records=luck):
            points = self.tally.luck_points(row)  # analysed outside the lock (luck_points)
            with self._tally_lock:
                self.tally.add(row, points)
        skipped = self.tally.games_stored
        assert self.dice is not None
        if self.dice.revealed and not self.tally.sprt_decided:
            left = self.tally.units_total - self.tally.units_completed
            if left:
                raise TournamentError(
                    f"tournament {self.tournament_id} has ended and its seed is revealed: "
                    f"its {left} more games would be played on dice everyone can predict; "
                    "give it another seed or name"
                )
        records = _RecordsFile(self.records_path) if self.records_path else None
        played = 0
        executor: cf.Executor | GameExecutor | None = None
        opened: list[Player] = []
        self.status = "running"
        store.set_status(self.tournament_id, "running")
        interrupted = False
        try:
            if records is not None:
                try:
                    records.sync(store, self.tournament_id)
                except OSError as exc:
                    raise TournamentError(f"{self.records_path}: {exc.strerror or exc}") from None
            resumed = f"resuming: {skipped} games already stored" if skipped else "new"
            self._emit(
                "tournament_started", status="running", detail=resumed, standings=self.standings()
            )
            # Units still to play, per pool, pairing and leg, in schedule order (made lazily).
            queues = unit_streams(self.definition, self._stored)
            if queues and not self.tally.sprt_decided:
                names = {n for q in queues if q.head is not None for n in (q.head.a, q.head.b)}
                remote = isinstance(self.executor_kind, GameExecutor)
                for name in sorted(names):
                    player = self.players[name]
                    if not remote:  # a GameExecutor opens them where the games run
                        player.open()
                        opened.append(player)
                        self._check_declared(player)
                    self._faults[name] = self._given_faults.get(name) or FaultCounter()
                executor = self._make_executor()
                played = self._loop(executor, queues, records)
            else:
                self._finish_status()
        except KeyboardInterrupt:
            interrupted = True
            self._stop.set()
            self.status, self.detail = "interrupted", "interrupted; run again to resume"
            raise
        except (TournamentError, StorageError, DefinitionError) as exc:
            self.status, self.detail = "failed", str(exc)
            raise
        except Exception as exc:
            self.status, self.detail = "failed", f"{type(exc).__name__}: {exc}"
            raise TournamentError(f"the tournament failed: {type(exc).__name__}: {exc}") from exc
        finally:
            if executor is not None:
                executor.shutdown(wait=not interrupted, cancel_futures=True)
            for player in opened:
                try:
                    player.close()
                except Exception:
                    log.exception("closing %s failed", player.name)
            if records is not None:
                records.close()
            try:
                store.set_status(self.tournament_id, self.status, self.detail)
                if self.status in audit.REVEALED_STATUSES:
                    self.reveal_dice()
            except StorageError:  # pragma: no cover - nothing more to do
                log.exception("could not store the final status")
            final = self.standings()
            self._emit("standings_updated", standings=final)
            self._emit("tournament_ended", status=self.status, detail=self.detail, standings=final)
        return RunResult(self.status, self.detail, final, played, skipped)

    def _finish_status(self) -> None:
        if self.tally.sprt_decided:
            self.status = "stopped"
            lines = "; ".join(self.tally.sprt_lines())
            self.detail = f"SPRT decided: {lines}"
        elif self.tally.all_done:
            self.status, self.detail = "finished", ""
        else:
            self.status, self.detail = "interrupted", "stopped before the end; run again to resume"

    def _loop(
        self,
        executor: cf.Executor | GameExecutor,
        queues: list[UnitStream],
        records: _RecordsFile | None,
    ) -> int:
        busy: dict[str, int] = dict.fromkeys(self.players, 0)
        active: dict[cf.Future[Any], GameTask] = {}
        matches: dict[str, Match | None] = {}
        analysed: dict[str, float] = {}  # luck-adjusted points a game executor sent back
        if self.tally.luck is not None and hasattr(executor, "analyse_luck"):
            executor.analyse_luck = True  # e.g. Ray: each worker analyses the games it plays
        played = 0
        last_standings = 0.0
        stopping = False

        def submit(task: GameTask) -> None:
            players = (self.players[task.white], self.players[task.black])
            self._emit(
                "game_started",
                game=GameSummary(
                    task.game_id, task.unit.unit_id, task.unit.pool, task.white, task.black
                ),
            )
            future: cf.Future[Any]
            if isinstance(executor, GameExecutor):
                future = executor.submit_game(task, players, self._faults, self._stop)
            elif isinstance(executor, cf.ProcessPoolExecutor):
                future = executor.submit(_run_task_in_worker, task)
            else:
                future = executor.submit(
                    run_task_in_thread, task, players, self._faults, self._stop
                )
            active[future] = task

        def fill() -> None:
            while (
                len(active) < self.concurrency
                and not stopping
                and not self._stop.is_set()
                and not self._drain.is_set()
            ):
                best: UnitStream | None = None
                for q in queues:
                    head = q.head
                    if head is None:
                        continue
                    if busy[head.white] >= self.players[head.white].capacity:
                        continue
                    if busy[head.black] >= self.players[head.black].capacity:
                        continue
                    if best is None or head.order < best.head.order:  # type: ignore[union-attr]
                        best = q
                if best is None or best.head is None:
                    return
                unit = best.head
                best.advance(self._stored)
                busy[unit.white] += 1
                busy[unit.black] += 1
                match = self._match_for(unit)
                matches[unit.unit_id] = match
                submit(self._task(unit, match, 1 + len(self.tally.games_of(unit.unit_id))))

        fill()
        while active:
            done, _ = cf.wait(list(active), timeout=0.2, return_when=cf.FIRST_COMPLETED)
            finished: list[tuple[GameTask, GameRecord, dict[str, Any], GameRow]] = []
            for future in done:
                task = active.pop(future)
                record = future.result()  # an engine error propagates (the run fails)
                if record is None:  # aborted because we are stopping: not stored
                    busy[task.white] -= 1
                    busy[task.black] -= 1
                    continue
                record = typed_record(record)
                # The executor's luck analysis, done where the game ran, is not stored.
                after = tuple(tag for tag in record.tags_after if tag[0] != LUCK_FIELD)
                for key, known in record.tags_after:
                    if key == LUCK_FIELD:
                        analysed[task.game_id] = float(known)
                if self.dice is not None:
                    commitment = {
                        **self.dice.record_field(),
                        "duplicate": self.definition.duplicate,
                    }
                    after += (("dice_commitment", commitment),)
                if after != record.tags_after:
                    record = dataclasses.replace(record, tags_after=after)
                finished.append((task, record, record.to_json(), row_from_record(record, task)))
            # A luck-adjusted SPRT's points are analysed before the games are stored (outside
            # the results lock), so the store's ledger keeps the same SPRT as the tally.
            adjusted: dict[str, float] = {}
            if self.tally.luck is not None:
                for _, _, data, row in finished:
                    points = self.tally.luck_points(
                        dataclasses.replace(row, record=data), analysed.pop(row.game_id, None)
                    )
                    if points is not None:
                        adjusted[row.game_id] = points
            # (handed over only then: a Store without a luck-adjusted SPRT need not take them)
            given = (adjusted,) if self.tally.luck is not None else ()
            if len(finished) > 1:  # games that ended together: one transaction
                self.store.save_games([(row, data) for _, _, data, row in finished], *given)
            elif finished:
                _, _, data, row = finished[0]
                self.store.save_game(row, data, *[a.get(row.game_id) for a in given])
            for task, record, data, row in finished:
                unit = task.unit
                played += 1
                if records is not None:
                    records.write(data)
                if self.on_record is not None:
                    try:
                        self.on_record(record)
                    except Exception:
                        log.exception("the on_record callback failed")
                with self._tally_lock:
                    state = self.tally.add(row, adjusted.get(row.game_id), feed_sprt=False)
                assert state is not None
                self._emit(
                    "game_ended",
                    game=GameSummary(
                        task.game_id,
                        unit.unit_id,
                        unit.pool,
                        task.white,
                        task.black,
                        data["result"],
                        len(record.answers),
                    ),
                )
                match = matches.get(unit.unit_id)
                if match is not None and not state.done:
                    add_to_match(match, row.winner, row.points)
                    if not (stopping or self._stop.is_set() or self._drain.is_set()):
                        submit(self._task(unit, match, task.game_no + 1))
                        continue
                busy[unit.white] -= 1
                busy[unit.black] -= 1
                matches.pop(unit.unit_id, None)
            # One event per counted pair, also when these games completed several at once.
            while True:
                with self._tally_lock:
                    if not self.tally.count_sprt_pair():
                        break
                    lines = " | ".join(self.tally.sprt_lines())
                self._emit("sprt_updated", detail=lines, standings=self.standings())
                if self.tally.sprt_decided:
                    stopping = True
            now = time.monotonic()
            if done and now - last_standings >= self.standings_interval:
                last_standings = now
                self._emit("standings_updated", standings=self.standings())
            fill()
        self._finish_status()
        return played
