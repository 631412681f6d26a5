"""Game records as the analysis reads them: ``nardy play --jsonl`` lines, arena game records
(files; the CLI reads a tournament database's) and ``.mat`` matches, all read into the one
game record (:mod:`nardy.core.record`) and wrapped in :class:`GameInput` with where each came
from and how its cube is rated.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nardy.analysis.met import table_for
from nardy.core import load_variant
from nardy.core.errors import NardyError
from nardy.core.game import CubeSettings
from nardy.core.record import (
    Event,
    GameRecord,
    MatchInfo,
    Player,
    RecordError,
    Setup,
    from_json,
)
from nardy.core.variant import Variant

__all__ = [
    "GameInput",
    "RecordError",
    "from_arena_record",
    "from_kernel_record",
    "game_input",
    "read_records",
]


def _rates_match_cube(variant: Variant) -> bool:
    """Match-play cube decisions are rated in the variants with a match equity table
    (:func:`nardy.analysis.met.table_for`: backgammon's and long nardy's scorings); the match
    games of the others (per-checker stakes) are replayed unrated."""
    return table_for(variant) is not None


@dataclass(frozen=True, slots=True)
class GameInput:
    """One game to analyse: its record (:class:`nardy.core.record.GameRecord`, which the
    analysis replays through :class:`nardy.core.record.Replay`), where it came from and how its
    cube decisions are rated."""

    label: str
    """Where it came from (``games.jsonl:3``, a game id …)."""
    record: GameRecord
    variant: Variant
    rate_cube: bool = True
    """Whether its cube decisions are rated: money play with a known cube, or a match game whose
    score is known (:attr:`match`) in a variant with a match equity table. The match games of a
    ``--jsonl`` file written before the score was, and those of per-checker stakes, are
    replayed with their cube, unrated."""
    match: MatchInfo | None = None
    """The match of a match game whose score is known (an arena record, a ``.mat`` match,
    ``nardy play --match --jsonl``); None in money play."""

    @property
    def players(self) -> tuple[str, str]:
        """The names of White and Black."""
        return self.record.players[0].name, self.record.players[1].name

    @property
    def winner(self) -> int | None:
        return self.record.winner_points()[0]

    @property
    def points(self) -> int:
        """What the winner scored (0 if unfinished)."""
        return self.record.winner_points()[1]

    @property
    def actions(self) -> tuple[Event, ...]:
        """The plays and cube actions recorded, in order."""
        return self.record.actions()


def game_input(label: str, record: GameRecord, *, money: bool | None = None) -> GameInput:
    """The analysis's view of ``record``: its variant, whether its cube is rated and its match
    (``money``: whether it is money play; default: no match length in its record)."""
    try:
        variant = load_variant(record.variant, dict(record.options))
    except (NardyError, TypeError, ValueError) as error:
        raise RecordError(f"{label}: not a game record ({error})") from None
    if money is None:
        money = not record.match.length and variant.options.get("match_length") is None
    match = None if money else _checked_match(label, record.match)
    return GameInput(
        label,
        record,
        variant,
        money or (match is not None and _rates_match_cube(variant)),
        match,
    )


def _checked_match(label: str, match: MatchInfo) -> MatchInfo | None:
    """A match game's match, once its score is known to fit its length (None: no length)."""
    if not match.length:
        return None
    white, black = match.score
    if not (0 <= white < match.length and 0 <= black < match.length):
        raise RecordError(f"{label}: match score {white}-{black} in a {match.length}-point match")
    return match


def from_kernel_record(
    label: str,
    kernel: Mapping[str, Any],
    players: tuple[str, str],
    cube: CubeSettings | None = None,
) -> GameInput:
    """A money game from the kernel's record (:meth:`nardy.core.game.Game.record`) played by
    ``players`` with ``cube`` (default: the variant's)."""
    try:
        record = from_json(kernel)
    except RecordError as error:
        raise RecordError(f"{label}: {error}") from None
    record = dataclasses.replace(
        record,
        players=(Player(players[0]), Player(players[1])),
        setup=None if cube is None else Setup(record.starter, cube),
    )
    return game_input(label, record, money=True)


def from_arena_record(label: str, data: Any) -> GameInput:
    """A game from a JSON record: an arena game (the kernel record under ``game``) or a ``nardy
    play --jsonl`` line; :class:`RecordError` for anything else."""
    try:
        record = from_json(data)
    except RecordError as error:
        raise RecordError(f"{label}: {error}") from None
    if record.is_arena:
        # The unit id names the match within its tournament; a database holds several.
        tags = dict(record.tags)
        unit = tags.get("unit_id") or record.match.match_id or record.game_id or label
        match_id = f"{tags.get('tournament_id') or ''}/{unit}"
        record = dataclasses.replace(
            record, match=dataclasses.replace(record.match, match_id=match_id)
        )
        return game_input(record.game_id or label, record, money=not record.match.length)
    if record.match.length:  # a match game, written with its score (nardy play)
        source = label.rsplit(":", 1)[0]  # games.jsonl:3 -> games.jsonl
        record = dataclasses.replace(
            record,
            match=dataclasses.replace(record.match, match_id=f"{source}:match {record.index}"),
        )
        return game_input(label, record, money=False)
    return game_input(label, record, money="match" not in data)


def _from_mat(path: Path, text: str) -> Iterator[GameInput]:
    from nardy.core.gnubg import GnubgFormatError, parse_mat
    from nardy.core.mat import from_mat

    try:
        match = parse_mat(text)
    except GnubgFormatError as error:
        raise RecordError(f"{path}: {error}") from None
    # A .mat file is one match; money play, or a backgammon match with its score, is rated.
    for number, record in enumerate(from_mat(match, path.name), start=1):
        yield game_input(f"{path.name}:game {number}", record, money=not match.match_length)


def read_records(path: Path) -> list[GameInput]:
    """Every game in ``path``: a ``.mat`` match, a JSON arena game record, or JSON lines (``nardy
    play --jsonl``, or arena records one a line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RecordError(f"cannot read {path}: {error}") from None
    if path.suffix.lower() == ".mat":
        return list(_from_mat(path, text))
    stripped = text.strip()
    if not stripped:
        raise RecordError(f"{path} holds no game")
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return [from_arena_record(path.name, whole)]
    if isinstance(whole, list):
        return [from_arena_record(f"{path.name}[{i}]", r) for i, r in enumerate(whole)]
    games = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise RecordError(f"{path}:{number}: not JSON ({error.msg})") from None
        games.append(from_arena_record(f"{path.name}:{number}", record))
    return games
