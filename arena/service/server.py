"""The arena: registered bots, games run with the kernel, and the gRPC server around them.

* :class:`Arena` is the plain-Python core: it registers bots (server, dial-out or local process),
  issues their tokens, runs games (:func:`nardy.arena.clients.runner.run_game`) on a thread pool, keeps
  the records (optionally appended to a JSON-lines file), runs tournaments on the tournament
  engine (:class:`nardy.arena.competition.tournament.Tournament`, stored in a SQLite database), and shuts
  down gracefully.
* :class:`ArenaServicer` is the thin translator between ``nardy.arena.v1`` messages and
  :class:`Arena` calls (:func:`standings_to_proto` and :class:`EventTranslator` for the
  engine's standings and events).
* :class:`ArenaServer` is the gRPC server (``grpc.aio``: streams are coroutines, unary calls run
  on a thread pool): the servicer, the standard ``grpc.health.v1`` health service, server
  reflection, message size and stream limits (:mod:`nardy.arena.service.streams`), and SIGTERM/SIGINT
  handling.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import itertools
import json
import logging
import math
import random
import re
import secrets
import signal
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Literal

import grpc
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

# grpcio-health-checking and grpcio-reflection ship no type stubs.
from grpc_health.v1 import health as _health  # type: ignore[import-untyped,unused-ignore]
from grpc_health.v1 import health_pb2 as _health_pb2  # type: ignore[import-untyped,unused-ignore]
from grpc_health.v1 import health_pb2_grpc as _health_pb2_grpc  # type: ignore[import-untyped,unused-ignore]
from grpc_reflection.v1alpha import reflection as _reflection  # type: ignore[import-untyped,unused-ignore]

from nardy.arena.clients import convert
from nardy.arena.clients.bot_client import (
    DEFAULT_MAX_MESSAGE_BYTES,
    BotClient,
    GrpcBotClient,
)
from nardy.arena.clients.dial_out import Connection, DialOutHub, FloodLimit, Undecodable
from nardy.arena.clients.local import LocalBotProcess
from nardy.arena.clients.runner import (
    GameOutcome,
    GameRecord,
    Seat,
    run_game,
)
from nardy.arena.competition.schedule import (
    SprtDef,
    TournamentDef,
    parse_definition,
    variants_refused,
)
from nardy.arena.competition.tournament import (
    ClientPlayer,
    Player,
    PoolStandings,
    Standings,
    Tournament,
    TournamentEvent,
    standings_from_aggregates,
    standings_from_store,
)
from nardy.arena.protocol import ARENA_ADMIN_METHODS, ARENA_SERVICE, ARENA_SERVICE_NAME
from nardy.arena.protocol import arena_pb2 as _arena_pb2
from nardy.arena.protocol import bot_pb2 as _bot_pb2
from nardy.arena.protocol import game_pb2 as _game_pb2
from nardy.arena.records.audit import REVEALED_STATUSES, DiceAudit, public_dice
from nardy.arena.records.audit import reveal as reveal_dice
from nardy.arena.records.storage import MEMORY, SqlStore, StorageError, Store, open_store
from nardy.arena.service.auth import (
    Authenticator,
    Caller,
    bearer_token,
    hash_token,
    new_token,
    server_bot_token,
)
from nardy.arena.service.feed import TournamentFeed
from nardy.arena.service.limits import (
    ADMIN_WORKERS,
    DEFAULT_HELLO_TIMEOUT,
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_CALLS_PER_PEER,
    DEFAULT_MAX_PENDING_HELLOS,
    DEFAULT_MAX_REQUEST_BYTES,
    MAX_WAITING_CALLS,
    ArenaLimits,
    LimitError,
    check_bot_address,
)
from nardy.arena.service.public import PublicView, public_view
from nardy.arena.service.registry import BotRow, Registry
from nardy.arena.service.rpc_errors import (
    ArenaClosedError,
    BotExistsError,
    BotNotReadyError,
    Refused,
    TournamentExistsError,
    grpc_errors,
)
from nardy.arena.service.streams import (
    DEFAULT_MAX_STREAMS,
    DEFAULT_MAX_STREAMS_PER_PEER,
    Allocator,
    CallQueue,
    Gate,
    OperatorGate,
    PendingHellos,
    StreamLimiter,
)
from nardy.bots.faults import BotError, FaultCounter, FaultKind, FaultPolicy
from nardy.bots.loop import TimeControl
from nardy.core.game import COLOURS, CubeSettings
from nardy.core.plugins import load_variant
from nardy.core.record import MatchInfo

__all__ = [
    "Arena",
    "ArenaClosedError",
    "ArenaServer",
    "ArenaServicer",
    "ArenaTournament",
    "BotEntry",
    "BotExistsError",
    "BotNotReadyError",
    "EventTranslator",
    "TournamentExistsError",
    "sprt_to_proto",
    "standings_to_proto",
]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class BotEntry:
    """A registered bot."""

    bot_id: str
    name: str
    token: str
    transport: Literal["server", "dial_out", "local"]
    client: BotClient
    info: _bot_pb2.BotInfo
    address: str = ""
    faults: FaultCounter = field(default_factory=FaultCounter)
    process: LocalBotProcess | None = None
    token_hash: str = ""
    """SHA-256 of the token: what the arena stores and compares."""
    last_seen: float | None = None
    """When a dial-out bot last opened its stream or sent a message (``time.time()``)."""

    def __post_init__(self) -> None:
        if not self.token_hash and self.token:
            self.token_hash = hash_token(self.token)

    @property
    def connected(self) -> bool:
        """A dial-out bot: its stream is open. A server or local bot: its last call succeeded."""
        if isinstance(self.client, DialOutHub):
            return self.client.connected
        return (
            isinstance(self.client, GrpcBotClient) and self.client.last_code == grpc.StatusCode.OK
        )

    @property
    def seen(self) -> float | None:
        if isinstance(self.client, GrpcBotClient):
            return self.client.last_ok
        return self.last_seen

    def stats(self) -> dict[str, Any]:
        """Fault counts and transport statistics, JSON-ready."""
        out: dict[str, Any] = {"bot_id": self.bot_id, "name": self.name, **self.faults.to_json()}
        if isinstance(self.client, DialOutHub):
            out.update(
                connections=self.client.connections,
                stale_answers=self.client.stale_answers,
                floods=self.client.floods,
                protocol_errors=self.client.protocol_errors,
            )
        if self.process is not None:
            out["restarts"] = self.process.restarts
        return out


_PROTO_STATUS: dict[str, _arena_pb2.TournamentStatus.ValueType] = {
    "pending": _arena_pb2.TOURNAMENT_STATUS_PENDING,
    "running": _arena_pb2.TOURNAMENT_STATUS_RUNNING,
    "finished": _arena_pb2.TOURNAMENT_STATUS_FINISHED,
    "stopped": _arena_pb2.TOURNAMENT_STATUS_FINISHED,  # the SPRT decided: a normal end
    "interrupted": _arena_pb2.TOURNAMENT_STATUS_CANCELLED,
    "failed": _arena_pb2.TOURNAMENT_STATUS_CANCELLED,
    "cancelled": _arena_pb2.TOURNAMENT_STATUS_CANCELLED,
}
"""The engine's status values (:data:`nardy.arena.competition.tournament.Status`) as the proto's."""

_FORMATS = frozenset(
    (
        _arena_pb2.TOURNAMENT_FORMAT_UNSPECIFIED,
        _arena_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN,
        _arena_pb2.TOURNAMENT_FORMAT_GAUNTLET,
    )
)
"""The formats ``CreateTournament`` knows (unspecified: round robin)."""

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.+-]")


_REVEALED = REVEALED_STATUSES
"""Statuses after which a tournament's seed is shown: it decides every roll of every game, so it
stays secret while games may still be played (an ``interrupted`` tournament resumes)."""

_RESUMABLE = ("pending", "running", "interrupted")
"""Stored statuses of an arena tournament that a restarted arena resumes."""


@dataclass(slots=True)
class ArenaTournament:
    """A tournament the arena runs: the tournament engine
    (:class:`nardy.arena.competition.tournament.Tournament`, storing into the arena's database) on a thread
    of its own. ``done`` is set when the run returns; ``error`` says why it failed, if it did."""

    engine: Tournament
    done: threading.Event = field(default_factory=threading.Event)
    error: str = ""
    thread: threading.Thread | None = None
    cancelled: bool = False
    """The operator cancelled it: it ends ``cancelled`` and is never resumed."""
    await_bots: tuple[DialOutHub, ...] = ()
    """Dial-out bots to wait for (up to ``await_timeout`` seconds) before the first game: a
    resumed tournament gives them time to reconnect after the arena's restart."""
    await_timeout: float = 30.0
    on_end: Any = None
    """Called with the tournament when its run returns."""

    @property
    def status(self) -> str:
        """The engine's status, or ``cancelled``."""
        if self.cancelled and self.done.is_set():
            return "cancelled"
        return self.engine.status

    @property
    def revealed_seed(self) -> int:
        """The seed once the tournament has ended (finished or cancelled), else 0."""
        return self.seed if self.status in _REVEALED else 0

    @property
    def tournament_id(self) -> str:
        return self.engine.tournament_id

    @property
    def seed(self) -> int:
        return self.engine.definition.seed

    @property
    def units_total(self) -> int:
        """Games (matches) scheduled."""
        return self.engine.units_total

    def standings(self) -> Standings:
        """The engine's standings now (thread-safe)."""
        return self.engine.standings()

    @property
    def sprt(self) -> SprtDef | None:
        return self.engine.definition.sprt

    def start(self) -> None:
        self.thread = threading.Thread(
            target=self._run, name=f"tournament-{self.tournament_id}", daemon=True
        )
        self.thread.start()

    def cancel(self) -> None:
        self.cancelled = True
        self.engine.stop()

    def _run(self) -> None:
        try:
            end = time.monotonic() + self.await_timeout
            while not self.cancelled and time.monotonic() < end:
                if all(hub.connected for hub in self.await_bots):
                    break
                time.sleep(0.05)
            self.engine.run()  # after cancel() it ends at once, with its events
        except Exception as exc:
            self.error = str(exc)
            log.error("tournament %s failed: %s", self.tournament_id, exc)
        finally:
            if self.cancelled:
                try:
                    self.engine.store.set_status(
                        self.tournament_id, "cancelled", "cancelled by the operator"
                    )
                    self.engine.reveal_dice()  # cancelled for good: its dice may be public
                except StorageError:  # pragma: no cover - nothing more to do
                    log.exception("could not store the cancellation")
            self.done.set()
            if self.on_end is not None:
                self.on_end(self)


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def sprt_to_proto(
    pool: PoolStandings, spec: SprtDef | None, out: _arena_pb2.SprtStatus | None = None
) -> _arena_pb2.SprtStatus:
    """The ``SprtStatus`` of a pool that runs an SPRT (``pool.sprt`` is set). ``spec`` is the
    tournament's :class:`~nardy.arena.competition.schedule.SprtDef` (the hypotheses and error rates; without
    it ``settings`` stays empty)."""
    sprt = pool.sprt
    assert sprt is not None, f"pool {pool.label} runs no SPRT"
    msg = _arena_pb2.SprtStatus() if out is None else out
    msg.pool = pool.label
    if spec is not None:
        convert.sprt_settings_to_proto(spec, match_length=pool.match_length, out=msg.settings)
    msg.llr = sprt.llr
    msg.lower_bound, msg.upper_bound = sprt.bounds
    msg.decision = convert.SPRT_DECISION_OF.get(sprt.decision, _arena_pb2.SPRT_DECISION_UNSPECIFIED)
    msg.pairs = sprt.pairs
    msg.games = pool.units_done
    msg.decided_at_pairs = sprt.decided_at or 0
    msg.status_line = sprt.line
    return msg


def _pairings_to_proto(pool: PoolStandings, out: _arena_pb2.GetStandingsResponse) -> None:
    for p in pool.pairings:
        msg = out.pairings.add(
            pool=pool.label,
            bot_a=p.a,
            bot_b=p.b,
            games=p.units,
            wins_a=p.a_wins,
            wins_b=p.b_wins,
            draws=p.draws,
            net_points_a=p.a_net_points,
            pairs=p.pairs,
            unpaired=p.unpaired,
        )
        mean, se, se_iid = _finite(p.mean), _finite(p.se), _finite(p.se_independent)
        low, high = _finite(p.ci[0]), _finite(p.ci[1])
        if mean is not None:
            msg.mean_points = mean
        if se_iid is not None:
            msg.se_iid = se_iid
        if se is not None and low is not None and high is not None:
            msg.se = se
            msg.ci95_low, msg.ci95_high = low, high
            msg.ci_method = p.method


def dice_to_proto(dice: DiceAudit) -> _arena_pb2.DiceCommitment:
    """The public view of a tournament's dice commitment: seed and salt only once revealed."""
    msg = _arena_pb2.DiceCommitment(
        scheme=dice.scheme, commitment=dice.commitment, revealed=dice.revealed
    )
    if dice.revealed and dice.seed is not None:
        msg.seed = dice.seed
        msg.salt = dice.salt or ""
    return msg


def standings_to_proto(
    standings: Standings,
    *,
    seed: int = 0,
    names: Mapping[str, str] | None = None,
    sprt: SprtDef | None = None,
    dice: DiceAudit | None = None,
) -> _arena_pb2.GetStandingsResponse:
    """The engine's :class:`~nardy.arena.competition.tournament.Standings` as ``GetStandingsResponse``.

    Bots are rated per variant pool (``Standing.pool``); an arena tournament has one pool. With
    several pools (a tournament file run into the same database) the rows of every pool follow
    each other, each pool ranked on its own and ``bot_name`` suffixed with `` [pool]`` (as before
    ``pool`` existed). ``games_played`` and ``games_total`` count units: games, or matches in a
    match tournament. ``elo`` and ``elo_error`` (half the 95% interval, 1.96 SE) are 0 while a
    bot has no rating, and ``elo_se`` and the interval's ends are unset. ``pairings`` are the
    pools' head-to-head results, ``sprt`` the pools' tests (``sprt`` is the tournament's
    :class:`~nardy.arena.competition.schedule.SprtDef`, for the hypotheses). ``dice``: the commitment
    (:mod:`nardy.arena.records.audit`), with seed and salt once revealed.
    """
    names = names or {}
    response = _arena_pb2.GetStandingsResponse(
        tournament_id=standings.tournament_id,
        status=_PROTO_STATUS.get(standings.status, _arena_pb2.TOURNAMENT_STATUS_UNSPECIFIED),
        games_played=standings.units_done,
        games_total=standings.units_total,
        seed=seed,
    )
    several = len(standings.pools) > 1
    for pool in standings.pools:
        for b in pool.bots:
            name = names.get(b.bot, b.bot)
            elo, se = _finite(b.elo), _finite(b.elo_se)
            row = response.standings.add(
                rank=b.rank,
                bot_id=b.bot,
                bot_name=f"{name} [{pool.label}]" if several else name,
                games=b.games,
                wins=b.wins,
                losses=b.losses,
                draws=b.draws,
                forfeits=b.forfeits,
                net_points=b.net_points,
                elo=elo or 0.0,
                elo_error=1.96 * se if se is not None else 0.0,
                pool=pool.label,
            )
            if elo is not None and se is not None:
                row.elo_se = se
                row.elo_ci95_low, row.elo_ci95_high = elo - 1.96 * se, elo + 1.96 * se
        _pairings_to_proto(pool, response)
        if pool.sprt is not None:
            sprt_to_proto(pool, sprt, response.sprt.add())
    if dice is not None:
        # Standings of a moment before the end show the commitment only (a replayed event
        # carries what it carried live).
        ended = standings.status in REVEALED_STATUSES
        response.dice.CopyFrom(dice_to_proto(dice if ended else dice.sealed()))
    return response


def _result_proto(outcome: Mapping[str, Any] | None) -> _game_pb2.GameResult:
    if not outcome:
        return _game_pb2.GameResult()
    winner = outcome.get("winner")
    return GameOutcome(
        winner=None if winner is None else COLOURS.index(winner),
        points=int(outcome.get("points") or 0),
        multiplier=int(outcome.get("multiplier") or 0),
        termination=outcome.get("termination", "aborted"),
        reason=str(outcome.get("reason") or ""),
    ).to_proto()


class EventTranslator:
    """Engine events (:class:`~nardy.arena.competition.tournament.TournamentEvent`) as
    ``WatchTournamentResponse`` messages, one message per event with the engine's sequence.

    Every engine kind has its message: ``tournament_started`` → ``TournamentStartedEvent``,
    ``game_started``/``game_ended`` → ``GameStartedEvent``/``GameEndedEvent``,
    ``standings_updated`` → ``StandingsUpdatedEvent``, ``sprt_updated`` → ``SprtUpdatedEvent``,
    ``tournament_ended`` → ``TournamentEndedEvent``. The numbers of a ``SprtUpdatedEvent`` come
    from the event's standings (the engine attaches the standings of that moment), else from the
    latest standings seen on the stream.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        names: Mapping[str, str] | None = None,
        sprt: SprtDef | None = None,
        dice: Callable[[], DiceAudit | None] | None = None,
    ) -> None:
        self.seed = seed
        self.names = dict(names or {})
        self.sprt = sprt
        self.dice = dice
        """The tournament's dice commitment as of now (revealed once it has ended)."""
        self._latest: _arena_pb2.GetStandingsResponse | None = None
        self._latest_engine: Standings | None = None

    def _standings(self, standings: Standings | None) -> _arena_pb2.GetStandingsResponse:
        if standings is not None:
            self._latest_engine = standings
            self._latest = standings_to_proto(
                standings,
                seed=self.seed,
                names=self.names,
                sprt=self.sprt,
                dice=self.dice() if self.dice is not None else None,
            )
        return self._latest or _arena_pb2.GetStandingsResponse()

    def _sprt(self, event: TournamentEvent, out: _arena_pb2.SprtUpdatedEvent) -> None:
        out.status_line = event.detail
        standings = event.standings or self._latest_engine
        for pool in standings.pools if standings is not None else ():
            if pool.sprt is not None:
                sprt_to_proto(pool, self.sprt, out.sprt.add())

    def __call__(self, event: TournamentEvent) -> _arena_pb2.WatchTournamentResponse:
        out = _arena_pb2.WatchTournamentResponse(event_sequence=event.sequence)
        out.time.FromNanoseconds(int(event.time * 1e9))
        game = event.game
        if event.kind == "game_started" and game is not None:
            out.game_started.CopyFrom(
                _arena_pb2.GameStartedEvent(
                    game_id=game.game_id,
                    match_id=game.match_id,
                    white_bot_id=game.white,
                    black_bot_id=game.black,
                )
            )
        elif event.kind == "game_ended" and game is not None:
            out.game_ended.CopyFrom(
                _arena_pb2.GameEndedEvent(
                    game_id=game.game_id,
                    match_id=game.match_id,
                    white_bot_id=game.white,
                    black_bot_id=game.black,
                    result=_result_proto(game.outcome),
                    decisions=game.decisions,
                )
            )
        elif event.kind == "tournament_started":
            started = out.tournament_started
            started.status = _PROTO_STATUS.get(
                event.status or "", _arena_pb2.TOURNAMENT_STATUS_RUNNING
            )
            started.detail = event.detail
            started.standings.CopyFrom(self._standings(event.standings))
        elif event.kind == "sprt_updated":
            self._sprt(event, out.sprt_updated)
        elif event.kind == "tournament_ended":
            standings = self._standings(event.standings)
            out.tournament_ended.status = _PROTO_STATUS.get(
                event.status or "", _arena_pb2.TOURNAMENT_STATUS_CANCELLED
            )
            out.tournament_ended.standings.CopyFrom(standings)
        else:  # standings_updated
            out.standings_updated.standings.CopyFrom(self._standings(event.standings))
        return out


class Arena:
    """Registered bots and the games between them (no gRPC server; see :class:`ArenaServer`)."""

    def __init__(
        self,
        *,
        time_control: TimeControl | None = None,
        policy: FaultPolicy | None = None,
        reconnect_grace: float = 5.0,
        flood: FloodLimit | None = None,
        max_games: int = 64,
        records_path: Path | None = None,
        verify_timeout: float = 5.0,
        db: str | Path | None = None,
        standings_interval: float = 0.5,
        secret: str | None = None,
        limits: ArenaLimits | None = None,
        resume_wait: float = 30.0,
    ) -> None:
        """:param db: the SQLite file (or PostgreSQL URL) the arena keeps its bots and
            tournaments in (created if needed; tournaments already in it can be read with
            :meth:`standings`, and :meth:`resume_tournaments` resumes the unfinished ones of
            this arena); None keeps them in memory.
        :param standings_interval: least seconds between two ``standings_updated`` events of a
            tournament (0: after every game).
        :param secret: the key server bots' tokens are derived from (the served arena uses its
            admin token); None: a random one, so server bots registered in an earlier process
            get new tokens.
        :param limits: what one request may ask (:class:`~nardy.arena.service.limits.ArenaLimits`);
            the default allows loopback and private bot addresses (the in-process arena of
            scripts and tests; ``nardy arena serve`` does not unless told).
        :param resume_wait: seconds a resumed tournament waits for its dial-out bots.

        Raises :class:`~nardy.arena.records.storage.StorageError` when ``db`` cannot be used.
        """
        self.time_control = time_control or TimeControl()
        self.policy = policy or FaultPolicy()
        self.reconnect_grace = reconnect_grace
        self.flood = flood or FloodLimit()
        self.records_path = records_path
        self.verify_timeout = verify_timeout
        self.records: list[GameRecord] = []
        self.store: Store = open_store(MEMORY if db is None else db)
        self.standings_interval = standings_interval
        self.tournaments: dict[str, ArenaTournament] = {}
        self._public: dict[str, tuple[tuple[Any, ...], PublicView | None]] = {}
        """Per live tournament: the public view as of (games stored, status), shared by every
        caller without the admin token (a game's end must not cost one database read per
        watcher)."""
        self._public_locks: dict[str, threading.Lock] = {}
        self._public_tables: dict[str, tuple[PublicView, _arena_pb2.GetStandingsResponse]] = {}
        self._bots: dict[str, BotEntry] = {}
        self._by_hash: dict[str, BotEntry] = {}
        self._secret = secret or new_token()
        self.limits = limits or ArenaLimits(allow_private_addresses=True)
        self.resume_wait = resume_wait
        self.registry = Registry(self.store)
        self._lock = threading.Lock()
        self._records_lock = threading.Lock()
        self._pool = futures.ThreadPoolExecutor(max_workers=max_games, thread_name_prefix="game")
        self._running: set[futures.Future[GameRecord]] = set()
        self._stop = threading.Event()
        self.closing = False
        self._ids = itertools.count(1)
        self._stored_faults = self.registry.faults()
        """Fault counts kept by earlier processes, by bot id (a bot's are restored when it is
        loaded or added, e.g. a ``--local-bot`` of the same name)."""
        for row in self.registry.bots():
            self._load_bot(row)

    # -- bots -------------------------------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}-{uuid.uuid4().hex[:12]}"

    def _add(self, entry: BotEntry, *, persist: bool = False, unique: bool = False) -> BotEntry:
        """Index a new bot (and store its registration); :class:`BotExistsError` for a name in
        use (with ``unique``), :class:`LimitError` for too many bots."""
        with self._lock:
            taken = entry.bot_id in self._bots
            if taken or (unique and any(e.name == entry.name for e in self._bots.values())):
                raise BotExistsError(f"a bot named {entry.name!r} is registered already")
            if len(self._bots) >= self.limits.max_registered_bots:
                raise LimitError(f"the arena has {len(self._bots)} bots, its limit")
            if persist:
                self.registry.add_bot(
                    BotRow(
                        bot_id=entry.bot_id,
                        name=entry.name,
                        kind=entry.transport,
                        address=entry.address,
                        token_hash=entry.token_hash,
                        info=entry.info.SerializeToString(),
                        created=time.time(),
                    )
                )
            self._bots[entry.bot_id] = entry
            self._by_hash[entry.token_hash] = entry
        self._keep_faults(entry)
        return entry

    def _keep_faults(self, entry: BotEntry) -> None:
        """Restore the bot's stored fault counts and store each change (a restarted arena keeps
        counting, and a disqualified bot stays disqualified)."""
        stored = self._stored_faults.get(entry.bot_id)
        if stored is not None:
            entry.faults.restore(stored.counts, stored.disqualified)

        def save(counts: dict[FaultKind, int], disqualified: bool) -> None:
            try:
                self.registry.save_faults(
                    entry.bot_id, {str(k): v for k, v in counts.items()}, disqualified
                )
            except StorageError:  # the game goes on; the count lives on in this process
                log.exception("could not store the faults of bot %s", entry.name)

        entry.faults.on_change = save

    def _load_bot(self, row: BotRow) -> None:
        """A bot registered by an earlier process of this arena (same id, same token)."""
        info = _bot_pb2.BotInfo.FromString(row.info)
        client: BotClient
        token = ""
        if row.kind == "server":
            token = server_bot_token(self._secret, row.bot_id)
            if hash_token(token) != row.token_hash:
                log.warning(
                    "server bot %s: its token was derived from another admin token and no "
                    "longer matches; if the bot checks tokens, register it again under a new name",
                    row.name,
                )
            client = GrpcBotClient(row.address, token)
        else:
            client = DialOutHub(row.bot_id, reconnect_grace=self.reconnect_grace, flood=self.flood)
        entry = BotEntry(row.bot_id, row.name, token, row.kind, client, info, row.address)  # type: ignore[arg-type]
        if row.kind != "server":
            entry.token_hash = row.token_hash
        with self._lock:
            self._bots[entry.bot_id] = entry
            self._by_hash[entry.token_hash] = entry
        self._keep_faults(entry)

    def _check_name(self, name: str) -> str:
        self.limits.check_name("the bot name", name)
        if _NAME_CHARS.search(name):
            raise LimitError(f"bot name {name!r}: use letters, digits and _ . + -")
        return name

    def register_server_bot(
        self,
        name: str,
        address: str,
        *,
        info: _bot_pb2.BotInfo | None = None,
        verify: bool = True,
        unique: bool = False,
    ) -> BotEntry:
        """Register a ``BotService`` server; with ``verify``, its ``GetInfo`` must answer (with
        the bot's new token as bearer metadata; an ``UNAUTHENTICATED`` answer is accepted: the
        bot checks tokens and will be given its own).

        Raises :class:`BotError` when the bot cannot be reached, :class:`LimitError` for a name
        or address out of the limits, :class:`BotExistsError` for a name in use (``unique``:
        the operator's API keeps names unique and makes the name the bot's id, so that
        standings, game ids and records read as names; otherwise the id is generated).
        """
        name = self._check_name(name or (info.name if info else "") or "bot")
        self.limits.check_name("the address", address)
        check_bot_address(address, self.limits)
        bot_id = name if unique else self._new_id("bot")
        token = server_bot_token(self._secret, bot_id)
        client = GrpcBotClient(address, token)
        if verify:
            try:  # a bot that is starting up is waited for (up to the verify timeout)
                info = client.get_info(self.verify_timeout, wait_for_ready=True)
            except BotError:
                if client.last_code != grpc.StatusCode.UNAUTHENTICATED:
                    client.close()
                    raise
        entry = BotEntry(
            bot_id, name, token, "server", client, info or _bot_pb2.BotInfo(name=name), address
        )
        try:
            return self._add(entry, persist=True, unique=unique)
        except Exception:
            client.close()
            raise

    def register_dial_out_bot(
        self, name: str, *, info: _bot_pb2.BotInfo | None = None, unique: bool = False
    ) -> BotEntry:
        """Register a bot that will call ``Connect`` with the returned entry's token (the
        arena keeps only its hash)."""
        name = self._check_name(name)
        bot_id = name if unique else self._new_id("bot")
        hub = DialOutHub(bot_id, reconnect_grace=self.reconnect_grace, flood=self.flood)
        entry = BotEntry(
            bot_id, name, new_token(), "dial_out", hub, info or _bot_pb2.BotInfo(name=name)
        )
        return self._add(entry, persist=True, unique=unique)

    def add_local_bot(
        self, name: str, command: Sequence[str], *, max_restarts: int = 10
    ) -> BotEntry:
        """Start a bot process (see :mod:`nardy.arena.clients.local`), register it, restart it on crashes."""
        name = self._check_name(name)
        bot_id = f"local-{name}"  # stable: the same --local-bot on every start
        token = server_bot_token(self._secret, bot_id)
        process = LocalBotProcess(command, max_restarts=max_restarts)
        address = process.start()
        client = GrpcBotClient(address, token)
        process.on_address = client.retarget
        entry = BotEntry(
            bot_id,
            name,
            token,
            "local",
            client,
            _bot_pb2.BotInfo(name=name),
            address,
            process=process,
        )
        return self._add(entry)

    def bot(self, bot_id: str) -> BotEntry:
        """The registered bot ``bot_id``; raises :class:`KeyError`."""
        with self._lock:
            return self._bots[bot_id]

    @property
    def bots(self) -> list[BotEntry]:
        with self._lock:
            return list(self._bots.values())

    def bot_for_token(self, token: str) -> BotEntry | None:
        """The bot that owns ``token`` (found by its hash, compared in constant time), or None."""
        digest = hash_token(token)
        with self._lock:
            entry = self._by_hash.get(digest)
        if entry is None or not secrets.compare_digest(entry.token_hash, digest):
            return None
        return entry

    def bot_by_name_or_id(self, key: str) -> BotEntry:
        """A registered bot by id or name; raises :class:`KeyError`."""
        with self._lock:
            entry = self._bots.get(key)
            if entry is None:
                entry = next((e for e in self._bots.values() if e.name == key), None)
        if entry is None:
            raise KeyError(key)
        return entry

    def ask_bot(self, key: str, request: _arena_pb2.DecisionRequest) -> _arena_pb2.DecisionAnswer:
        """``AskBot``: one decision of a game the arena does not run (a person's game on
        ``nardy web --arena``), asked of bot ``key`` (id or name) through its own client, within
        ``answer_within`` and at most the arena's time per decision. Its faults are not counted:
        the game is not the arena's. Raises :class:`KeyError` for an unknown bot,
        :class:`BotNotReadyError` for a disqualified one, :class:`BotError` when it fails."""
        entry = self.bot_by_name_or_id(key)
        if entry.faults.disqualified:
            raise BotNotReadyError(f"bot {entry.name} is disqualified")
        limit = self.time_control.per_decision
        asked = convert.seconds(request.answer_within) if request.HasField("answer_within") else 0
        timeout = min(asked, limit) if asked > 0 else limit
        answer = _arena_pb2.DecisionAnswer()
        kind = request.WhichOneof("request")
        if kind == "choose_play":
            context = request.choose_play.context
            answer.choose_play.CopyFrom(entry.client.choose_play(request.choose_play, timeout))
        elif kind == "decide_double":
            context = request.decide_double.context
            reply = entry.client.decide_double(request.decide_double, timeout)
            answer.decide_double.CopyFrom(reply)
        elif kind == "respond_to_double":
            context = request.respond_to_double.context
            response = entry.client.respond_to_double(request.respond_to_double, timeout)
            answer.respond_to_double.CopyFrom(response)
        else:
            raise ValueError("the request is one of choose_play, decide_double, respond_to_double")
        answer.game_id, answer.sequence = context.game_id, context.sequence
        return answer

    # -- games ------------------------------------------------------------------------------------

    def start_game(
        self,
        white: str,
        black: str,
        *,
        variant: str = "long",
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        time_control: TimeControl | None = None,
        policy: FaultPolicy | None = None,
        cube: CubeSettings | None = None,
        match: MatchInfo | None = None,
        match_id: str = "",
        game_id: str | None = None,
        starter: int | None = None,
    ) -> futures.Future[GameRecord]:
        """Start a game between two registered bots (White first) on the arena's pool.

        ``starter``: the colour that starts by rolling (a later game of a match), see
        :func:`~nardy.arena.clients.runner.run_game`.

        Raises :class:`ArenaClosedError` while shutting down, :class:`KeyError` for an unknown
        bot, and the kernel's errors for an unknown variant or option.
        """
        if self.closing:
            raise ArenaClosedError("the arena is shutting down")
        entries = (self.bot(white), self.bot(black))
        for entry in entries:
            if entry.faults.disqualified:
                raise ArenaClosedError(f"bot {entry.name} is disqualified")
        # A match variant (tavli) is a tournament's unit, never one game's rules.
        compiled = load_variant(variant, options or {}).single_game("one arena game")
        seats = (
            Seat(entries[0].bot_id, entries[0].name, entries[0].client, entries[0].faults),
            Seat(entries[1].bot_id, entries[1].name, entries[1].client, entries[1].faults),
        )
        if seed is None:
            seed = random.SystemRandom().randrange(2**63)
        match = match or MatchInfo(match_id=match_id)
        future = self._pool.submit(
            run_game,
            compiled,
            seats,
            game_id=game_id or self._new_id("game"),
            seed=seed,
            match=match,
            time_control=time_control or self.time_control,
            policy=policy or self.policy,
            cube=cube,
            stop=self._stop,
            on_end=self._store,
            starter=starter,
        )
        with self._lock:
            self._running.add(future)
        future.add_done_callback(self._forget)
        return future

    def play_game(self, white: str, black: str, **kwargs: Any) -> GameRecord:
        """:meth:`start_game` and wait for the record."""
        return self.start_game(white, black, **kwargs).result()

    def _forget(self, future: futures.Future[GameRecord]) -> None:
        with self._lock:
            self._running.discard(future)

    def _store(self, record: GameRecord) -> None:
        line = json.dumps(record.to_json(), sort_keys=True)  # serialise before taking the lock
        with self._records_lock:
            self.records.append(record)
            self._append_line(line)

    def _store_tournament_record(self, record: Mapping[str, Any]) -> None:
        """A tournament game's record (already in the database) for the records file."""
        if self.records_path is not None:
            line = json.dumps(record, sort_keys=True)
            with self._records_lock:
                self._append_line(line)

    def _append_line(self, line: str) -> None:
        if self.records_path is not None:
            with self.records_path.open("a", encoding="utf-8") as f:
                f.write(line + "\n")

    # -- tournaments ------------------------------------------------------------------------------

    def create_tournament(
        self,
        bot_ids: Sequence[str],
        *,
        name: str = "",
        variant: str = "long",
        options: Mapping[str, Any] | None = None,
        gauntlet: bool = False,
        games_per_pairing: int = 2,
        match_length: int = 0,
        seed: int = 0,
        time_control: TimeControl | None = None,
        concurrency: int = 4,
        sprt: Mapping[str, Any] | None = None,
    ) -> ArenaTournament:
        """Schedule a tournament between registered bots and start it on the tournament engine
        (:class:`nardy.arena.competition.tournament.Tournament`), stored in the arena's database.

        Bots are named by their bot ids in the engine (and in its standings and records'
        seats); each may play up to ``concurrency`` games at once. Pairs of games share their
        dice with the seats swapped (duplicate dice); ``match_length`` > 0 plays matches. Seed 0
        lets the arena choose one. ``sprt``: the definition's ``sprt`` table (mode, elo0/elo1 or
        mu0/mu1, alpha, beta, max_points) to stop a head-to-head early. Raises :class:`KeyError` for an unknown bot,
        :class:`ArenaClosedError` while shutting down or for a disqualified bot,
        :class:`TournamentExistsError` for a repeated request, ``ValueError`` for anything else
        invalid (variant, options, too few bots ...).
        """
        if self.closing:
            raise ArenaClosedError("the arena is shutting down")
        lim = self.limits
        lim.check_count("the number of bots", len(bot_ids), 2, lim.max_bots_per_tournament)
        if len(set(bot_ids)) != len(bot_ids):
            raise ValueError("a bot is named twice")
        lim.check_count("games_per_pairing", games_per_pairing, 1, lim.max_games_per_pairing)
        lim.check_count("match_length", match_length, 0, lim.max_match_length)
        lim.check_count("concurrency", concurrency, 1, lim.max_concurrency)
        lim.check_name("the tournament name", name, required=False)
        if len(options or {}) > lim.max_options:
            raise LimitError(f"at most {lim.max_options} variant options")
        for key, value in (options or {}).items():
            lim.check_name("a variant option", f"{key}={value}")
        lim.check_name("the variant name", variant)
        n = len(bot_ids)
        pairings = n - 1 if gauntlet else n * (n - 1) // 2
        lim.check_count(
            "the number of games (pairings x games_per_pairing)",
            pairings * games_per_pairing,
            1,
            lim.max_games_per_tournament,
        )
        if not 0 <= seed < 2**63:
            raise LimitError("seed must be between 0 and 2**63 - 1")
        if time_control is not None and not (
            0 < time_control.per_decision <= lim.max_per_decision
            and 0 <= time_control.reserve <= 100 * lim.max_per_decision
        ):
            raise LimitError(
                f"time control: per_decision must be in (0, {lim.max_per_decision:g}] s and "
                f"the per-game budget in [0, {100 * lim.max_per_decision:g}] s"
            )
        with self._lock:
            running = sum(1 for t in self.tournaments.values() if not t.done.is_set())
        if running >= lim.max_running_tournaments:
            raise LimitError(
                f"{running} tournaments are running, the arena's limit; wait for one to end "
                "or cancel one"
            )
        entries = [self.bot(bot_id) for bot_id in bot_ids]
        for entry in entries:
            if entry.faults.disqualified:
                raise ArenaClosedError(f"bot {entry.name} is disqualified")
        self._check_ready(entries)
        compiled = load_variant(variant, options or {})
        if compiled.is_match_variant and match_length <= 0:
            raise ValueError(
                f"{compiled.name} is played only as a match "
                f"({' → '.join(compiled.info.cycle)}): give a match_length"
            )
        for entry in entries:  # "the arena will not schedule a bot for a variant it does not list"
            why = variants_refused(list(entry.info.variants), compiled.name, compiled.info.cycle)
            if why is not None:
                raise ValueError(f"bot {entry.name} does not play {compiled.name}: {why}")
        # The options as the variant parsed them (the proto carries text), given ones only.
        opts: dict[str, Any] = {k: compiled.options[k] for k in (options or {})}
        if match_length > 0:
            opts["match_length"] = match_length
        seed = seed or secrets.randbelow(2**63 - 1) + 1
        tc = time_control or self.time_control
        definition = parse_definition(
            {
                "name": _NAME_CHARS.sub("_", name)[:64] or "arena",
                "format": "gauntlet" if gauntlet else "round_robin",
                "bots": [
                    {
                        "name": e.bot_id,
                        "endpoint": e.address or e.transport,
                        "capacity": concurrency,
                    }
                    for e in entries
                ],
                "variants": [{"name": compiled.name, "options": opts}],
                "games": games_per_pairing,
                "seed": seed,
                "duplicate": True,
                "concurrency": concurrency,
                "time_control": {"per_decision": tc.per_decision, "reserve": tc.reserve},
                "faults": {"on_fault": self.policy.on_fault, "max_faults": self.policy.max_faults},
                **({"sprt": dict(sprt)} if sprt else {}),
            }
        )
        tournament = self._tournament_of(definition, entries)
        with self._lock:
            if self.closing:
                raise ArenaClosedError("the arena is shutting down")
            known = tournament.tournament_id in self.tournaments or any(
                r.tournament_id == tournament.tournament_id for r in self.registry.tournaments()
            )
            if known:
                raise TournamentExistsError(
                    f"tournament {tournament.tournament_id} exists (same bots, variant, format "
                    "and seed); give another seed"
                )
            self.registry.add_tournament(tournament.tournament_id)
            self.tournaments[tournament.tournament_id] = tournament
        try:
            tournament.engine.prepare()  # stored with its dice commitment before any game
        except StorageError as exc:  # the run below fails the same way and records it
            log.error("tournament %s cannot be stored: %s", tournament.tournament_id, exc)
        tournament.start()
        return tournament

    def _tournament_of(
        self, definition: TournamentDef, entries: Sequence[BotEntry]
    ) -> ArenaTournament:
        players: dict[str, Player] = {
            e.bot_id: ClientPlayer(
                e.bot_id,
                e.client,
                capacity=definition.concurrency,
                info={
                    "name": e.name,
                    "transport": e.transport,
                    **({"address": e.address} if e.address else {}),
                },
            )
            for e in entries
        }
        engine = Tournament(
            definition,
            self.store,
            players=players,
            concurrency=definition.concurrency,
            standings_interval=self.standings_interval,
            faults={e.bot_id: e.faults for e in entries},
            on_record=self._store_tournament_record,
        )
        return ArenaTournament(engine)

    def _check_ready(self, entries: Sequence[BotEntry]) -> None:
        """Every bot can play now: a server bot answers GetInfo with its token, a dial-out bot
        is connected (waiting up to the verify timeout). Raises :class:`BotNotReadyError`."""
        for entry in entries:
            if isinstance(entry.client, DialOutHub):
                hub: DialOutHub = entry.client
                if not wait_until(lambda h=hub: h.connected, self.verify_timeout, 0.02):
                    raise BotNotReadyError(
                        f"dial-out bot {entry.name} is not connected; start it with its token"
                    )
            elif entry.transport == "server" and isinstance(entry.client, GrpcBotClient):
                try:
                    entry.client.get_info(self.verify_timeout)
                except BotError as exc:
                    raise BotNotReadyError(
                        f"server bot {entry.name} at {entry.address} cannot play: {exc}"
                        + (
                            " (start it with the token `nardy arena register` printed)"
                            if entry.client.last_code == grpc.StatusCode.UNAUTHENTICATED
                            else ""
                        )
                    ) from None

    def resume_tournaments(self) -> list[ArenaTournament]:
        """Start again every unfinished tournament this arena created (stored in its database
        before a restart) and not cancelled; games already stored are not played again. A
        tournament whose bots are no longer registered is left as it is (logged)."""
        stored = {r.tournament_id: r for r in self.store.tournaments()}
        resumed: list[ArenaTournament] = []
        for entry in self.registry.tournaments():
            row = stored.get(entry.tournament_id)
            if entry.cancelled or row is None or row.status not in _RESUMABLE:
                continue
            with self._lock:
                if entry.tournament_id in self.tournaments:
                    continue
            try:
                definition = TournamentDef.from_json(row.definition)
                bots = [self.bot(b.name) for b in definition.bots]
                tournament = self._tournament_of(definition, bots)
            except (KeyError, ValueError) as exc:
                log.warning("tournament %s cannot be resumed: %s", entry.tournament_id, exc)
                continue
            tournament.await_bots = tuple(
                b.client for b in bots if isinstance(b.client, DialOutHub)
            )
            tournament.await_timeout = self.resume_wait
            with self._lock:
                self.tournaments[tournament.tournament_id] = tournament
            log.info(
                "resuming tournament %s (%d/%d games stored)",
                row.tournament_id,
                row.games_stored,
                row.games_total,
            )
            tournament.start()
            resumed.append(tournament)
        return resumed

    def cancel_tournament(self, tournament_id: str) -> str:
        """Cancel a tournament (no new games, games in progress aborted, never resumed);
        returns its status after the call. Raises :class:`KeyError` for an unknown one."""
        with self._lock:
            live = self.tournaments.get(tournament_id)
        known = {e.tournament_id for e in self.registry.tournaments()}
        if live is None and tournament_id not in known:
            raise KeyError(tournament_id)
        if live is not None and live.done.is_set() and live.status in _REVEALED:
            return live.status
        stored = [r for r in self.store.tournaments() if r.tournament_id == tournament_id]
        if stored and stored[0].status in ("finished", "stopped", "cancelled") and live is None:
            return stored[0].status
        self.registry.cancel_tournament(tournament_id)
        if live is not None and not live.done.is_set():
            live.cancel()
            live.done.wait()
            return live.status
        self.store.set_status(tournament_id, "cancelled", "cancelled by the operator")
        if stored:
            seed = int(stored[0].definition.get("seed") or 0)
            if live is not None:
                live.cancelled = True
                live.engine.reveal_dice()
            elif seed and public_dice(self.store, tournament_id) is not None:
                reveal_dice(self.store, tournament_id, seed)
        return "cancelled"

    def tournament(self, tournament_id: str) -> ArenaTournament:
        """A tournament this arena runs (or ran); raises :class:`KeyError`."""
        with self._lock:
            return self.tournaments[tournament_id]

    def bot_names(self) -> dict[str, str]:
        """Bot id -> display name of every registered bot."""
        return {e.bot_id: e.name for e in self.bots}

    def standings(self, tournament_id: str) -> _arena_pb2.GetStandingsResponse:
        """``GetStandings``: a tournament of this arena, or one stored in its database (e.g.
        run before a restart, or by ``nardy arena run`` into the same file); raises
        :class:`KeyError` when neither has it."""
        with self._lock:
            live = self.tournaments.get(tournament_id)
        names = self.bot_names()
        if live is not None:
            table = live.standings()
            if live.status == "cancelled":  # the engine says "interrupted"
                table = dataclasses.replace(table, status="cancelled")
            return standings_to_proto(
                table, seed=live.revealed_seed, names=names, sprt=live.sprt, dice=live.engine.dice
            )
        rows = [r for r in self.store.tournaments() if r.tournament_id == tournament_id]
        if not tournament_id or not rows:
            raise KeyError(tournament_id)
        standings = standings_from_store(self.store, tournament_id)
        bots = {b.bot for pool in standings.pools for b in pool.bots}
        names.update(_names_from_records(self.store, tournament_id, bots - set(names)))
        definition = rows[0].definition
        return standings_to_proto(
            standings,
            seed=int(definition.get("seed") or 0) if rows[0].status in _REVEALED else 0,
            names=names,
            sprt=TournamentDef.from_json(definition).sprt,
            dice=public_dice(self.store, tournament_id),
        )

    def public_view(self, tournament_id: str) -> PublicView | None:
        """What anyone may see of a stored tournament while rounds of it are sealed
        (:mod:`nardy.arena.service.public`); None when nothing is withheld (no duplicate dice, the seed
        published, or no round being played). Cached per live tournament until it stores
        another game or changes status; one computation at a time."""
        with self._lock:
            live = self.tournaments.get(tournament_id)
            flight = self._public_locks.setdefault(tournament_id, threading.Lock())
        if live is None:
            return self._public_view(tournament_id)
        with flight:
            key = (live.engine.tally.games_stored, live.status)
            cached = self._public.get(tournament_id)
            if cached is not None and cached[0] == key:
                return cached[1]
            view = self._public_view(tournament_id)
            self._public[tournament_id] = (key, view)
            return view

    def _public_view(self, tournament_id: str) -> PublicView | None:
        if not isinstance(self.store, SqlStore):
            return None
        rows = [r for r in self.store.tournaments() if r.tournament_id == tournament_id]
        if not rows:
            return None
        try:
            definition = TournamentDef.from_json(rows[0].definition)
        except (KeyError, TypeError, ValueError):
            return None
        view = public_view(self.store, rows[0], definition)
        return view if view.sealed else None

    def public_standings(self, view: PublicView) -> _arena_pb2.GetStandingsResponse:
        """``GetStandings`` of the games of a tournament's unsealed rounds only (made once per
        view; never changed by callers)."""
        tournament_id = view.row.tournament_id
        with self._lock:
            made = self._public_tables.get(tournament_id)
        if made is not None and made[0] is view:
            return made[1]
        table = self._public_table(view)
        with self._lock:
            self._public_tables[tournament_id] = (view, table)
        return table

    def _public_table(self, view: PublicView) -> _arena_pb2.GetStandingsResponse:
        tournament_id = view.row.tournament_id
        definition = TournamentDef.from_json(view.row.definition)
        table = standings_from_aggregates(
            definition,
            view.totals,
            tournament_id=tournament_id,
            status=self.tournament_status(tournament_id),
            detail=view.row.detail,
        )
        return standings_to_proto(
            table,
            seed=0,
            names=self.bot_names(),
            sprt=definition.sprt,
            dice=public_dice(self.store, tournament_id),
        )

    def tournament_status(self, tournament_id: str) -> str:
        """The status of a live or stored tournament (``cancelled`` included)."""
        with self._lock:
            live = self.tournaments.get(tournament_id)
        if live is not None:
            return live.status
        for row in self.store.tournaments():
            if row.tournament_id == tournament_id:
                return row.status
        raise KeyError(tournament_id)

    def list_tournaments(self, *, public: bool = False) -> _arena_pb2.ListTournamentsResponse:
        """``ListTournaments``: every tournament in the arena's database, newest first
        (``public``: games of sealed rounds not counted)."""
        names = self.bot_names()
        out = _arena_pb2.ListTournamentsResponse()
        for row in sorted(self.store.tournaments(), key=lambda r: -r.created):
            try:
                status = self.tournament_status(row.tournament_id)
                definition = TournamentDef.from_json(row.definition)
            except (KeyError, ValueError, TypeError):
                continue
            with self._lock:
                live = self.tournaments.get(row.tournament_id)
            played = live.standings().units_done if live is not None else None
            view = self.public_view(row.tournament_id) if public else None
            if view is not None:
                played = sum(v[1] for v in view.totals.pools.values())
            if played is None:
                played = standings_from_store(self.store, row.tournament_id).units_done
            item = out.tournaments.add(
                tournament_id=row.tournament_id,
                name=row.name,
                status=_PROTO_STATUS.get(status, _arena_pb2.TOURNAMENT_STATUS_UNSPECIFIED),
                games_played=played,
                games_total=row.games_total,
                bot_names=[names.get(b.name, b.name) for b in definition.bots],
                pools=[p.label for p in definition.pools],
            )
            item.created.FromNanoseconds(int(row.created * 1e9))
        return out

    def list_games(
        self,
        tournament_id: str,
        *,
        bot: str = "",
        termination: str = "",
        limit: int = 0,
        public: bool = False,
    ) -> _arena_pb2.ListGamesResponse:
        """``ListGames``: a tournament's stored games, filtered (``public``: not those of sealed
        rounds); raises :class:`KeyError`."""
        self.tournament_status(tournament_id)
        view = self.public_view(tournament_id) if public else None
        names = self.bot_names()
        wanted: str | None = None
        if bot:
            try:
                wanted = self.bot_by_name_or_id(bot).bot_id
            except KeyError:
                wanted = bot
        rows = [
            r
            for r in self.store.games(tournament_id)
            if (wanted is None or wanted in (r.white, r.black))
            and (not termination or r.termination == termination)
            and (view is None or view.shows(r))
        ]
        if limit > 0:
            rows = rows[-limit:]
        out = _arena_pb2.ListGamesResponse()
        for r in rows:
            game = out.games.add(
                game_id=r.game_id,
                match_id=r.unit_id,
                white_bot_id=r.white,
                white_name=names.get(r.white, r.white),
                black_bot_id=r.black,
                black_name=names.get(r.black, r.black),
                result=_result_proto(
                    {
                        "winner": None if r.winner is None else COLOURS[r.winner],
                        "points": r.points,
                        "termination": r.termination,
                    }
                ),
            )
            game.finished.FromNanoseconds(int(r.finished * 1e9))
        return out

    def export_records(self, tournament_id: str) -> Iterator[str]:
        """The JSON records of a tournament's stored games, one line each."""
        self.tournament_status(tournament_id)
        for row in self.store.games(tournament_id, records=True):
            yield json.dumps(row.record, sort_keys=True, separators=(",", ":"))

    def list_bots(self) -> _arena_pb2.ListBotsResponse:
        """``ListBots``: every registered bot, without tokens."""
        out = _arena_pb2.ListBotsResponse()
        for e in self.bots:
            item = out.bots.add(
                bot_id=e.bot_id,
                name=e.name,
                kind=e.transport,
                address=e.address,
                connected=e.connected,
                faults=e.faults.total,
                disqualified=e.faults.disqualified,
            )
            if e.seen is not None:
                item.last_seen.FromNanoseconds(int(e.seen * 1e9))
        return out

    # -- shutdown ---------------------------------------------------------------------------------

    def shutdown(self, grace: float = 5.0) -> None:
        """Start no new games; let running games finish for ``grace`` seconds, then stop them
        before their next decision (recorded as ``aborted``, never dropped; a tournament's are
        not stored, and the tournament ends ``interrupted``); close streams, local bot processes
        and the tournament database."""
        self.closing = True
        deadline = time.monotonic() + grace
        with self._lock:
            running = list(self._running)
            tournaments = list(self.tournaments.values())
        for t in tournaments:  # no new games; the running ones may finish (and are stored)
            t.engine.stop(finish_running=True)
        _, not_done = futures.wait(running, timeout=grace)
        unfinished = [
            t for t in tournaments if not t.done.wait(max(0.0, deadline - time.monotonic()))
        ]
        if not_done:
            log.warning("stopping %d running game(s)", len(not_done))
            self._stop.set()
            futures.wait(not_done)
        if unfinished:
            # Their running games stop before the next decision; as aborted games they are not
            # stored (a resumed run plays them again).
            log.warning("stopping %d running tournament(s)", len(unfinished))
            for t in unfinished:
                t.engine.stop()
            for t in unfinished:
                t.done.wait()
        for entry in self.bots:
            if isinstance(entry.client, DialOutHub):
                entry.client.close_stream(
                    _arena_pb2.ERROR_CODE_SHUTTING_DOWN, "the arena is shutting down", "UNAVAILABLE"
                )
            if entry.process is not None:
                entry.process.stop()
            entry.client.close()
        self._pool.shutdown(wait=True)
        self.store.close()


def _names_from_records(store: Store, tournament_id: str, bots: set[str]) -> dict[str, str]:
    """Display names of ``bots`` from the seats of their first stored game records (bots of a
    tournament stored by an earlier arena process are no longer registered)."""
    names: dict[str, str] = {}
    if not bots:
        return names
    for row in store.games(tournament_id):
        wanted = [(c, b) for c, b in (("white", row.white), ("black", row.black)) if b in bots]
        wanted = [(c, b) for c, b in wanted if b not in names]
        if not wanted:
            continue
        try:
            record = store.find_game(row.game_id, tournament_id).record or {}
        except StorageError:
            continue
        for colour, bot in wanted:
            seat = record.get(colour)
            if isinstance(seat, dict) and seat.get("name"):
                names[bot] = str(seat["name"])
        if bots <= set(names):
            break
    return names


# -- the servicer --------------------------------------------------------------------------------


def _connect_request_parser(
    max_message_bytes: int,
) -> Callable[[bytes], _arena_pb2.ConnectRequest | Undecodable]:
    """Connect's tolerant decoder: undecodable bytes become :class:`Undecodable` (a counted
    ``malformed`` fault) instead of an anonymous stream failure. gRPC itself refuses a message
    over ``max_message_bytes`` before it gets here; the size check stays for a transport that
    would not."""

    def parse(data: bytes) -> _arena_pb2.ConnectRequest | Undecodable:
        if len(data) > max_message_bytes:
            return Undecodable(len(data), f"oversized: more than {max_message_bytes} bytes")
        try:
            return _arena_pb2.ConnectRequest.FromString(data)
        except Exception as exc:
            return Undecodable(len(data), str(exc))

    return parse


def _no_tournament(request: Any, exc: KeyError) -> str:
    return f"no tournament {request.tournament_id!r}"


class ArenaServicer:
    """``nardy.arena.v1.ArenaService``: translate messages, call :class:`Arena`."""

    def __init__(
        self,
        arena: Arena,
        auth: Authenticator | None = None,
        *,
        executor: futures.Executor | None = None,
        hellos: PendingHellos | None = None,
    ) -> None:
        """:param auth: checks the admin token of state-changing calls; None: no check (an
            in-process arena; :class:`ArenaServer` always passes one when given a token).
        :param executor: where the async handlers run blocking work (the unary calls' pool).
        :param hellos: the budget and deadline of ``Connect`` streams until their Hello; None:
            neither (a stream may wait for ever)."""
        self.arena = arena
        self.auth = auth or Authenticator(None)
        self.executor = executor
        self.hellos = hellos
        self._feeds: dict[tuple[str, bool], TournamentFeed] = {}
        """Live tournaments' events for the watchers (used on the server's event loop only)."""

    def _caller(self, context: Any) -> Caller:
        return self.caller_of_token(bearer_token(context.invocation_metadata() or ()))

    def caller_of_token(self, token: str | None) -> Caller:
        """Who presents ``token`` (None: no token)."""
        is_bot = token is not None and self.arena.bot_for_token(token) is not None
        return self.auth.caller(token, is_bot)

    def _admin_refusal(self, context: Any) -> tuple[grpc.StatusCode, str] | None:
        """None when the call carries the admin token, else the status to end it with:
        UNAUTHENTICATED without a token or with an unknown one, PERMISSION_DENIED with a bot's."""
        caller = self._caller(context)
        if caller == "bot":
            return (
                grpc.StatusCode.PERMISSION_DENIED,
                "a bot's token cannot do this; use the admin token",
            )
        if caller != "admin":
            return (
                grpc.StatusCode.UNAUTHENTICATED,
                "this call needs the admin token (authorization: Bearer <token>)"
                if caller == "anonymous"
                else "unknown token",
            )
        return None

    def _require_admin(self, context: Any) -> None:
        """Refuse the call unless it carries the admin token (checked again here though the
        server's :class:`~nardy.arena.service.streams.Gate` checked it before reading the request)."""
        refusal = self._admin_refusal(context)
        if refusal is not None:
            raise Refused(*refusal)

    @grpc_errors()
    def RegisterBot(
        self, request: _arena_pb2.RegisterBotRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.RegisterBotResponse:
        self._require_admin(context)
        info = request.info if request.HasField("info") else None
        if not request.name:
            # The operator's API makes the name the bot's id: a made-up one would surprise.
            raise ValueError("the bot name is empty")
        transport = request.WhichOneof("transport")
        if transport == "server":
            if request.server.use_tls:
                raise NotImplementedError("TLS bot servers are not supported yet")
            try:
                entry = self.arena.register_server_bot(
                    request.name, request.server.address, info=info, unique=True
                )
            except BotError as exc:
                raise Refused(grpc.StatusCode.UNAVAILABLE, f"GetInfo failed: {exc}") from None
        elif transport == "dial_out":
            entry = self.arena.register_dial_out_bot(request.name, info=info, unique=True)
        else:
            raise ValueError("set server or dial_out")
        return _arena_pb2.RegisterBotResponse(bot_id=entry.bot_id, token=entry.token)

    @grpc_errors()
    async def Connect(
        self,
        request_iterator: AsyncIterator[_arena_pb2.ConnectRequest | Undecodable],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[_arena_pb2.ConnectResponse]:
        """A dial-out bot's stream: a coroutine on the server's event loop (no thread). Until
        its Hello names a dial-out bot's token it counts against the budget of silent streams
        (:class:`~nardy.arena.service.streams.PendingHellos`) and must send that Hello in time."""
        slot = None
        try:
            if self.hellos is not None:
                first, slot, requests = await self.hellos.first_message(request_iterator, context)
            else:
                requests = request_iterator.__aiter__()
                first = await requests.__anext__()
        except (StopAsyncIteration, grpc.RpcError, asyncio.CancelledError):
            return
        if first is None:
            return
        try:
            async for item in self._connect(first, requests, context, slot):
                yield item
        finally:
            if slot is not None:
                slot.release()

    async def _connect(
        self,
        first: _arena_pb2.ConnectRequest | Undecodable,
        requests: AsyncIterator[_arena_pb2.ConnectRequest | Undecodable],
        context: grpc.aio.ServicerContext[Any, Any],
        slot: Any,
    ) -> AsyncIterator[_arena_pb2.ConnectResponse]:
        if isinstance(first, Undecodable) or first.WhichOneof("message") != "hello":
            yield _error(_arena_pb2.ERROR_CODE_PROTOCOL, "the first message must be Hello")
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello")
        assert isinstance(first, _arena_pb2.ConnectRequest)
        entry = self.arena.bot_for_token(first.hello.token)
        if entry is None or not isinstance(entry.client, DialOutHub):
            yield _error(_arena_pb2.ERROR_CODE_UNAUTHENTICATED, "unknown token")
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "unknown token")
        assert entry is not None and isinstance(entry.client, DialOutHub)
        if self.arena.closing:
            yield _error(_arena_pb2.ERROR_CODE_SHUTTING_DOWN, "the arena is shutting down")
            raise ArenaClosedError("the arena is shutting down")
        if slot is not None:
            slot.release()  # a known bot's one stream: bounded by the registrations
        loop = asyncio.get_running_loop()
        outbox: asyncio.Queue[_arena_pb2.ConnectResponse | None] = asyncio.Queue()

        def put(item: _arena_pb2.ConnectResponse | None) -> None:
            # Called from game threads and from this loop; a closed loop has no one to tell.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(outbox.put_nowait, item)

        hub = entry.client
        conn = Connection(hub.flood, put)
        entry.last_seen = time.time()
        hub.attach(conn, first.hello)

        async def read() -> None:
            try:
                async for message in requests:
                    entry.last_seen = time.time()
                    hub.on_message(conn, message)
                    if conn.closed:
                        return
            except Exception:  # the stream broke (the bot went away, or sent too much)
                pass
            finally:
                hub.detach(conn)

        reader = asyncio.ensure_future(read())
        try:
            while True:
                item = await outbox.get()
                if item is None:
                    break
                yield item
        finally:
            reader.cancel()
            hub.detach(conn)
        if conn.abort is not None:
            code, details = conn.abort
            raise Refused(getattr(grpc.StatusCode, code), details)

    @grpc_errors(not_found=lambda request, exc: f"unknown bot {exc}")
    def CreateTournament(
        self, request: _arena_pb2.CreateTournamentRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.CreateTournamentResponse:
        self._require_admin(context)
        if request.format not in _FORMATS:
            raise ValueError(
                f"format {request.format}: use TOURNAMENT_FORMAT_ROUND_ROBIN (1) or "
                "TOURNAMENT_FORMAT_GAUNTLET (2)"
            )
        tc = request.time_control
        time_control = None
        if tc.HasField("per_decision") or tc.HasField("per_game"):
            default = self.arena.time_control
            time_control = TimeControl(
                per_decision=(
                    convert.seconds(tc.per_decision)
                    if tc.HasField("per_decision")
                    else default.per_decision
                ),
                reserve=convert.seconds(tc.per_game),
            )
        tournament = self.arena.create_tournament(
            list(request.bot_ids),
            name=request.name,
            variant=request.variant.name or "long",
            options=dict(request.variant.options),
            gauntlet=request.format == _arena_pb2.TOURNAMENT_FORMAT_GAUNTLET,
            games_per_pairing=request.games_per_pairing or 2,
            match_length=request.match_length,
            seed=request.seed,
            time_control=time_control,
            concurrency=request.concurrency or 4,
            sprt=(
                convert.sprt_settings_from_proto(request.sprt) if request.HasField("sprt") else None
            ),
        )
        response = _arena_pb2.CreateTournamentResponse(
            tournament_id=tournament.tournament_id, games_total=tournament.units_total
        )
        if tournament.engine.dice is not None:
            response.dice.CopyFrom(dice_to_proto(tournament.engine.dice))
        return response

    @grpc_errors(not_found=_no_tournament)
    def GetStandings(
        self, request: _arena_pb2.GetStandingsRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.GetStandingsResponse:
        if self._caller(context) != "admin":
            view = self.arena.public_view(request.tournament_id)
            if view is not None:
                return self.arena.public_standings(view)
        return self.arena.standings(request.tournament_id)

    @grpc_errors(not_found=_no_tournament)
    async def WatchTournament(
        self,
        request: _arena_pb2.WatchTournamentRequest,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[bytes]:
        """Events as they happen, as serialized ``WatchTournamentResponse`` messages: a
        coroutine following the tournament's :class:`~nardy.arena.service.feed.TournamentFeed` (no
        thread per watcher, each event translated once); the stream limits apply
        (:class:`~nardy.arena.service.streams.Gate`)."""
        loop = asyncio.get_running_loop()
        try:
            tournament = self.arena.tournament(request.tournament_id)
        except KeyError:
            try:
                await loop.run_in_executor(
                    self.executor, self.arena.standings, request.tournament_id
                )
            except StorageError:
                raise KeyError(request.tournament_id) from None
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"tournament {request.tournament_id!r} is stored but not run by this arena "
                "process (no live events); use GetStandings",
            ) from None
        public = self._caller(context) != "admin"
        key = (tournament.tournament_id, public)
        feed = self._feeds.get(key)
        if feed is None:
            feed = self._feed(tournament, public, loop)
        try:
            async for data in feed.follow(request.replay):
                yield data
        finally:
            if feed.ended and feed.followers == 0:
                self._feeds.pop(key, None)

    def _feed(
        self, tournament: ArenaTournament, public: bool, loop: asyncio.AbstractEventLoop
    ) -> TournamentFeed:
        """The tournament's feed for the admin or for everyone else (``public``: the games of
        sealed rounds left out, see :meth:`_public_event`); one of each per tournament."""
        translate = EventTranslator(
            names=self.arena.bot_names(), sprt=tournament.sprt, dice=lambda: tournament.engine.dice
        )

        shown: list[int] = []

        async def serialized(event: TournamentEvent) -> bytes | None:
            message = await self._watch_message(translate, tournament, event)
            if public:
                keep = await loop.run_in_executor(
                    self.executor,
                    self._public_event,
                    tournament.tournament_id,
                    message,
                    shown,
                )
                if not keep:
                    return None
            return message.SerializeToString()

        feed = TournamentFeed(tournament.engine, serialized, loop)
        self._feeds[(tournament.tournament_id, public)] = feed
        return feed

    async def _watch_message(
        self, translate: EventTranslator, tournament: ArenaTournament, event: TournamentEvent
    ) -> _arena_pb2.WatchTournamentResponse:
        message = translate(event)
        if message.WhichOneof("event") == "tournament_ended":
            # The seed is revealed with the end, once no game can be played any more.
            ended = message.tournament_ended
            if tournament.cancelled:
                ended.status = _arena_pb2.TOURNAMENT_STATUS_CANCELLED
            await asyncio.get_running_loop().run_in_executor(
                self.executor, tournament.done.wait, 5.0
            )
            ended.standings.seed = tournament.revealed_seed
            dice = tournament.engine.dice
            if dice is not None and dice.revealed:
                ended.standings.dice.CopyFrom(dice_to_proto(dice))
        return message

    def _public_event(
        self, tournament_id: str, message: _arena_pb2.WatchTournamentResponse, shown: list[int]
    ) -> bool:
        """Whether a watcher without the admin token gets ``message`` (changed in place to its
        public form): while rounds are sealed, no game events (their moments tell the dice
        too) and standings of the unsealed rounds only, sent when those change. ``shown``: the
        public game counts sent so far."""
        kind = message.WhichOneof("event")
        if kind not in ("game_started", "game_ended", "standings_updated", "tournament_started"):
            return True
        view = self.arena.public_view(tournament_id)
        if view is None:
            return True
        if kind in ("game_started", "game_ended"):
            return False
        standings = self.arena.public_standings(view)
        if kind == "tournament_started":
            message.tournament_started.standings.CopyFrom(standings)
            return True
        if shown and shown[-1] == view.row.games_stored:
            return False
        shown.append(view.row.games_stored)
        message.standings_updated.standings.CopyFrom(standings)
        return True

    @grpc_errors(not_found=_no_tournament)
    def CancelTournament(
        self, request: _arena_pb2.CancelTournamentRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.CancelTournamentResponse:
        self._require_admin(context)
        status = self.arena.cancel_tournament(request.tournament_id)
        return _arena_pb2.CancelTournamentResponse(
            status=_PROTO_STATUS.get(status, _arena_pb2.TOURNAMENT_STATUS_UNSPECIFIED)
        )

    @grpc_errors()
    def ListBots(
        self, request: _arena_pb2.ListBotsRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.ListBotsResponse:
        return self.arena.list_bots()

    @grpc_errors(not_found=lambda request, exc: f"no bot {request.bot!r}")
    def AskBot(
        self, request: _arena_pb2.AskBotRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.AskBotResponse:
        self._require_admin(context)
        return _arena_pb2.AskBotResponse(answer=self.arena.ask_bot(request.bot, request.request))

    @grpc_errors()
    def ListTournaments(
        self, request: _arena_pb2.ListTournamentsRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.ListTournamentsResponse:
        return self.arena.list_tournaments(public=self._caller(context) != "admin")

    @grpc_errors(not_found=_no_tournament)
    def ListGames(
        self, request: _arena_pb2.ListGamesRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.ListGamesResponse:
        if request.limit < 0:
            raise ValueError("limit must be >= 0")
        return self.arena.list_games(
            request.tournament_id,
            bot=request.bot,
            termination=request.termination,
            limit=request.limit,
            public=self._caller(context) != "admin",
        )

    @grpc_errors(not_found=_no_tournament)
    async def ExportGames(
        self, request: _arena_pb2.ExportGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[_arena_pb2.ExportGamesResponse]:
        """The records of a tournament, read on the thread pool, sent from the event loop (a
        slow reader holds no thread)."""
        loop = asyncio.get_running_loop()
        status = self.arena.tournament_status(request.tournament_id)
        if status not in _REVEALED:
            # Records hold the dice: a finished game's rolls are its duplicate partner's.
            self._require_admin(context)
        lines = await loop.run_in_executor(
            self.executor, lambda: list(self.arena.export_records(request.tournament_id))
        )
        for line in lines:
            yield _arena_pb2.ExportGamesResponse(record_json=line)


def _error(code: int, message: str) -> _arena_pb2.ConnectResponse:
    return _arena_pb2.ConnectResponse(
        error=_arena_pb2.Error(code=code, message=message, fatal=True)  # type: ignore[arg-type]
    )


def _serialized(message: bytes | Message) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def add_arena_servicer(
    servicer: ArenaServicer,
    server: grpc.Server | grpc.aio.Server,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    *,
    plain_unary_only: bool = False,
) -> None:
    """Register the servicer like the generated ``add_ArenaServiceServicer_to_server``, with the
    table read from the service's descriptor (each method's streaming and message types), so an
    RPC added to ``arena.proto`` needs only its method on :class:`ArenaServicer`. Two entries
    differ from the generated ones: Connect's requests are decoded tolerantly (undecodable bytes
    become a counted ``malformed`` fault instead of an anonymous stream failure), and
    WatchTournament's feed hands over messages serialized once for all its watchers.
    ``plain_unary_only``: only the unary methods that are plain functions (the operator's
    threaded listener cannot run the streams, which are coroutines)."""
    decoders: dict[str, Callable[[bytes], Any]] = {
        "Connect": _connect_request_parser(max_message_bytes)
    }
    encoders: dict[str, Callable[[Any], bytes]] = {"WatchTournament": _serialized}
    kinds = {
        (False, False): grpc.unary_unary_rpc_method_handler,
        (False, True): grpc.unary_stream_rpc_method_handler,
        (True, False): grpc.stream_unary_rpc_method_handler,
        (True, True): grpc.stream_stream_rpc_method_handler,
    }
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in ARENA_SERVICE.methods:
        behaviour = getattr(servicer, method.name)
        streaming = (method.client_streaming, method.server_streaming)
        if plain_unary_only and (
            streaming != (False, False) or inspect.iscoroutinefunction(behaviour)
        ):
            continue
        handlers[method.name] = kinds[streaming](
            behaviour,
            request_deserializer=decoders.get(
                method.name, GetMessageClass(method.input_type).FromString
            ),
            response_serializer=encoders.get(
                method.name, GetMessageClass(method.output_type).SerializeToString
            ),
        )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(ARENA_SERVICE_NAME, handlers),)
    )


# -- the server ----------------------------------------------------------------------------------


class ArenaServer:
    """The arena's gRPC server: ArenaService, health (``grpc.health.v1``), reflection.

    It is a ``grpc.aio`` server on an event loop of its own thread: streams (``Connect``,
    ``WatchTournament``, ``ExportGames``, health ``Watch``, reflection) are coroutines, so a
    thousand open streams cost no threads, and the unary calls run on a pool of
    ``max_workers`` threads that streams never occupy. Streams and unary calls are limited per
    peer and in all, the calls admitted before their request is read, ``Connect`` streams must
    say Hello in time (:mod:`nardy.arena.service.streams`); admin calls without the admin token are
    refused before their request is read, and no request over ``max_message_bytes`` is read.
    The admin's unary calls run on threads of their own, and ``admin_port`` adds the
    operator's own listener.

    ``port=0`` binds a free port (read :attr:`port` after :meth:`start`).
    """

    def __init__(
        self,
        arena: Arena | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_workers: int = 32,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        admin_token: str | None = None,
        max_streams: int = DEFAULT_MAX_STREAMS,
        max_streams_per_peer: int = DEFAULT_MAX_STREAMS_PER_PEER,
        max_calls_per_peer: int = DEFAULT_MAX_CALLS_PER_PEER,
        max_calls: int = DEFAULT_MAX_CALLS,
        hello_timeout: float = DEFAULT_HELLO_TIMEOUT,
        max_pending_hellos: int = DEFAULT_MAX_PENDING_HELLOS,
        admin_port: int | None = None,
        admin_host: str = "127.0.0.1",
    ) -> None:
        """:param admin_token: the token state-changing calls need (``nardy arena serve`` always
            gives one); None: anyone may call them (tests, a private in-process arena).
        :param max_message_bytes: the largest message sent, and read on the operator's port;
            ``max_request_bytes``: the largest read on the public port (at most
            ``max_message_bytes``; :data:`~nardy.arena.service.limits.DEFAULT_MAX_REQUEST_BYTES` says
            why it is small). A larger one is refused unread (``RESOURCE_EXHAUSTED``).
        :param max_workers: threads for the unary calls (streams take none).
        :param max_streams: streams open at once from everyone; ``max_streams_per_peer``: from
            one IP address. The stream over a limit is refused with ``RESOURCE_EXHAUSTED``.
        :param max_calls_per_peer: unary calls in progress (running or waiting) at once from
            one IP address, the admin's not counted; the call over it is refused with
            ``RESOURCE_EXHAUSTED``. ``max_calls``: calls whose request is read and running, from
            everyone; the others wait unread, address by address
            (:class:`~nardy.arena.service.streams.CallQueue`). The admin's calls run on threads of
            their own (:data:`ADMIN_WORKERS`).
        :param hello_timeout: seconds a ``Connect`` may stay open before its Hello;
            ``max_pending_hellos``: such streams open at once, counted apart from
            ``max_streams`` (when full, a new one replaces the oldest of the address holding
            the most, :class:`~nardy.arena.service.streams.PendingHellos`).
        :param admin_port: where the operator's own listener serves (0: a free port; None:
            none), on ``admin_host``: a threaded gRPC server of its own that answers the unary
            calls to the admin token only (anything else is refused unread). A flood of
            anonymous calls on :attr:`port` fills that port's event loop, and every call waits
            its turn there before any priority can apply; the operator's listener is not in
            that line (20 addresses x 250 anonymous calls in flight: admin p99 0.7 to 2.9 s and
            some calls CANCELLED on the public port, about 20 ms on this one; docs/arena.md).
            At most ``4 * ADMIN_WORKERS`` calls at once there (more are refused)."""
        self.arena = arena or Arena()
        self.host = host
        self.max_message_bytes = max_message_bytes
        self.max_request_bytes = min(max_request_bytes, max_message_bytes)
        self.limiter = StreamLimiter(max_streams, max_streams_per_peer)
        self.calls = CallQueue(max_calls, max_calls_per_peer, MAX_WAITING_CALLS)
        self.hellos = PendingHellos(max_pending_hellos, max_streams_per_peer, hello_timeout)
        self._allocator = Allocator()
        self._allocator.tune()
        self._trimmer: asyncio.Future[None] | None = None
        self.executor = futures.ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix="arena-rpc"
        )
        self.admin_executor = futures.ThreadPoolExecutor(
            max_workers=ADMIN_WORKERS, thread_name_prefix="arena-admin"
        )
        self.servicer = ArenaServicer(
            self.arena, Authenticator(admin_token), executor=self.executor, hellos=self.hellos
        )
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="arena-grpc", daemon=True
        )
        self._thread.start()
        self.admin_server: grpc.Server | None = None
        self.admin_host = admin_host
        self.admin_port: int | None = None
        try:
            self.server, self.health, self.port = self._run(self._build(port))
            if admin_port is not None:
                self.admin_server, self.admin_port = self._build_operator(admin_port)
        except BaseException:
            self._close_loop()
            raise
        self._stopped = threading.Event()
        self._transport_stopped = False

    def _run(self, coroutine: Any, timeout: float | None = 30.0) -> Any:
        """Run ``coroutine`` on the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _build(self, port: int) -> tuple[grpc.aio.Server, Any, int]:
        admin = [f"/{ARENA_SERVICE_NAME}/{m}" for m in sorted(ARENA_ADMIN_METHODS)]
        gate = Gate(
            self.limiter,
            admin_methods=admin,
            caller=self.servicer.caller_of_token,
            self_limited=[f"/{ARENA_SERVICE_NAME}/Connect"],
            calls=self.calls,
            pool=self.executor,
            admin_pool=self.admin_executor,
        )
        server = grpc.aio.server(
            migration_thread_pool=self.executor,
            interceptors=[gate],
            options=[
                ("grpc.max_send_message_length", self.max_message_bytes),
                # The real limit: nothing larger is read, from anyone (a dial-out bot's
                # oversized message ends its stream). Small on this port: a stream's message
                # is held whole before anyone looks at it (DEFAULT_MAX_REQUEST_BYTES).
                ("grpc.max_receive_message_length", self.max_request_bytes),
                # No bandwidth-delay probing: a stream's receive window stays at 64 KiB, so
                # a refused (or not yet read) large request is not buffered by the transport.
                # 16 + 16 anonymous 15 MiB calls: +1 MB (with probing, +50 to +180 MB).
                ("grpc.http2.bdp_probe", 0),
            ],
        )
        add_arena_servicer(self.servicer, server, self.max_request_bytes)
        health = _health.aio.HealthServicer()
        _health_pb2_grpc.add_HealthServicer_to_server(health, server)
        _reflection.enable_server_reflection(
            (ARENA_SERVICE_NAME, _health.SERVICE_NAME, _reflection.SERVICE_NAME), server
        )
        bound = server.add_insecure_port(f"{self.host}:{port}")
        if bound == 0:
            raise OSError(f"cannot listen on {self.host}:{port}")
        return server, health, bound

    def _build_operator(self, port: int) -> tuple[grpc.Server, int]:
        """The operator's listener: a threaded server (its own completion queue and threads,
        not the event loop of the public port) on the admin lane's threads."""
        server = grpc.server(
            self.admin_executor,
            interceptors=[OperatorGate(self.servicer.caller_of_token)],
            options=[
                ("grpc.max_send_message_length", self.max_message_bytes),
                ("grpc.max_receive_message_length", self.max_message_bytes),
                ("grpc.http2.bdp_probe", 0),
            ],
            maximum_concurrent_rpcs=4 * ADMIN_WORKERS,
        )
        add_arena_servicer(self.servicer, server, self.max_message_bytes, plain_unary_only=True)
        bound = server.add_insecure_port(f"{self.admin_host}:{port}")
        if bound == 0:
            raise OSError(f"cannot listen on {self.admin_host}:{port} (the admin port)")
        return server, bound

    @property
    def admin_address(self) -> str | None:
        """The operator's listener (``host:port``), or None without one."""
        return None if self.admin_port is None else f"{self.admin_host}:{self.admin_port}"

    def _close_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> ArenaServer:
        if self.admin_server is not None:
            self.admin_server.start()

        async def start() -> None:
            await self.server.start()
            for service in ("", ARENA_SERVICE_NAME):
                await self.health.set(service, _health_pb2.HealthCheckResponse.SERVING)
            self._trimmer = asyncio.ensure_future(self._trim_after_calls())

        self._run(start())
        return self

    async def _trim_after_calls(self, every: float = 5.0) -> None:
        """Every ``every`` seconds in which counted calls came, hand the memory freed since
        back to the system (:class:`~nardy.arena.service.streams.Allocator`): after a flood of large
        anonymous calls the arena returns to within a few MB of idle instead of staying
        where the flood left it."""
        seen = self.calls.acquired
        while True:
            await asyncio.sleep(every)
            if self.calls.acquired != seen:
                seen = self.calls.acquired
                await asyncio.get_running_loop().run_in_executor(
                    self.admin_executor, self._allocator.trim
                )

    def stop_transport(self, grace: float | None = None) -> None:
        """Stop the gRPC server only (the port goes away; the arena and its games stay):
        what a network failure looks like to the bots. Idempotent."""
        if not self._transport_stopped:
            self._transport_stopped = True

            async def stop() -> None:
                if self._trimmer is not None:
                    self._trimmer.cancel()
                await self.server.stop(grace)

            if self.admin_server is not None:
                self.admin_server.stop(grace)
            self._run(stop(), None)

    def stop(self, grace: float = 5.0) -> None:
        """Graceful shutdown: health NOT_SERVING, games finished or recorded as interrupted,
        streams closed, then the server stopped. Idempotent."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if not self._transport_stopped:
            self._run(self.health.enter_graceful_shutdown())
        self.arena.shutdown(grace)
        self.stop_transport(grace)

        async def close_feeds() -> None:
            for feed in self.servicer._feeds.values():
                feed.close()

        self._run(close_feeds())
        self._close_loop()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.admin_executor.shutdown(wait=False, cancel_futures=True)

    def serve_forever(self, grace: float = 5.0) -> None:
        """Run until SIGTERM or SIGINT, then :meth:`stop` gracefully (main thread only)."""
        requested = threading.Event()

        def handler(signum: int, frame: FrameType | None) -> None:
            log.info("signal %s: shutting down", signum)
            requested.set()

        previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            while not requested.wait(0.5):
                pass
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
            self.stop(grace)


def wait_until(predicate: Any, timeout: float, interval: float = 0.005) -> bool:
    """Poll ``predicate`` until true or ``timeout``; for tests and the CLI."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
