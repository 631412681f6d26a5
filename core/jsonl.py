"""The query engine behind ``nardy plays --jsonl``: one JSON query per line in, one JSON answer per line out.

A query asks for the legal plays of one segment::

    {"position": P, "dice": [3, 1]}          # a roll; a double [d, d] is the four steps d, d, d, d
    {"position": P, "steps": [4, 4, 4, 4]}   # exactly one segment's steps: [6, 3], [5, 5], [4, 4, 4, 4] …

``P`` is the position JSON of :meth:`~nardy.core.position.Position.from_json`, seen from the mover:
``{"points": [24 signed ints], "bar": [mover, opponent], "off": [mover, opponent]}``. It may carry a
``"state"`` object, which is **reserved for variant turn state** (head steps taken, pending transfers …):
it must be an object if present, and its keys are accepted and ignored for now. Unknown keys anywhere
else are errors. A query may also carry an ``"id"`` (any JSON value), which is echoed in its answer.

The first stage of a progression (``long``'s relatives with progressive doubles) is also four equal
steps, so ``"dice": [d, d]`` asks for it too; later stages and transferred steps use ``"steps"``.

The answer lists every distinct legal play (deduplicated by resulting position, RULES.md §2.3)::

    {"plays": [{"text": "24/21 21/20", "result": P'}, …]}

``result`` is the position after the play, still from the mover's view (not flipped). When no step
can be played the only play is the empty one: ``{"text": "", "result": P}``. A bad query — malformed
JSON, a missing or unknown field, a position that is invalid for the variant (checked with
:meth:`~nardy.core.variant.Variant.validate`), impossible dice — is answered ``{"error": "…"}`` and the
engine goes on with the next line. Blank lines are skipped and get no answer.

This module does not import click; :func:`answer_query` and :func:`run_jsonl` are usable from any
program (for example a bot written in Python that wants the legal plays of a position).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

from nardy.core import _engine
from nardy.core.errors import NardyError
from nardy.core.movegen import result_json
from nardy.core.notation import play_text
from nardy.core.position import MAX_CHECKERS, Position
from nardy.core.variant import LegalPlays, Variant

__all__ = [
    "JsonlStats",
    "QueryError",
    "answer_query",
    "parse_segment",
    "run_jsonl",
    "run_jsonl_stream",
]

_QUERY_FIELDS = frozenset({"position", "dice", "steps", "id"})
_CHUNK = 1 << 16
"""Bytes read from the input at a time by :func:`run_jsonl_stream`."""


class _Writer(Protocol):
    def write(self, text: str, /) -> Any: ...

    def flush(self) -> Any: ...


class QueryError(NardyError, ValueError):
    """A query line that cannot be answered (reported in-band as ``{"error": …}``)."""


@dataclass(slots=True)
class JsonlStats:
    """What a run answered: queries (non-blank lines) and how many of them were errors."""

    queries: int = 0
    errors: int = 0


def _is_die(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 6


def parse_segment(query: Mapping[str, Any]) -> tuple[int, ...]:
    """The steps of the segment a query asks about (``dice`` or ``steps``); raises :class:`QueryError`."""
    has_dice = "dice" in query
    has_steps = "steps" in query
    if has_dice == has_steps:
        raise QueryError(
            "a query needs exactly one of 'dice' (a roll [a, b]) or 'steps' (one segment)"
        )
    if has_dice:
        dice = query["dice"]
        if not isinstance(dice, list) or len(dice) != 2 or not all(_is_die(d) for d in dice):
            raise QueryError(
                f"'dice' must be two integers 1-6, like [3, 1], not {json.dumps(dice)}"
            )
        a, b = dice
        return (a, a, a, a) if a == b else (a, b)
    steps = query["steps"]
    if (
        not isinstance(steps, list)
        or not 1 <= len(steps) <= 4
        or not all(_is_die(d) for d in steps)
    ):
        raise QueryError(f"'steps' must be 1-4 integers 1-6, not {json.dumps(steps)}")
    if len(steps) != 2 and len(set(steps)) != 1:
        raise QueryError(
            f"'steps' must be one segment: two different dice or 1-4 equal steps, not {json.dumps(steps)}"
        )
    return tuple(steps)


def _position(variant: Variant, obj: Any) -> Position:
    if isinstance(obj, Mapping) and "state" in obj and not isinstance(obj["state"], Mapping):
        raise QueryError("'state' must be an object (it is reserved for variant turn state)")
    return variant.position_from_json(obj)


def answer_query(variant: Variant, obj: Any) -> dict[str, Any]:
    """Answer one parsed query (see the module docstring): ``{"plays": […]}`` or ``{"error": "…"}``."""
    answer: dict[str, Any] = {}
    try:
        if not isinstance(obj, Mapping):
            raise QueryError("a query must be a JSON object with 'position' and 'dice' or 'steps'")
        if "id" in obj:
            answer["id"] = obj["id"]
        unknown = set(obj) - _QUERY_FIELDS
        if unknown:
            raise QueryError(
                f"unknown field(s) {', '.join(sorted(unknown))}; a query has 'position', "
                "'dice' or 'steps', and optionally 'id'"
            )
        if "position" not in obj:
            raise QueryError("a query needs a 'position'")
        steps = parse_segment(obj)
        position = _position(variant, obj["position"])
        plays = variant.legal_plays(position, steps)
        answer["plays"] = [{"text": play.text, "result": play.result.to_json()} for play in plays]
    except (NardyError, ValueError, TypeError) as error:
        answer["error"] = str(error)
    return answer


# -- fast serialisation ---------------------------------------------------------------------------------
# The answers of well-formed queries are written by hand (play text is plain ASCII, positions are ints),
# straight from the generator's result keys and step tuples: no Play, Position or dict per play, the
# play text joined from the step tables (notation.play_text). The output is byte-identical to
# json.dumps of answer_query's dicts (tests/core/test_jsonl.py checks both paths against each other).

_PLAY_FORMAT = '{"text":"%s","result":{"points":[' + ",".join(["%d"] * 24) + '],"bar":[%d,%d'
"""A play up to the opponent's bar, from ``(text, *key[1:27])`` (see :func:`~nardy.core.movegen.board_of`)."""
_PLAY_TAIL = tuple(
    tuple(f'],"off":[{mover},{opponent}]}}}}' for opponent in range(MAX_CHECKERS + 1))
    for mover in range(MAX_CHECKERS + 1)
)
"""``_PLAY_TAIL[off_mover][off_opponent]``: the rest of a play (borne-off counts are 0…N)."""
_SEPARATORS = (",", ":")


def _formatted_plays_text(plays: LegalPlays) -> str:
    """``json.dumps([{"text": …, "result": …}, …])`` of every play, compact."""
    return ",".join(
        [
            _PLAY_FORMAT % (play_text(steps), *key[1:27]) + _PLAY_TAIL[key[0]][key[27]]
            if len(key) == _BOARD_KEY
            else '{"text":"' + play_text(steps) + '","result":' + result_json(key) + "}"
            for key, steps in plays.keyed()
        ]
    )


_BOARD_KEY = 28
"""The length of a result key without pinned checkers (a key with pins has the pinned points'
bits as a 29th entry, :data:`~nardy.core.movegen.PINS`, and is joined by ``result_json``)."""


def _joined_plays_text(plays: LegalPlays) -> str:
    """The same, each result joined by the compiled :func:`~nardy.core.movegen.result_json`."""
    return ",".join(
        [
            '{"text":"' + play_text(steps) + '","result":' + result_json(key) + "}"
            for key, steps in plays.keyed()
        ]
    )


# The compiled result_json joins a result about twice as fast as the format; the Python one is
# slower than it (docs/performance.md).
_plays_text = _joined_plays_text if _engine.KIND == "compiled" else _formatted_plays_text


def _answer_line(variant: Variant, obj: Any) -> tuple[str, bool]:
    """One answer as a JSON line and whether it is an error."""
    if type(obj) is dict and "position" in obj and not obj.keys() - _QUERY_FIELDS:
        # The common case, a well-formed query: write the plays without building dicts.
        try:
            steps = parse_segment(obj)
            position = _position(variant, obj["position"])
            plays = variant.legal_plays(position, steps)
        except (NardyError, ValueError, TypeError):
            pass  # answer_query words the error
        else:
            head = '{"plays":['
            if "id" in obj:
                head = '{"id":' + json.dumps(obj["id"], separators=_SEPARATORS) + ',"plays":['
            return head + _plays_text(plays) + "]}\n", False
    answer = answer_query(variant, obj)
    return json.dumps(answer, separators=_SEPARATORS) + "\n", "error" in answer


def _error_text(message: str) -> tuple[str, bool]:
    return json.dumps({"error": message}, separators=(",", ":")) + "\n", True


def _not_json(name: str) -> Any:
    """Python's reader takes ``NaN``, ``Infinity`` and ``-Infinity``; JSON (RFC 8259) has none of
    them, and an ``id`` holding one would be echoed back as a line no JSON reader accepts."""
    raise ValueError(f"{name} is not a JSON value")


def _answer_text(variant: Variant, line: str | bytes, number: int) -> tuple[str, bool]:
    try:
        obj = json.loads(line, parse_constant=_not_json)
    except ValueError as error:  # json.JSONDecodeError, or UnicodeDecodeError for bytes
        return _error_text(f"line {number}: not valid JSON: {error}")
    except RecursionError:
        return _error_text(f"line {number}: the JSON is nested too deeply")
    try:
        return _answer_line(variant, obj)
    except RecursionError:  # e.g. a deeply nested "id" to echo
        return _error_text(f"line {number}: the query is nested too deeply")


_BATCH = 1024
"""Lines answered by :func:`run_jsonl` between two chances for the garbage collector."""


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection inside a batch of answers (collections between the queries cost the
    oracle run about 6 %); the collector is switched back on after the batch if it was on, whatever
    happens. Answers make no reference cycles, so nothing waits for it but the next collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run_jsonl(
    variant: Variant, lines: Iterable[str | bytes], out: _Writer, *, flush: bool = False
) -> JsonlStats:
    """Answer every non-blank line of ``lines`` on ``out``, one JSON line each.

    :param flush: flush ``out`` after every answer (for an interactive peer); otherwise ``out`` buffers.
    """
    stats = JsonlStats()
    numbered = enumerate(lines, start=1)
    while True:
        with _collector_paused():
            for answered, (number, line) in enumerate(numbered, start=1):
                if line.strip():
                    text, error = _answer_text(variant, line, number)
                    stats.queries += 1
                    stats.errors += error
                    out.write(text)
                    if flush:
                        out.flush()
                if answered == _BATCH:
                    break
            else:
                return stats


def _chunks(stream: BinaryIO) -> Iterator[list[bytes]]:
    """The complete lines of ``stream``, grouped by what one read returned."""
    read = getattr(stream, "read1", stream.read)
    pending = b""
    while True:
        data = read(_CHUNK)
        if not data:
            if pending:
                yield [pending]
            return
        pending += data
        lines = pending.split(b"\n")
        pending = lines.pop()
        if lines:
            yield lines


def run_jsonl_stream(variant: Variant, stream: BinaryIO, out: _Writer) -> JsonlStats:
    """Like :func:`run_jsonl`, reading raw bytes from ``stream``, and flushing exactly when it must.

    Input is read a chunk at a time with ``read1`` (what is available, up to 64 KiB); the answers to a
    chunk's lines are written together and flushed before the next read. A file or a fast pipe is
    therefore answered in large buffered writes, while an interactive peer (a terminal, or a program
    that waits for each answer before it writes the next query) gets every answer as soon as it is
    computed, because each of its reads returns a single line. The garbage collector is paused
    while a chunk is answered.
    """
    stats = JsonlStats()
    number = 0
    for lines in _chunks(stream):
        texts: list[str] = []
        with _collector_paused():
            for line in lines:
                number += 1
                if not line.strip():
                    continue
                text, error = _answer_text(variant, line, number)
                stats.queries += 1
                stats.errors += error
                texts.append(text)
        if texts:
            out.write("".join(texts))
            out.flush()
    return stats
