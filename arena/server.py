"""The arena: registered bots, games run with the kernel, and the gRPC server around them.

* :class:`Arena` is the plain-Python core: it registers bots (server, dial-out or local process),
  issues their tokens, runs games (:func:`nardy.arena.runner.run_game`) on a thread pool, keeps
  the records (optionally appended to a JSON-lines file), runs simple tournaments, and shuts down
  gracefully.
* :class:`ArenaServicer` is the thin translator between ``nardy.arena.v1`` messages and
  :class:`Arena` calls.
* :class:`ArenaServer` is the gRPC server: the servicer, the standard ``grpc.health.v1`` health
  service, server reflection, message size limits, and SIGTERM/SIGINT handling.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
import secrets
import signal
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Literal

import grpc

# grpcio-health-checking and grpcio-reflection ship no type stubs.
from grpc_health.v1 import health as _health  # type: ignore[import-untyped,unused-ignore]
from grpc_health.v1 import health_pb2 as _health_pb2  # type: ignore[import-untyped,unused-ignore]
from grpc_health.v1 import health_pb2_grpc as _health_pb2_grpc  # type: ignore[import-untyped,unused-ignore]
from grpc_reflection.v1alpha import reflection as _reflection  # type: ignore[import-untyped,unused-ignore]

from nardy.arena import convert
from nardy.arena.bot_client import (
    DEFAULT_MAX_MESSAGE_BYTES,
    BotClient,
    GrpcBotClient,
    channel_options,
)
from nardy.arena.dial_out import Connection, DialOutHub, FloodLimit, Undecodable
from nardy.arena.errors import BotError
from nardy.arena.local import LocalBotProcess
from nardy.arena.protocol import ARENA_SERVICE_NAME
from nardy.arena.protocol import arena_pb2 as _arena_pb2
from nardy.arena.protocol import bot_pb2 as _bot_pb2
from nardy.arena.runner import (
    FaultCounter,
    FaultPolicy,
    GameRecord,
    MatchInfo,
    Seat,
    TimeControl,
    run_game,
)
from nardy.core.game import CubeSettings
from nardy.core.plugins import load_variant

__all__ = ["Arena", "ArenaClosedError", "ArenaServer", "ArenaServicer", "BotEntry", "Tournament"]

log = logging.getLogger(__name__)


class ArenaClosedError(RuntimeError):
    """The arena is shutting down and starts no new games."""


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


@dataclass(slots=True)
class _Row:
    games: int = 0
    wins: int = 0
    losses: int = 0
    forfeits: int = 0
    net_points: int = 0


class Tournament:
    """A round robin or gauntlet between registered bots, ``games_per_pairing`` games each.

    Colours alternate within a pairing and consecutive games share their dice (duplicate pairs).
    """

    def __init__(
        self,
        arena: Arena,
        tournament_id: str,
        bot_ids: Sequence[str],
        *,
        variant: str,
        options: Mapping[str, Any],
        gauntlet: bool,
        games_per_pairing: int,
        seed: int,
        time_control: TimeControl | None,
        concurrency: int,
    ) -> None:
        self.arena = arena
        self.tournament_id = tournament_id
        self.bot_ids = list(bot_ids)
        self.seed = seed
        self.status = _arena_pb2.TOURNAMENT_STATUS_PENDING
        self.rows = {b: _Row() for b in self.bot_ids}
        self.records: list[GameRecord] = []
        self._lock = threading.Lock()
        first = self.bot_ids[:1] if gauntlet else self.bot_ids
        pairings = [
            (a, b) for a, b in itertools.combinations(self.bot_ids, 2) if not gauntlet or a in first
        ]
        self.schedule: list[tuple[str, str, int]] = []
        for p, (a, b) in enumerate(pairings):
            for g in range(games_per_pairing):
                game_seed = (seed * 1_000_003 + p * 1009 + g // 2) % 2**63
                self.schedule.append((a, b, game_seed) if g % 2 == 0 else (b, a, game_seed))
        self._variant, self._options = variant, dict(options)
        self._time_control = time_control
        self._semaphore = threading.Semaphore(max(1, concurrency))
        self.done = threading.Event()

    def start(self) -> None:
        self.status = _arena_pb2.TOURNAMENT_STATUS_RUNNING
        threading.Thread(target=self._run, name=f"tournament-{self.tournament_id}", daemon=True).start()

    def _run(self) -> None:
        pending: list[futures.Future[GameRecord]] = []
        try:
            for white, black, game_seed in self.schedule:
                self._semaphore.acquire()
                try:
                    future = self.arena.start_game(
                        white, black, variant=self._variant, options=self._options, seed=game_seed,
                        time_control=self._time_control, match_id=self.tournament_id,
                    )
                except (ArenaClosedError, KeyError):
                    self._semaphore.release()
                    self.status = _arena_pb2.TOURNAMENT_STATUS_CANCELLED
                    break
                future.add_done_callback(self._finished)
                pending.append(future)
            futures.wait(pending)
        finally:
            if self.status == _arena_pb2.TOURNAMENT_STATUS_RUNNING:
                self.status = _arena_pb2.TOURNAMENT_STATUS_FINISHED
            self.done.set()

    def _finished(self, future: futures.Future[GameRecord]) -> None:
        self._semaphore.release()
        record = future.result()
        outcome = record.outcome
        with self._lock:
            self.records.append(record)
            if outcome is None or outcome.winner is None:
                return
            ids = (record.bots[0]["bot_id"], record.bots[1]["bot_id"])
            winner, loser = ids[outcome.winner], ids[1 - outcome.winner]
            for bot, won in ((winner, True), (loser, False)):
                row = self.rows[bot]
                row.games += 1
                row.wins += won
                row.losses += not won
                row.net_points += outcome.points if won else -outcome.points
            if outcome.termination in ("time_forfeit", "bot_failure"):
                self.rows[loser].forfeits += 1

    def standings(self) -> _arena_pb2.GetStandingsResponse:
        with self._lock:
            order = sorted(self.bot_ids, key=lambda b: (-self.rows[b].net_points, -self.rows[b].wins))
            response = _arena_pb2.GetStandingsResponse(
                tournament_id=self.tournament_id,
                status=self.status,
                games_played=len(self.records),
                games_total=len(self.schedule),
                seed=self.seed,
            )
            rank = 0
            previous: tuple[int, int] | None = None
            for i, bot_id in enumerate(order, 1):
                row = self.rows[bot_id]
                key = (row.net_points, row.wins)
                if key != previous:
                    rank, previous = i, key
                response.standings.add(
                    rank=rank, bot_id=bot_id, bot_name=self.arena.bot(bot_id).name, games=row.games,
                    wins=row.wins, losses=row.losses, forfeits=row.forfeits,
                    net_points=row.net_points,
                )
            return response


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
    ) -> None:
        self.time_control = time_control or TimeControl()
        self.policy = policy or FaultPolicy()
        self.reconnect_grace = reconnect_grace
        self.flood = flood or FloodLimit()
        self.records_path = records_path
        self.verify_timeout = verify_timeout
        self.records: list[GameRecord] = []
        self.tournaments: dict[str, Tournament] = {}
        self._bots: dict[str, BotEntry] = {}
        self._by_token: dict[str, BotEntry] = {}
        self._lock = threading.Lock()
        self._records_lock = threading.Lock()
        self._pool = futures.ThreadPoolExecutor(max_workers=max_games, thread_name_prefix="game")
        self._running: set[futures.Future[GameRecord]] = set()
        self._stop = threading.Event()
        self.closing = False
        self._ids = itertools.count(1)

    # -- bots -------------------------------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}-{uuid.uuid4().hex[:8]}"

    def _add(self, entry: BotEntry) -> BotEntry:
        with self._lock:
            self._bots[entry.bot_id] = entry
            self._by_token[entry.token] = entry
        return entry

    def register_server_bot(
        self, name: str, address: str, *, info: _bot_pb2.BotInfo | None = None, verify: bool = True
    ) -> BotEntry:
        """Register a ``BotService`` server; with ``verify``, its ``GetInfo`` must answer.

        Raises :class:`BotError` when the bot cannot be reached.
        """
        token = secrets.token_urlsafe(24)
        client = GrpcBotClient(address, token)
        if verify:
            try:
                info = client.get_info(self.verify_timeout)
            except BotError:
                client.close()
                raise
        entry = BotEntry(
            self._new_id("bot"), name or (info.name if info else "bot"), token, "server", client,
            info or _bot_pb2.BotInfo(name=name), address,
        )
        return self._add(entry)

    def register_dial_out_bot(self, name: str, *, info: _bot_pb2.BotInfo | None = None) -> BotEntry:
        """Register a bot that will call ``Connect`` with the returned entry's token."""
        bot_id = self._new_id("bot")
        hub = DialOutHub(bot_id, reconnect_grace=self.reconnect_grace, flood=self.flood)
        entry = BotEntry(
            bot_id, name, secrets.token_urlsafe(24), "dial_out", hub,
            info or _bot_pb2.BotInfo(name=name),
        )
        return self._add(entry)

    def add_local_bot(self, name: str, command: Sequence[str], *, max_restarts: int = 10) -> BotEntry:
        """Start a bot process (see :mod:`nardy.arena.local`), register it, restart it on crashes."""
        token = secrets.token_urlsafe(24)
        process = LocalBotProcess(command, max_restarts=max_restarts)
        address = process.start()
        client = GrpcBotClient(address, token)
        process.on_address = client.retarget
        entry = BotEntry(
            self._new_id("bot"), name, token, "local", client, _bot_pb2.BotInfo(name=name),
            address, process=process,
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
        """The bot that owns ``token`` (constant-time comparison), or None."""
        with self._lock:
            entry = self._by_token.get(token)
        if entry is None or not secrets.compare_digest(entry.token, token):
            return None
        return entry

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
    ) -> futures.Future[GameRecord]:
        """Start a game between two registered bots (White first) on the arena's pool.

        Raises :class:`ArenaClosedError` while shutting down, :class:`KeyError` for an unknown
        bot, and the kernel's errors for an unknown variant or option.
        """
        if self.closing:
            raise ArenaClosedError("the arena is shutting down")
        entries = (self.bot(white), self.bot(black))
        for entry in entries:
            if entry.faults.disqualified:
                raise ArenaClosedError(f"bot {entry.name} is disqualified")
        compiled = load_variant(variant, options or {})
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
            if self.records_path is not None:
                with self.records_path.open("a", encoding="utf-8") as f:
                    f.write(line + "\n")

    @property
    def running_games(self) -> int:
        with self._lock:
            return len(self._running)

    # -- tournaments ------------------------------------------------------------------------------

    def create_tournament(
        self,
        bot_ids: Sequence[str],
        *,
        variant: str = "long",
        options: Mapping[str, Any] | None = None,
        gauntlet: bool = False,
        games_per_pairing: int = 2,
        seed: int = 0,
        time_control: TimeControl | None = None,
        concurrency: int = 4,
    ) -> Tournament:
        """Schedule and start a tournament; raises :class:`KeyError` / ``ValueError`` on bad input."""
        if self.closing:
            raise ArenaClosedError("the arena is shutting down")
        if len(bot_ids) < 2:
            raise ValueError("a tournament needs at least two bots")
        for bot_id in bot_ids:
            self.bot(bot_id)
        load_variant(variant, options or {})
        seed = seed or random.SystemRandom().randrange(1, 2**63)
        tournament = Tournament(
            self, self._new_id("tournament"), bot_ids, variant=variant, options=options or {},
            gauntlet=gauntlet, games_per_pairing=max(1, games_per_pairing), seed=seed,
            time_control=time_control, concurrency=concurrency,
        )
        with self._lock:
            self.tournaments[tournament.tournament_id] = tournament
        tournament.start()
        return tournament

    # -- shutdown ---------------------------------------------------------------------------------

    def shutdown(self, grace: float = 5.0) -> None:
        """Start no new games; let running games finish for ``grace`` seconds, then stop them
        before their next decision (recorded as ``aborted``, never dropped); close streams and
        local bot processes."""
        self.closing = True
        with self._lock:
            running = list(self._running)
        _, not_done = futures.wait(running, timeout=grace)
        if not_done:
            log.warning("stopping %d running game(s)", len(not_done))
            self._stop.set()
            futures.wait(not_done)
        for entry in self.bots:
            if isinstance(entry.client, DialOutHub):
                entry.client.close_stream(
                    _arena_pb2.ERROR_CODE_SHUTTING_DOWN, "the arena is shutting down", "UNAVAILABLE"
                )
            if entry.process is not None:
                entry.process.stop()
            entry.client.close()
        self._pool.shutdown(wait=True)


# -- the servicer --------------------------------------------------------------------------------


def _safe_connect_request(data: bytes) -> _arena_pb2.ConnectRequest | Undecodable:
    try:
        return _arena_pb2.ConnectRequest.FromString(data)
    except Exception as exc:
        return Undecodable(len(data), str(exc))


class ArenaServicer:
    """``nardy.arena.v1.ArenaService``: translate messages, call :class:`Arena`."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    def RegisterBot(
        self, request: _arena_pb2.RegisterBotRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.RegisterBotResponse:
        info = request.info if request.HasField("info") else None
        transport = request.WhichOneof("transport")
        if transport == "server":
            if request.server.use_tls:
                context.abort(grpc.StatusCode.UNIMPLEMENTED, "TLS bot servers are not supported yet")
            try:
                entry = self.arena.register_server_bot(request.name, request.server.address, info=info)
            except BotError as exc:
                context.abort(grpc.StatusCode.UNAVAILABLE, f"GetInfo failed: {exc}")
        elif transport == "dial_out":
            entry = self.arena.register_dial_out_bot(request.name or "bot", info=info)
        else:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "set server or dial_out")
        return _arena_pb2.RegisterBotResponse(bot_id=entry.bot_id, token=entry.token)

    def Connect(
        self,
        request_iterator: Iterator[_arena_pb2.ConnectRequest | Undecodable],
        context: grpc.ServicerContext,
    ) -> Iterator[_arena_pb2.ConnectResponse]:
        try:
            first = next(request_iterator)
        except (StopIteration, grpc.RpcError):
            return
        if isinstance(first, Undecodable) or first.WhichOneof("message") != "hello":
            yield _error(_arena_pb2.ERROR_CODE_PROTOCOL, "the first message must be Hello")
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello")
        assert isinstance(first, _arena_pb2.ConnectRequest)
        entry = self.arena.bot_for_token(first.hello.token)
        if entry is None or not isinstance(entry.client, DialOutHub):
            yield _error(_arena_pb2.ERROR_CODE_UNAUTHENTICATED, "unknown token")
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")
        assert entry is not None and isinstance(entry.client, DialOutHub)
        if self.arena.closing:
            yield _error(_arena_pb2.ERROR_CODE_SHUTTING_DOWN, "the arena is shutting down")
            context.abort(grpc.StatusCode.UNAVAILABLE, "the arena is shutting down")
        hub = entry.client
        conn = Connection(hub.flood)
        hub.attach(conn, first.hello)
        context.add_callback(lambda: hub.detach(conn))

        def read() -> None:
            try:
                for message in request_iterator:
                    hub.on_message(conn, message)
                    if conn.closed:
                        return
            except Exception:
                pass
            finally:
                hub.detach(conn)

        threading.Thread(target=read, name=f"connect-{entry.bot_id}", daemon=True).start()
        while True:
            item = conn.outbox.get()
            if item is None:
                break
            yield item
        if conn.abort is not None:
            code, details = conn.abort
            context.abort(getattr(grpc.StatusCode, code), details)

    def CreateTournament(
        self, request: _arena_pb2.CreateTournamentRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.CreateTournamentResponse:
        tc = request.time_control
        time_control = None
        if tc.HasField("per_decision") or tc.HasField("per_game"):
            time_control = TimeControl(
                per_decision=convert.seconds(tc.per_decision) if tc.HasField("per_decision") else 5.0,
                reserve=convert.seconds(tc.per_game),
            )
        try:
            tournament = self.arena.create_tournament(
                list(request.bot_ids),
                variant=request.variant.name or "long",
                options=dict(request.variant.options),
                gauntlet=request.format == _arena_pb2.TOURNAMENT_FORMAT_GAUNTLET,
                games_per_pairing=request.games_per_pairing or 2,
                seed=request.seed,
                time_control=time_control,
                concurrency=request.concurrency or 4,
            )
        except KeyError as exc:
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown bot {exc}")
        except ArenaClosedError as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        except ValueError as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return _arena_pb2.CreateTournamentResponse(
            tournament_id=tournament.tournament_id, games_total=len(tournament.schedule)
        )

    def GetStandings(
        self, request: _arena_pb2.GetStandingsRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.GetStandingsResponse:
        tournament = self.arena.tournaments.get(request.tournament_id)
        if tournament is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no tournament {request.tournament_id!r}")
        return tournament.standings()

    def WatchTournament(
        self, request: _arena_pb2.WatchTournamentRequest, context: grpc.ServicerContext
    ) -> Iterator[_arena_pb2.WatchTournamentResponse]:
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "WatchTournament is not implemented yet")


def _error(code: int, message: str) -> _arena_pb2.ConnectResponse:
    return _arena_pb2.ConnectResponse(
        error=_arena_pb2.Error(code=code, message=message, fatal=True)  # type: ignore[arg-type]
    )


def _add_arena_servicer(servicer: ArenaServicer, server: grpc.Server) -> None:
    """Register the servicer like the generated ``add_ArenaServiceServicer_to_server``, except
    that Connect's requests are decoded tolerantly (undecodable bytes become a counted
    ``malformed`` fault instead of an anonymous stream failure)."""
    a = _arena_pb2
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
        "RegisterBot": grpc.unary_unary_rpc_method_handler(
            servicer.RegisterBot,
            request_deserializer=a.RegisterBotRequest.FromString,
            response_serializer=a.RegisterBotResponse.SerializeToString,
        ),
        "Connect": grpc.stream_stream_rpc_method_handler(
            servicer.Connect,
            request_deserializer=_safe_connect_request,
            response_serializer=a.ConnectResponse.SerializeToString,
        ),
        "CreateTournament": grpc.unary_unary_rpc_method_handler(
            servicer.CreateTournament,
            request_deserializer=a.CreateTournamentRequest.FromString,
            response_serializer=a.CreateTournamentResponse.SerializeToString,
        ),
        "GetStandings": grpc.unary_unary_rpc_method_handler(
            servicer.GetStandings,
            request_deserializer=a.GetStandingsRequest.FromString,
            response_serializer=a.GetStandingsResponse.SerializeToString,
        ),
        "WatchTournament": grpc.unary_stream_rpc_method_handler(
            servicer.WatchTournament,
            request_deserializer=a.WatchTournamentRequest.FromString,
            response_serializer=a.WatchTournamentResponse.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(ARENA_SERVICE_NAME, handlers),))


# -- the server ----------------------------------------------------------------------------------


class ArenaServer:
    """The arena's gRPC server: ArenaService, health (``grpc.health.v1``), reflection.

    ``port=0`` binds a free port (read :attr:`port` after :meth:`start`).
    """

    def __init__(
        self,
        arena: Arena | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_workers: int = 128,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.arena = arena or Arena()
        self.host = host
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="arena-rpc"),
            options=channel_options(max_message_bytes),
            # Refuse rather than queue RPCs beyond the pool (streams hold a worker each).
            maximum_concurrent_rpcs=max_workers,
        )
        _add_arena_servicer(ArenaServicer(self.arena), self.server)
        self.health = _health.HealthServicer()
        _health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        _reflection.enable_server_reflection(
            (ARENA_SERVICE_NAME, _health.SERVICE_NAME, _reflection.SERVICE_NAME), self.server
        )
        self.port = self.server.add_insecure_port(f"{host}:{port}")
        if self.port == 0:
            raise OSError(f"cannot listen on {host}:{port}")
        self._stopped = threading.Event()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> ArenaServer:
        self.server.start()
        for service in ("", ARENA_SERVICE_NAME):
            self.health.set(service, _health_pb2.HealthCheckResponse.SERVING)
        return self

    def stop(self, grace: float = 5.0) -> None:
        """Graceful shutdown: health NOT_SERVING, games finished or recorded as interrupted,
        streams closed, then the server stopped. Idempotent."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self.health.enter_graceful_shutdown()
        self.arena.shutdown(grace)
        self.server.stop(grace).wait()

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
