"""Translation between the kernel's value types (:mod:`nardy.core`) and the protocol messages.

Every function here is a plain mapping with no I/O, so the servicers stay thin (STYLE.md §H):
they call these and the kernel, nothing else. Answers coming back from a bot are checked here
too: :func:`play_index` and friends turn a response into a kernel answer or raise the
:class:`~nardy.bots.faults.BotError` subclass that names what was wrong with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from google.protobuf.duration_pb2 import Duration

from nardy.arena.protocol import bot_pb2 as _bot_pb2
from nardy.arena.protocol import game_pb2 as _game_pb2
from nardy.bots.faults import BotIllegalAnswerError, BotMalformedError
from nardy.core.errors import IllegalPlayError, InvalidPlayError
from nardy.core.game import BLACK, WHITE, Cube, CubeSettings, Segment
from nardy.core.notation import Step
from nardy.core.position import Position
from nardy.core.record import Outcome
from nardy.core.variant import LegalPlays, Play, Variant

__all__ = [
    "COLOR_OF",
    "MAX_INFO_TEXT",
    "MAX_INFO_VALUES",
    "PLAYER_OF",
    "SEGMENT_KIND_OF",
    "TERMINATION_OF",
    "cube_answer",
    "cube_state",
    "double_answer",
    "duration",
    "info_to_json",
    "legal_play",
    "outcome_to_proto",
    "play_index",
    "position_from_proto",
    "position_to_proto",
    "seconds",
    "segment_to_proto",
    "variant_spec",
]

COLOR_OF: dict[int, _game_pb2.Color.ValueType] = {
    WHITE: _game_pb2.COLOR_WHITE,
    BLACK: _game_pb2.COLOR_BLACK,
}
"""Kernel colour (0 White, 1 Black) → ``nardy.game.v1.Color``."""
PLAYER_OF: dict[int, int] = {_game_pb2.COLOR_WHITE: WHITE, _game_pb2.COLOR_BLACK: BLACK}
"""``nardy.game.v1.Color`` → kernel colour."""

SEGMENT_KIND_OF: dict[str, _game_pb2.SegmentKind.ValueType] = {
    "roll": _game_pb2.SEGMENT_KIND_ROLL,
    "stage": _game_pb2.SEGMENT_KIND_PROGRESSION_STAGE,
    "reroll": _game_pb2.SEGMENT_KIND_REROLL,
    "transfer": _game_pb2.SEGMENT_KIND_TRANSFERRED,
}
"""Kernel :data:`~nardy.core.game.SegmentKind` → ``nardy.game.v1.SegmentKind``."""
TERMINATION_OF: dict[str, _game_pb2.Termination.ValueType] = {
    "borne_off": _game_pb2.TERMINATION_BORNE_OFF,
    "double_dropped": _game_pb2.TERMINATION_DOUBLE_DROPPED,
    "time_forfeit": _game_pb2.TERMINATION_TIME_FORFEIT,
    "bot_failure": _game_pb2.TERMINATION_BOT_FAILURE,
    "aborted": _game_pb2.TERMINATION_ABORTED,
    "mother": _game_pb2.TERMINATION_MOTHER,
    "draw": _game_pb2.TERMINATION_DRAW,
}
"""An outcome's ``termination`` (:class:`nardy.core.record.Outcome`) → ``nardy.game.v1.Termination``."""
_KIND_OF_SEGMENT: dict[int, Literal["roll", "stage", "reroll", "transfer"]] = {
    v: k  # type: ignore[misc]
    for k, v in SEGMENT_KIND_OF.items()
}

MAX_INFO_TEXT = 1024
"""Longest comment, key or value of a :class:`DecisionInfo` kept in a record (characters)."""
MAX_INFO_VALUES = 32
"""Most key/value pairs of a :class:`DecisionInfo` kept in a record."""


# -- time -------------------------------------------------------------------------------------------


def duration(seconds_: float) -> Duration:
    """A ``google.protobuf.Duration`` of ``seconds_`` (clamped at 0)."""
    d = Duration()
    d.FromNanoseconds(max(0, round(seconds_ * 1e9)))
    return d


def seconds(d: Duration) -> float:
    """The length of a ``Duration`` in seconds."""
    return d.seconds + d.nanos / 1e9


# -- positions, plays, segments ---------------------------------------------------------------------


def position_to_proto(
    position: Position, out: _game_pb2.Position | None = None
) -> _game_pb2.Position:
    """The ``nardy.game.v1.Position`` of a kernel position (structured fields and id)."""
    msg = _game_pb2.Position() if out is None else out
    msg.points.extend(position.points)
    msg.bar.mover, msg.bar.opponent = position.bar
    msg.off.mover, msg.off.opponent = position.off
    msg.position_id = position.id()
    if position.pinned:
        msg.pinned.extend(position.pinned)
    return msg


def position_from_proto(msg: _game_pb2.Position) -> Position:
    """The kernel position of a message; validated (raises :class:`InvalidPositionError`).
    ``pinned`` (RULES.md §3.12.2) is read only when set, so the JSON of every other position is
    the one it always was."""
    obj: dict[str, Any] = {
        "points": list(msg.points),
        "bar": [msg.bar.mover, msg.bar.opponent],
        "off": [msg.off.mover, msg.off.opponent],
    }
    if msg.pinned:
        obj["pinned"] = list(msg.pinned)
    return Position.from_json(obj)


def _step_to_proto(step: Step, out: _game_pb2.Step) -> None:
    out.from_point = step.src
    out.to_point = step.dst
    out.die = step.die
    out.hit = step.hit


def legal_play(
    index: int, play: Play, out: _game_pb2.LegalPlay | None = None
) -> _game_pb2.LegalPlay:
    """The ``LegalPlay`` message of one kernel play at ``index``."""
    msg = _game_pb2.LegalPlay() if out is None else out
    msg.index = index
    msg.text = play.text
    for step in play.steps:
        _step_to_proto(step, msg.steps.add())
    position_to_proto(play.result, msg.result)
    msg.result_position_id = msg.result.position_id
    return msg


def segment_to_proto(segment: Segment, number: int, out: _game_pb2.Segment) -> None:
    """Fill a ``Segment`` message from a kernel segment; ``number`` is 1-based within the turn."""
    out.steps.extend(segment.dice)
    out.kind = SEGMENT_KIND_OF[segment.kind]
    out.description = segment.description
    out.number = number


def variant_spec(
    variant: Variant, out: _game_pb2.VariantSpec | None = None
) -> _game_pb2.VariantSpec:
    """The ``VariantSpec`` of a compiled variant: its name and every option as text."""
    msg = _game_pb2.VariantSpec() if out is None else out
    msg.name = variant.name
    for key, value in variant.options.items():
        msg.options[key] = _option_text(value)
    return msg


def _option_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def cube_state(cube: Cube, settings: CubeSettings, me: int, out: _game_pb2.CubeState) -> None:
    """Fill a ``CubeState`` relative to colour ``me``."""
    out.enabled = settings.enabled
    out.value = cube.value
    if cube.owner is None:
        out.owner = _game_pb2.CUBE_OWNER_CENTERED
    else:
        out.owner = _game_pb2.CUBE_OWNER_SELF if cube.owner == me else _game_pb2.CUBE_OWNER_OPPONENT
    out.max_value = settings.max_cube or 0


# -- answers ----------------------------------------------------------------------------------------


def play_index(response: _bot_pb2.ChoosePlayResponse, plays: LegalPlays) -> int:
    """The index of the play a ``ChoosePlayResponse`` chose.

    :raises BotMalformedError: no choice is set.
    :raises BotIllegalAnswerError: the index is out of range, or the text is not a legal play.
    """
    which = response.WhichOneof("choice")
    if which == "play_index":
        index = response.play_index
        if not 0 <= index < len(plays):
            raise BotIllegalAnswerError(f"play index {index} is out of range 0-{len(plays) - 1}")
        return index
    if which == "play_text":
        try:
            play = plays.find(response.play_text)
        except (InvalidPlayError, IllegalPlayError) as exc:
            raise BotIllegalAnswerError(f"play text {response.play_text!r}: {exc}") from exc
        return plays.index_of(play.result)
    raise BotMalformedError("the answer sets neither play_index nor play_text")


def double_answer(response: _bot_pb2.DecideDoubleResponse) -> bool:
    """True to double, False to roll; raises :class:`BotMalformedError` for an unset action."""
    if response.action == _bot_pb2.DOUBLE_ACTION_DOUBLE:
        return True
    if response.action == _bot_pb2.DOUBLE_ACTION_ROLL:
        return False
    raise BotMalformedError(f"double action {response.action} is not ROLL or DOUBLE")


def cube_answer(
    response: _bot_pb2.RespondToDoubleResponse, beaver_allowed: bool
) -> Literal["take", "drop", "beaver"]:
    """The kernel's answer to a double; raises on an unset action or a beaver not allowed."""
    action = response.action
    if action == _bot_pb2.TAKE_ACTION_TAKE:
        return "take"
    if action == _bot_pb2.TAKE_ACTION_DROP:
        return "drop"
    if action == _bot_pb2.TAKE_ACTION_BEAVER:
        if not beaver_allowed:
            raise BotIllegalAnswerError("a beaver is not allowed now")
        return "beaver"
    raise BotMalformedError(f"take action {action} is not TAKE, DROP or BEAVER")


def info_to_json(info: _bot_pb2.DecisionInfo) -> dict[str, Any]:
    """A bot's free-form info as JSON-ready data, truncated (a bot cannot bloat a record)."""
    out: dict[str, Any] = {}
    if info.comment:
        out["comment"] = info.comment[:MAX_INFO_TEXT]
    if info.values:
        items: Iterable[tuple[str, str]] = sorted(info.values.items())
        out["values"] = {
            k[:MAX_INFO_TEXT]: v[:MAX_INFO_TEXT] for k, v in list(items)[:MAX_INFO_VALUES]
        }
    return out


def info_from_mapping(comment: str, values: Mapping[str, Any], out: _bot_pb2.DecisionInfo) -> None:
    """Fill a ``DecisionInfo`` (bot side): values are converted to text."""
    if comment:
        out.comment = comment
    for key, value in values.items():
        out.values[str(key)] = str(value)


def outcome_to_proto(outcome: Outcome) -> _game_pb2.GameResult:
    """A game's outcome as the protocol's ``GameResult`` (``result_name`` is its termination)."""
    return _game_pb2.GameResult(
        winner=_game_pb2.COLOR_UNSPECIFIED if outcome.winner is None else COLOR_OF[outcome.winner],
        points=outcome.points,
        multiplier=outcome.multiplier,
        result_name=outcome.termination,
        termination=TERMINATION_OF[outcome.termination],
        reason=outcome.reason,
    )


def kind_of_segment(kind: int) -> Literal["roll", "stage", "reroll", "transfer"]:
    """``nardy.game.v1.SegmentKind`` → kernel segment kind (unknown → ``"roll"``)."""
    return _KIND_OF_SEGMENT.get(kind, "roll")
