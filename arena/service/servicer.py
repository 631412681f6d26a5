"""``nardy.arena.v1.ArenaService``: the servicer, the one translator between the arena's
messages and its service core (:class:`~nardy.arena.service.core.Arena`, which speaks values).

:class:`ArenaServicer` turns requests into :class:`Arena` calls and their values into responses
(:func:`standings_to_proto` and :class:`EventTranslator` for the tournament engine's standings
and events); :func:`add_arena_servicer` serves it, its handler table read from the service's
descriptor in ``arena.proto`` (docs/architecture.md, "Adding an arena RPC").
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import time
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent import futures
from typing import Any

import grpc
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

# grpcio-health-checking and grpcio-reflection ship no type stubs.
from nardy.arena.clients import convert
from nardy.arena.clients.bot_client import (
    DEFAULT_MAX_MESSAGE_BYTES,
)
from nardy.arena.clients.dial_out import Connection, DialOutHub, Undecodable
from nardy.arena.competition.schedule import (
    SprtDef,
)
from nardy.arena.competition.standings import PoolStandings, Standings
from nardy.arena.competition.tournament import GameSummary, TournamentEvent
from nardy.arena.protocol import ARENA_SERVICE, ARENA_SERVICE_NAME
from nardy.arena.protocol import arena_pb2 as _arena_pb2
from nardy.arena.protocol import game_pb2 as _game_pb2
from nardy.arena.records.audit import REVEALED_STATUSES, DiceAudit
from nardy.arena.records.storage import StorageError
from nardy.arena.service.auth import (
    Authenticator,
    Caller,
    bearer_token,
)
from nardy.arena.service.core import Arena, ArenaTournament, TournamentTable
from nardy.arena.service.feed import TournamentFeed
from nardy.arena.service.public import PublicView
from nardy.arena.service.rpc_errors import (
    ArenaClosedError,
    Refused,
    grpc_errors,
)
from nardy.arena.service.streams import (
    PendingHellos,
)
from nardy.bots.faults import BotError
from nardy.bots.loop import TimeControl
from nardy.core.game import COLOURS
from nardy.core.record import Outcome

__all__ = [
    "SPRT_DECISION_OF",
    "SPRT_INPUT_NAMES",
    "ArenaServicer",
    "EventTranslator",
    "add_arena_servicer",
    "dice_to_proto",
    "sprt_settings_from_proto",
    "sprt_settings_to_proto",
    "sprt_to_proto",
    "standings_to_proto",
    "table_to_proto",
]


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


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


# -- SPRT settings (nardy.arena.v1) ------------------------------------------------------------------------------------

SPRT_DECISION_OF: dict[str | None, _arena_pb2.SprtDecision.ValueType] = {
    None: _arena_pb2.SPRT_DECISION_CONTINUE,
    "H0": _arena_pb2.SPRT_DECISION_ACCEPT_H0,
    "H1": _arena_pb2.SPRT_DECISION_ACCEPT_H1,
}
"""The decision of :class:`nardy.arena.competition.stats.Sprt` (None: undecided) → ``SprtDecision``."""


def sprt_settings_from_proto(msg: _arena_pb2.SprtSettings) -> dict[str, Any]:
    """The ``sprt`` table of a tournament definition (:func:`nardy.arena.competition.schedule.parse_definition`
    checks it) from ``SprtSettings``: 0 for ``alpha``, ``beta`` or ``max_points`` means the
    default; the hypotheses are taken as given (0 is a valid H0)."""
    out: dict[str, Any]
    if msg.mode == _arena_pb2.SPRT_MODE_POINTS:
        out = {"mode": "points", "mu0": msg.mu0, "mu1": msg.mu1}
        if msg.max_points:
            out["max_points"] = msg.max_points
    else:
        out = {"mode": "elo", "elo0": msg.elo0, "elo1": msg.elo1}
    if msg.alpha:
        out["alpha"] = msg.alpha
    if msg.beta:
        out["beta"] = msg.beta
    if msg.input != _arena_pb2.SPRT_INPUT_UNSPECIFIED:
        # An unknown value goes through as itself, for parse_definition to refuse by name.
        out["on"] = SPRT_INPUT_NAMES.get(msg.input, f"SprtInput {msg.input}")
    return out


SPRT_INPUT_NAMES: dict[_arena_pb2.SprtInput.ValueType, str] = {
    _arena_pb2.SPRT_INPUT_POINTS: "points",
    _arena_pb2.SPRT_INPUT_LUCK_ADJUSTED: "luck-adjusted",
}
"""``SprtInput`` → the definition's ``sprt.on``."""


def sprt_settings_to_proto(
    spec: SprtDef, *, match_length: int | None = None, out: _arena_pb2.SprtSettings | None = None
) -> _arena_pb2.SprtSettings:
    """The ``SprtSettings`` a pool's test runs with (a match pool scores matches +-1, so its
    ``max_points`` is 1)."""
    msg = _arena_pb2.SprtSettings() if out is None else out
    msg.alpha, msg.beta = spec.alpha, spec.beta
    if spec.mode == "points":
        msg.mode = _arena_pb2.SPRT_MODE_POINTS
        msg.mu0, msg.mu1 = spec.mu0, spec.mu1
        msg.max_points = spec.max_points if match_length is None else 1.0
        msg.input = {v: k for k, v in SPRT_INPUT_NAMES.items()}[spec.on]
    else:
        msg.mode = _arena_pb2.SPRT_MODE_ELO
        msg.elo0, msg.elo1 = spec.elo0, spec.elo1
    return msg


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
        sprt_settings_to_proto(spec, match_length=pool.match_length, out=msg.settings)
    msg.llr = sprt.llr
    msg.lower_bound, msg.upper_bound = sprt.bounds
    msg.decision = SPRT_DECISION_OF.get(sprt.decision, _arena_pb2.SPRT_DECISION_UNSPECIFIED)
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
    """The engine's :class:`~nardy.arena.competition.standings.Standings` as ``GetStandingsResponse``.

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


def table_to_proto(table: TournamentTable) -> _arena_pb2.GetStandingsResponse:
    """The arena's :class:`~nardy.arena.service.core.TournamentTable` as ``GetStandingsResponse``."""
    return standings_to_proto(
        table.standings, seed=table.seed, names=table.names, sprt=table.sprt, dice=table.dice
    )


def _result_proto(outcome: Mapping[str, Any] | None) -> _game_pb2.GameResult:
    if not outcome:
        return _game_pb2.GameResult()
    winner = outcome.get("winner")
    return convert.outcome_to_proto(
        Outcome(
            winner=None if winner is None else COLOURS.index(winner),
            points=int(outcome.get("points") or 0),
            multiplier=int(outcome.get("multiplier") or 0),
            termination=outcome.get("termination", "aborted"),
            reason=str(outcome.get("reason") or ""),
        )
    )


def _game_ids(
    game: GameSummary, out: _arena_pb2.GameStartedEvent | _arena_pb2.GameEndedEvent
) -> None:
    """A game event's ids: the game's, its match's and its bots'."""
    out.game_id = game.game_id
    out.match_id = game.match_id
    out.white_bot_id = game.white
    out.black_bot_id = game.black


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
            _game_ids(game, out.game_started)
        elif event.kind == "game_ended" and game is not None:
            ended = out.game_ended
            _game_ids(game, ended)
            ended.result.CopyFrom(_result_proto(game.outcome))
            ended.decisions = game.decisions
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
        self._public_protos: dict[str, tuple[TournamentTable, _arena_pb2.GetStandingsResponse]] = {}

    async def close_feeds(self) -> None:
        """End every watcher's stream (the server is stopping); on the server's event loop,
        where the feeds live."""
        for feed in self._feeds.values():
            feed.close()

    def _public_table(self, view: PublicView) -> _arena_pb2.GetStandingsResponse:
        """The public standings of ``view`` as a message, made once per table the arena made
        (every anonymous caller and watcher of a live tournament shares it; callers never
        change it)."""
        table = self.arena.public_standings(view)
        made = self._public_protos.get(view.row.tournament_id)
        if made is not None and made[0] is table:
            return made[1]
        message = table_to_proto(table)
        self._public_protos[view.row.tournament_id] = (table, message)
        return message

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
            sprt=(sprt_settings_from_proto(request.sprt) if request.HasField("sprt") else None),
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
                return self._public_table(view)
        return table_to_proto(self.arena.standings(request.tournament_id))

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
        standings = self._public_table(view)
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
        out = _arena_pb2.ListBotsResponse()
        for e in self.arena.list_bots():
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

    @grpc_errors(not_found=lambda request, exc: f"no bot {request.bot!r}")
    def AskBot(
        self, request: _arena_pb2.AskBotRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.AskBotResponse:
        self._require_admin(context)
        asked = request.request
        kind = asked.WhichOneof("request")
        question = getattr(asked, kind) if kind is not None else None
        within = convert.seconds(asked.answer_within) if asked.HasField("answer_within") else 0.0
        response = self.arena.ask_bot(request.bot, question, within)
        assert kind is not None and question is not None  # ask_bot refuses no request
        answer = _arena_pb2.DecisionAnswer(
            game_id=question.context.game_id, sequence=question.context.sequence
        )
        getattr(answer, kind).CopyFrom(response)
        return _arena_pb2.AskBotResponse(answer=answer)

    @grpc_errors()
    def ListTournaments(
        self, request: _arena_pb2.ListTournamentsRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.ListTournamentsResponse:
        out = _arena_pb2.ListTournamentsResponse()
        for t in self.arena.list_tournaments(public=self._caller(context) != "admin"):
            item = out.tournaments.add(
                tournament_id=t.tournament_id,
                name=t.name,
                status=_PROTO_STATUS.get(t.status, _arena_pb2.TOURNAMENT_STATUS_UNSPECIFIED),
                games_played=t.games_played,
                games_total=t.games_total,
                bot_names=t.bot_names,
                pools=t.pools,
            )
            item.created.FromNanoseconds(int(t.created * 1e9))
        return out

    @grpc_errors(not_found=_no_tournament)
    def ListGames(
        self, request: _arena_pb2.ListGamesRequest, context: grpc.ServicerContext
    ) -> _arena_pb2.ListGamesResponse:
        if request.limit < 0:
            raise ValueError("limit must be >= 0")
        out = _arena_pb2.ListGamesResponse()
        for listed in self.arena.list_games(
            request.tournament_id,
            bot=request.bot,
            termination=request.termination,
            limit=request.limit,
            public=self._caller(context) != "admin",
        ):
            r = listed.row
            game = out.games.add(
                game_id=r.game_id,
                match_id=r.unit_id,
                white_bot_id=r.white,
                white_name=listed.white_name,
                black_bot_id=r.black,
                black_name=listed.black_name,
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

    @grpc_errors(not_found=_no_tournament)
    async def ExportGames(
        self, request: _arena_pb2.ExportGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[_arena_pb2.ExportGamesResponse]:
        """The records of a tournament, read on the thread pool, sent from the event loop (a
        slow reader holds no thread)."""
        loop = asyncio.get_running_loop()
        status = self.arena.tournament_status(request.tournament_id)
        if status not in REVEALED_STATUSES:
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
