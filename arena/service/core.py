"""The arena's service core: registered bots, games run with the kernel, tournaments, over
value types (no protobuf message of the arena's own API: the servicer,
:mod:`nardy.arena.service.servicer`, translates).

:class:`Arena` registers bots (server, dial-out or local process), issues their tokens, runs games
(:func:`nardy.arena.clients.runner.run_game`) on a thread pool, keeps the records (optionally
appended to a JSON-lines file), runs tournaments on the tournament engine
(:class:`nardy.arena.competition.tournament.Tournament`, stored in its database), answers queries
with values (:class:`TournamentTable`, :class:`TournamentListing`, :class:`GameListing`,
:class:`RegisteredBot`), and shuts down gracefully. The bots' own messages (``nardy.bot.v1``) pass
through it as they are: they are the clients' currency (:mod:`nardy.arena.clients`).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import random
import re
import secrets
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import grpc

# grpcio-health-checking and grpcio-reflection ship no type stubs.
from nardy.arena.clients.bot_client import (
    BotClient,
    GrpcBotClient,
)
from nardy.arena.clients.dial_out import DialOutHub, FloodLimit
from nardy.arena.clients.local import LocalBotProcess
from nardy.arena.clients.runner import Seat, run_game
from nardy.arena.competition.schedule import (
    SprtDef,
    TournamentDef,
    parse_definition,
    variants_refused,
)
from nardy.arena.competition.standings import (
    Standings,
    standings_from_aggregates,
    standings_from_store,
)
from nardy.arena.competition.tournament import ClientPlayer, Player, Tournament
from nardy.arena.protocol import bot_pb2 as _bot_pb2
from nardy.arena.records.audit import REVEALED_STATUSES, DiceAudit, public_dice
from nardy.arena.records.audit import reveal as reveal_dice
from nardy.arena.records.storage import MEMORY, GameRow, SqlStore, StorageError, Store, open_store
from nardy.arena.service.auth import (
    hash_token,
    new_token,
    server_bot_token,
)
from nardy.arena.service.limits import (
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
    TournamentExistsError,
)
from nardy.bots.faults import BotError, FaultCounter, FaultKind, FaultPolicy
from nardy.bots.loop import TimeControl
from nardy.core.game import CubeSettings
from nardy.core.plugins import load_variant
from nardy.core.record import GameRecord, MatchInfo

BotRequest = (
    _bot_pb2.ChoosePlayRequest | _bot_pb2.DecideDoubleRequest | _bot_pb2.RespondToDoubleRequest
)
"""A decision request of the bot protocol, as ``AskBot`` passes it on."""
BotResponse = (
    _bot_pb2.ChoosePlayResponse | _bot_pb2.DecideDoubleResponse | _bot_pb2.RespondToDoubleResponse
)
"""A bot's answer to a :data:`BotRequest`."""

__all__ = [
    "Arena",
    "ArenaTournament",
    "BotRequest",
    "BotResponse",
    "GameListing",
    "RegisteredBot",
    "TournamentListing",
    "TournamentTable",
    "wait_until",
]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class RegisteredBot:
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


BotEntry = RegisteredBot
"""Deprecated: the name before 0.3 (``nardy.arena.competition.schedule.BotEntry`` is a tournament
definition's bot, a different thing); removed in the next minor release."""


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


@dataclass(frozen=True, slots=True)
class TournamentTable:
    """A tournament's standings as the arena shows them: the engine's table and what is shown
    beside it (the seed once revealed, the bots' display names, the SPRT's hypotheses, the dice
    commitment). A value: the servicer makes the ``GetStandingsResponse`` of it."""

    standings: Standings
    seed: int = 0
    names: Mapping[str, str] = field(default_factory=dict)
    sprt: SprtDef | None = None
    dice: DiceAudit | None = None


@dataclass(frozen=True, slots=True)
class TournamentListing:
    """One tournament of ``ListTournaments``: its status and counts (games of sealed rounds
    left out for a public caller), and its bots' display names."""

    tournament_id: str
    name: str
    status: str
    games_played: int
    games_total: int
    bot_names: tuple[str, ...]
    pools: tuple[str, ...]
    created: float


@dataclass(frozen=True, slots=True)
class GameListing:
    """One stored game of ``ListGames``: its row and the display names of its two bots."""

    row: GameRow
    white_name: str
    black_name: str


class Arena:
    """Registered bots and the games between them, answering with values (no gRPC server: see
    :class:`~nardy.arena.service.server.ArenaServer`; no message: see
    :mod:`nardy.arena.service.servicer`)."""

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
        self._public_tables: dict[str, tuple[PublicView, TournamentTable]] = {}
        self._bots: dict[str, RegisteredBot] = {}
        self._by_hash: dict[str, RegisteredBot] = {}
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

    def _add(
        self, entry: RegisteredBot, *, persist: bool = False, unique: bool = False
    ) -> RegisteredBot:
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

    def _keep_faults(self, entry: RegisteredBot) -> None:
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
        entry = RegisteredBot(row.bot_id, row.name, token, row.kind, client, info, row.address)  # type: ignore[arg-type]
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
    ) -> RegisteredBot:
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
        entry = RegisteredBot(
            bot_id, name, token, "server", client, info or _bot_pb2.BotInfo(name=name), address
        )
        try:
            return self._add(entry, persist=True, unique=unique)
        except Exception:
            client.close()
            raise

    def register_dial_out_bot(
        self, name: str, *, info: _bot_pb2.BotInfo | None = None, unique: bool = False
    ) -> RegisteredBot:
        """Register a bot that will call ``Connect`` with the returned entry's token (the
        arena keeps only its hash)."""
        name = self._check_name(name)
        bot_id = name if unique else self._new_id("bot")
        hub = DialOutHub(bot_id, reconnect_grace=self.reconnect_grace, flood=self.flood)
        entry = RegisteredBot(
            bot_id, name, new_token(), "dial_out", hub, info or _bot_pb2.BotInfo(name=name)
        )
        return self._add(entry, persist=True, unique=unique)

    def add_local_bot(
        self, name: str, command: Sequence[str], *, max_restarts: int = 10
    ) -> RegisteredBot:
        """Start a bot process (see :mod:`nardy.arena.clients.local`), register it, restart it on crashes."""
        name = self._check_name(name)
        bot_id = f"local-{name}"  # stable: the same --local-bot on every start
        token = server_bot_token(self._secret, bot_id)
        process = LocalBotProcess(command, max_restarts=max_restarts)
        address = process.start()
        client = GrpcBotClient(address, token)
        process.on_address = client.retarget
        entry = RegisteredBot(
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

    def bot(self, bot_id: str) -> RegisteredBot:
        """The registered bot ``bot_id``; raises :class:`KeyError`."""
        with self._lock:
            return self._bots[bot_id]

    @property
    def bots(self) -> list[RegisteredBot]:
        with self._lock:
            return list(self._bots.values())

    def bot_for_token(self, token: str) -> RegisteredBot | None:
        """The bot that owns ``token`` (found by its hash, compared in constant time), or None."""
        digest = hash_token(token)
        with self._lock:
            entry = self._by_hash.get(digest)
        if entry is None or not secrets.compare_digest(entry.token_hash, digest):
            return None
        return entry

    def bot_by_name_or_id(self, key: str) -> RegisteredBot:
        """A registered bot by id or name; raises :class:`KeyError`."""
        with self._lock:
            entry = self._bots.get(key)
            if entry is None:
                entry = next((e for e in self._bots.values() if e.name == key), None)
        if entry is None:
            raise KeyError(key)
        return entry

    def ask_bot(
        self, key: str, request: BotRequest | None, answer_within: float = 0.0
    ) -> BotResponse:
        """``AskBot``: one decision of a game the arena does not run (a person's game on
        ``nardy web --arena``), asked of bot ``key`` (id or name) through its own client, within
        ``answer_within`` seconds (0: unset) and at most the arena's time per decision. Its
        faults are not counted: the game is not the arena's. Raises :class:`KeyError` for an
        unknown bot, :class:`BotNotReadyError` for a disqualified one, :class:`BotError` when it
        fails, and :class:`ValueError` for no request (None: the message asked nothing; the
        bot is checked first, so an unknown one is reported as such)."""
        entry = self.bot_by_name_or_id(key)
        if entry.faults.disqualified:
            raise BotNotReadyError(f"bot {entry.name} is disqualified")
        limit = self.time_control.per_decision
        timeout = min(answer_within, limit) if answer_within > 0 else limit
        if request is None:
            raise ValueError("the request is one of choose_play, decide_double, respond_to_double")
        if isinstance(request, _bot_pb2.ChoosePlayRequest):
            return entry.client.choose_play(request, timeout)
        if isinstance(request, _bot_pb2.DecideDoubleRequest):
            return entry.client.decide_double(request, timeout)
        return entry.client.respond_to_double(request, timeout)

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

    def _store_tournament_record(self, record: GameRecord) -> None:
        """A tournament game's record (already in the database) for the records file."""
        if self.records_path is not None:
            line = json.dumps(record.to_json(), sort_keys=True)
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
        self, definition: TournamentDef, entries: Sequence[RegisteredBot]
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

    def _check_ready(self, entries: Sequence[RegisteredBot]) -> None:
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

    def standings(self, tournament_id: str) -> TournamentTable:
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
            return TournamentTable(
                table, seed=live.revealed_seed, names=names, sprt=live.sprt, dice=live.engine.dice
            )
        rows = [r for r in self.store.tournaments() if r.tournament_id == tournament_id]
        if not tournament_id or not rows:
            raise KeyError(tournament_id)
        standings = standings_from_store(self.store, tournament_id)
        bots = {b.bot for pool in standings.pools for b in pool.bots}
        names.update(_names_from_records(self.store, tournament_id, bots - set(names)))
        definition = rows[0].definition
        return TournamentTable(
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

    def public_standings(self, view: PublicView) -> TournamentTable:
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

    def _public_table(self, view: PublicView) -> TournamentTable:
        tournament_id = view.row.tournament_id
        definition = TournamentDef.from_json(view.row.definition)
        table = standings_from_aggregates(
            definition,
            view.totals,
            tournament_id=tournament_id,
            status=self.tournament_status(tournament_id),
            detail=view.row.detail,
        )
        return TournamentTable(
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

    def list_tournaments(self, *, public: bool = False) -> list[TournamentListing]:
        """``ListTournaments``: every tournament in the arena's database, newest first
        (``public``: games of sealed rounds not counted)."""
        names = self.bot_names()
        out: list[TournamentListing] = []
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
            out.append(
                TournamentListing(
                    tournament_id=row.tournament_id,
                    name=row.name,
                    status=status,
                    games_played=played,
                    games_total=row.games_total,
                    bot_names=tuple(names.get(b.name, b.name) for b in definition.bots),
                    pools=tuple(p.label for p in definition.pools),
                    created=row.created,
                )
            )
        return out

    def list_games(
        self,
        tournament_id: str,
        *,
        bot: str = "",
        termination: str = "",
        limit: int = 0,
        public: bool = False,
    ) -> list[GameListing]:
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
        return [
            GameListing(r, names.get(r.white, r.white), names.get(r.black, r.black)) for r in rows
        ]

    def export_records(self, tournament_id: str) -> Iterator[str]:
        """The JSON records of a tournament's stored games, one line each."""
        self.tournament_status(tournament_id)
        for row in self.store.games(tournament_id, records=True):
            yield json.dumps(row.record, sort_keys=True, separators=(",", ":"))

    def list_bots(self) -> list[RegisteredBot]:
        """``ListBots``: every registered bot, as it stands now (the servicer shows them without
        their tokens)."""
        return self.bots

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
                entry.client.shut_down()
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


def wait_until(predicate: Any, timeout: float, interval: float = 0.005) -> bool:
    """Poll ``predicate`` until true or ``timeout``; for tests and the CLI."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
