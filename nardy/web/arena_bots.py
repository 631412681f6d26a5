"""The bots registered in the arena that ``nardy web --arena`` is attached to, as Play opponents.

The web cannot call such a bot itself: a dial-out bot's only line is its stream to the arena, and
a server bot's token is the arena's. So the arena asks it (``ArenaService.AskBot``, admin token):
each decision of a person's game goes to the arena as the ``nardy.bot.v1`` request a game the
arena ran would send, through the bot's own client (its ``BotService`` or its stream,
:mod:`nardy.arena.clients.bot_client`), and the answer comes back. The requests are built as the arena's
game runner builds them (:mod:`nardy.arena.clients.convert`): the position, the segment and its legal
plays, the cube, the match score, the opponent's last play.

On the Play page such a bot is named ``@NAME`` (:data:`PREFIX`), which no installed bot's name can
be mistaken for.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import TYPE_CHECKING, Any

from nardy.bots.base import Bot
from nardy.core.game import CubeAnswer, DoubleDecision, PlayDecision, TakeDecision

if TYPE_CHECKING:
    from nardy.web.play_session import PlaySession

__all__ = ["PREFIX", "ArenaBot", "ArenaBotError", "ArenaBots"]

PREFIX = "@"
"""How the Play page names an arena bot: ``@NAME``."""
ASK_S = 10.0
"""Seconds a bot may take for one decision (the arena caps it at its own time per decision)."""
LIST_S = 5.0
"""Seconds the arena's bot list is kept before it is asked again."""


class ArenaBotError(RuntimeError):
    """The arena, or the bot through it, gave no usable answer (said on the Play page)."""


class ArenaBots:
    """One arena's registered bots: their names (``ListBots``), and decisions asked of them
    (``AskBot`` with the admin token ``token``), over one channel opened on first use."""

    def __init__(self, address: str, token: str) -> None:
        self.address = address
        self._metadata = (("authorization", f"Bearer {token}"),)
        self._lock = threading.Lock()
        self._channel: Any = None
        self._stub: Any = None
        self._names: tuple[float, list[str]] = (0.0, [])

    def _service(self) -> Any:
        import grpc

        from nardy.arena.protocol import arena_pb2_grpc

        with self._lock:
            if self._stub is None:
                self._channel = grpc.insecure_channel(self.address)
                self._stub = arena_pb2_grpc.ArenaServiceStub(self._channel)
            return self._stub

    def names(self) -> list[str]:
        """The names of the bots that can play now (registered, not disqualified), in the
        arena's order; none while the arena cannot be reached (the form still shows)."""
        import grpc

        from nardy.arena.protocol import arena_pb2

        when, names = self._names
        if time.monotonic() - when < LIST_S:
            return names
        try:
            listed = self._service().ListBots(
                arena_pb2.ListBotsRequest(), timeout=3, metadata=self._metadata
            )  # the token: the operator's port answers nothing without it
        except grpc.RpcError:
            names = []
        else:
            names = [b.name for b in listed.bots if not b.disqualified]
        self._names = (time.monotonic(), names)
        return names

    def ask(self, bot: str, request: Any) -> Any:
        """The bot's ``DecisionAnswer`` to ``request`` (a ``DecisionRequest``); raises
        :class:`ArenaBotError` with the arena's words when there is none."""
        import grpc

        from nardy.arena.protocol import arena_pb2

        try:
            response = self._service().AskBot(
                arena_pb2.AskBotRequest(bot=bot, request=request),
                timeout=ASK_S + 5,
                metadata=self._metadata,
            )
        except grpc.RpcError as exc:
            code = exc.code().name if hasattr(exc, "code") else "UNKNOWN"
            details = exc.details() if hasattr(exc, "details") else str(exc)
            raise ArenaBotError(
                f"the arena's bot {bot} gave no answer ({code}): {details}"
            ) from None
        return response.answer

    def close(self) -> None:
        with self._lock:
            channel, self._channel, self._stub = self._channel, None, None
        if channel is not None:
            channel.close()


class ArenaBot(Bot):
    """A registered arena bot in one Play session: each decision asked through the arena.

    It reads the session's game for what the request carries besides the decision (the cube,
    the match, the turn's number and dice, the opponent's last play), as the arena's runner
    reads its own game."""

    def __init__(self, arena: ArenaBots | None, name: str, session: PlaySession) -> None:
        """``arena`` None: a stored game reopened by a server attached to no arena, whose bot
        then fails at its turn with the reason (the page shows it)."""
        self.arena = arena
        self.bot_name = name
        self.session = session
        self._sequence = itertools.count(1)

    # -- requests -----------------------------------------------------------------------------

    def _context(self, ctx: Any, me: int, on_roll: bool) -> None:
        from nardy.arena.clients import convert

        session = self.session
        game = session.game
        match = session.match
        ctx.game_id = f"{session.id}-{len(session.logs)}"
        ctx.match_id = session.id
        ctx.sequence = next(self._sequence)
        convert.variant_spec(game.variant, ctx.variant)
        ctx.on_roll = on_roll
        ctx.color = convert.COLOR_OF[me]
        ctx.turn_number = game.turns
        human = session.seats[1 - me]
        ctx.opponent_name = human.name or "player"
        convert.cube_state(game.cube, game.cube_settings, me, ctx.cube)
        m = ctx.match
        length = match.length or 0
        m.match_length = length
        m.score_self, m.score_opponent = match.score[me], match.score[1 - me]
        m.crawford = match.crawford_game
        m.post_crawford = bool(length) and max(match.score) == length - 1 and not m.crawford
        m.game_number = len(session.logs)
        ctx.decision_time_limit.CopyFrom(convert.duration(ASK_S))

    def _ask(self, kind: str, message: Any) -> Any:
        from nardy.arena.clients.convert import duration
        from nardy.arena.protocol import arena_pb2

        request = arena_pb2.DecisionRequest(answer_within=duration(ASK_S))
        getattr(request, kind).CopyFrom(message)
        if self.arena is None:
            raise ArenaBotError(
                f"{self.bot_name} plays in an arena, and this server is attached to none (--arena)"
            )
        answer = self.arena.ask(self.bot_name, request)
        if answer.WhichOneof("answer") != kind:
            raise ArenaBotError(f"the arena's bot {self.bot_name} answered another question")
        return getattr(answer, kind)

    # -- the bot protocol -----------------------------------------------------------------------

    def choose_play(self, decision: PlayDecision) -> int:
        from nardy.arena.clients import convert
        from nardy.arena.clients.runner import play_request  # the request a game's runner sends
        from nardy.bots.faults import BotError

        request = play_request(decision, self.session.game.events)
        self._context(request.context, decision.player, on_roll=True)
        response = self._ask("choose_play", request)
        try:
            return convert.play_index(response, decision.plays)
        except BotError as exc:
            raise ArenaBotError(f"the arena's bot {self.bot_name}: {exc}") from None

    def offer_double(self, decision: DoubleDecision) -> bool:
        from nardy.arena.clients import convert
        from nardy.arena.protocol import bot_pb2
        from nardy.bots.faults import BotError

        request = bot_pb2.DecideDoubleRequest()
        self._context(request.context, decision.player, on_roll=True)
        convert.position_to_proto(decision.position, request.context.position)
        try:
            return convert.double_answer(self._ask("decide_double", request))
        except BotError as exc:
            raise ArenaBotError(f"the arena's bot {self.bot_name}: {exc}") from None

    def respond_to_double(self, decision: TakeDecision) -> CubeAnswer:
        from nardy.arena.clients import convert
        from nardy.arena.clients.runner import take_request
        from nardy.bots.faults import BotError

        game = self.session.game
        request = take_request(decision, game)
        me = decision.player
        self._context(request.context, me, on_roll=me == game.mover)
        try:
            return convert.cube_answer(
                self._ask("respond_to_double", request), decision.beaver_allowed
            )
        except BotError as exc:
            raise ArenaBotError(f"the arena's bot {self.bot_name}: {exc}") from None
