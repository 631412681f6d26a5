"""Game records as the analysis reads them: ``nardy play --jsonl`` lines, arena game records
(files; the CLI reads a tournament database's) and ``.mat`` matches, all turned into
:class:`GameInput` — the dice, the actions in order, who started, the cube and the result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nardy.analysis.met import table_for
from nardy.core import load_variant
from nardy.core.dice import Roll
from nardy.core.errors import NardyError
from nardy.core.game import COLOURS, CubeSettings, GameResult, cube_settings_for
from nardy.core.variant import Variant

__all__ = [
    "Action",
    "GameInput",
    "MatchInfo",
    "RecordError",
    "from_arena_record",
    "from_kernel_record",
    "read_records",
]


class RecordError(NardyError, ValueError):
    """A record that cannot be read or replayed."""


@dataclass(frozen=True, slots=True)
class Action:
    """One recorded decision: ``play`` (``answer`` is the play text), ``double``, ``take``,
    ``drop`` or ``beaver``, by colour ``player`` (0 White, 1 Black)."""

    kind: str
    player: int
    answer: str = ""


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """The match a game belongs to: its length, the score before the game (White, Black),
    whether the game is the Crawford game, and which match it is (``match_id``: the games of one
    match share it, so the analysis can sum them into that match's result, the unit a match
    is played for)."""

    length: int
    score: tuple[int, int]
    crawford: bool
    match_id: str = ""

    def away(self, colour: int) -> int:
        """The points ``colour`` needs."""
        return self.length - self.score[colour]

    @property
    def post_crawford(self) -> bool:
        """A side is 1-away and this is not the Crawford game (it has been played)."""
        return not self.crawford and min(self.away(0), self.away(1)) == 1


def _rates_match_cube(variant: Variant) -> bool:
    """Match-play cube decisions are rated in the variants with a match equity table
    (:func:`nardy.analysis.met.table_for`: backgammon's and long nardy's scorings); the match
    games of the others (per-checker stakes) are replayed unrated."""
    return table_for(variant) is not None


@dataclass(frozen=True, slots=True)
class GameInput:
    """One game to analyse."""

    label: str
    """Where it came from (``games.jsonl:3``, a game id …)."""
    variant: Variant
    rolls: tuple[Roll, ...]
    actions: tuple[Action, ...]
    starter: int | None
    """Who rolled first without an opening throw, or None (an opening throw)."""
    cube: CubeSettings
    players: tuple[str, str]
    """The names of White and Black."""
    winner: int | None
    points: int
    """What the winner scored (0 if unfinished)."""
    rate_cube: bool = True
    """Whether its cube decisions are rated: money play with a known cube, or a match game whose
    score is known (:attr:`match`) in a variant with a match equity table. The match games of a
    ``--jsonl`` file, which does not record the score, and those of per-checker stakes are
    replayed with their cube, unrated."""
    match: MatchInfo | None = None
    """The match of a match game whose score is known (an arena record, a ``.mat`` match)."""


def _colour(name: Any, where: str) -> int:
    if name not in COLOURS:
        raise RecordError(f"{where}: player {name!r} is not White or Black")
    return COLOURS.index(name)


def from_kernel_record(
    label: str,
    record: Mapping[str, Any],
    kernel: Mapping[str, Any],
    players: tuple[str, str],
    cube: CubeSettings | None = None,
    *,
    starter: int | None = None,
    money: bool = True,
    match: MatchInfo | None = None,
) -> GameInput:
    """A game from the kernel's record (:meth:`nardy.core.game.Game.record`): its rolls and
    events; ``record`` holds the variant, options and result."""
    try:
        variant = load_variant(str(record["variant"]), dict(record.get("options") or {}))
        rolls = tuple((int(a), int(b)) for a, b in kernel["rolls"])
        events = list(kernel["events"])
    except (KeyError, TypeError, ValueError, NardyError) as error:
        raise RecordError(f"{label}: not a game record ({error})") from None
    actions = []
    for event in events:
        kind = event.get("kind")
        if kind in ("play", "double", "take", "drop", "beaver"):
            player = _colour(event.get("player"), label)
            actions.append(
                Action(kind, player, str(event.get("play", "")) if kind == "play" else "")
            )
    if starter is None and events and events[0].get("kind") != "opening":
        starter = _colour(events[0].get("player"), label)
    money = money and "match" not in record and variant.options.get("match_length") is None
    if cube is None:
        cube = cube_settings_for(variant, match_length=variant.options.get("match_length"))
    result = record.get("result") or {}
    winner = result.get("winner")
    return GameInput(
        label,
        variant,
        rolls,
        tuple(actions),
        starter,
        cube,
        players,
        None if winner is None else _colour(winner, label),
        int(result.get("points") or 0) if winner is not None else 0,
        money or (match is not None and _rates_match_cube(variant)),
        match,
    )


def _match_info(label: str, setup: Mapping[str, Any], match_id: str = "") -> MatchInfo:
    """An arena record's ``setup.match`` (length, score as White, Black, crawford), or the same
    keys of a ``nardy play --match --jsonl`` line."""
    try:
        length = int(setup["length"])
        white, black = (int(x) for x in setup.get("score") or (0, 0))
    except (KeyError, TypeError, ValueError) as error:
        raise RecordError(f"{label}: bad match setup ({error})") from None
    if not (0 <= white < length and 0 <= black < length):
        raise RecordError(f"{label}: match score {white}-{black} in a {length}-point match")
    return MatchInfo(length, (white, black), bool(setup.get("crawford")), match_id)


def from_arena_record(label: str, record: Any) -> GameInput:
    """A game from a JSON record: an arena game (the kernel record under ``game``) or a ``nardy
    play --jsonl`` line; :class:`RecordError` for anything else."""
    if not isinstance(record, dict):
        raise RecordError(f"{label}: a game record is a JSON object")
    if isinstance(record.get("game"), dict) and "decisions" in record:  # an arena game
        names = []
        for colour in ("white", "black"):
            seat = record.get(colour) or {}
            names.append(str(seat.get("name") or seat.get("bot_id") or colour.title()))
        setup = record.get("setup") or {}
        cube = None
        if isinstance(setup.get("cube"), dict):
            try:
                cube = CubeSettings(**setup["cube"])
            except TypeError as error:
                raise RecordError(f"{label}: bad cube setup ({error})") from None
        starter = setup.get("starter")
        if starter not in (None, 0, 1):
            raise RecordError(f"{label}: bad starter {starter!r} in the setup")
        match_setup = setup.get("match") or {}
        money = not match_setup.get("length")
        # The unit id names the match within its tournament; a database holds several.
        unit = record.get("unit_id") or record.get("match_id") or record.get("game_id") or label
        match_id = f"{record.get('tournament_id') or ''}/{unit}"
        match = None if money else _match_info(label, match_setup, match_id)
        label = str(record.get("game_id") or label)
        return from_kernel_record(
            label,
            record,
            record["game"],
            (names[0], names[1]),
            cube,
            starter=starter,
            money=money,
            match=match,
        )
    if "events" in record and "rolls" in record:  # nardy play --jsonl
        bots = record.get("bots") or {}
        players = (str(bots.get("White", "White")), str(bots.get("Black", "Black")))
        match = None
        if record.get("match_length"):  # a match game, written with its score (nardy play)
            source = label.rsplit(":", 1)[0]  # games.jsonl:3 -> games.jsonl
            match = _match_info(
                label,
                {
                    "length": record["match_length"],
                    "score": record.get("score"),
                    "crawford": record.get("crawford"),
                },
                f"{source}:match {record.get('match')}",
            )
        return from_kernel_record(label, record, record, players, match=match)
    raise RecordError(f"{label}: neither a `nardy play --jsonl` line nor an arena game record")


def _from_mat(path: Path, text: str) -> Iterator[GameInput]:
    from nardy.core.gnubg import GnubgFormatError, mat_play_to_text, parse_mat
    from nardy.core.match import Match

    try:
        match = parse_mat(text)
    except GnubgFormatError as error:
        raise RecordError(f"{path}: {error}") from None
    variant = load_variant("backgammon")
    state = Match(variant, match.match_length or None)
    for number, game in enumerate(match.games, start=1):
        rolls: list[Roll] = []
        actions: list[Action] = []
        for action in game.actions:
            if action.kind == "roll":
                high, low = max(action.dice), min(action.dice)
                if not rolls:
                    # The opening throw: (White's die, Black's die); the higher one starts and
                    # plays both numbers (RULES.md §2.11, backgammon).
                    rolls.append((high, low) if action.player == 0 else (low, high))
                else:
                    rolls.append((high, low))
                actions.append(Action("play", action.player, mat_play_to_text(action.moves)))
            else:
                actions.append(Action(action.kind, action.player))
        yield GameInput(
            f"{path.name}:game {number}",
            variant,
            tuple(rolls),
            tuple(actions),
            None,
            state.cube_settings(),
            (match.players[0], match.players[1]),
            game.winner,
            game.points,
            True,  # money play, or a backgammon match with its score
            None
            if not match.match_length
            else MatchInfo(
                match.match_length,
                (state.score[0], state.score[1]),
                state.crawford_game,
                path.name,  # a .mat file is one match
            ),
        )
        if game.winner is not None and not state.is_over:
            state.add_result(GameResult(game.winner, game.points, 1, 1, "bear_off"))


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
