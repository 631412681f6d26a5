"""The ``.mat`` codec of the game record (:mod:`nardy.core.record`), for backgammon.

:func:`mat_game` writes a :class:`~nardy.core.record.GameRecord` as a ``.mat`` game
(:class:`nardy.core.gnubg.MatGame`), :func:`mat_record` the games of a match as the
:class:`~nardy.core.gnubg.MatchRecord` that :func:`nardy.core.gnubg.write_mat` writes and gnubg
imports; :func:`from_mat` reads a parsed ``.mat`` match back into game records (their rolls and
actions: the kernel's log is what :class:`~nardy.core.record.Replay` makes of them).
"""

from __future__ import annotations

from collections.abc import Sequence

from nardy.core.errors import GameStateError
from nardy.core.game import GameResult, cube_settings_for
from nardy.core.gnubg import MatAction, MatchRecord, MatGame, mat_moves_from_steps, mat_play_to_text
from nardy.core.match import Match
from nardy.core.notation import parse_steps
from nardy.core.plugins import load_variant
from nardy.core.record import Event, GameRecord, MatchInfo, Outcome, Player, Setup

__all__ = ["from_mat", "mat_game", "mat_record"]


def mat_game(record: GameRecord, score_before: tuple[int, int]) -> MatGame:
    """One finished or unfinished backgammon game as a ``.mat`` game (player 0 = White)."""
    variant = record.variant_object()
    if variant.rules.geometry != "opposite" or variant.rules.turn.doubles != "four":
        raise GameStateError(f"the .mat format holds backgammon games, not {variant.name}")
    if variant.rules.hitting.pins or variant.rules.game_end.mother != "off":
        # gnubg has no pinned checkers, no mother rule and no draws.
        raise GameStateError(f"the .mat format cannot hold {variant.name} (pinning)")
    if variant.max_game_value() != 3:
        # portes (RULES.md §3.12.1): no triple game, so gnubg would score its games differently.
        raise GameStateError(
            f"the .mat format cannot hold {variant.name}: gnubg scores a backgammon 3, "
            f"{variant.name} at most {variant.max_game_value()}"
        )
    cube = record.game_start()[1] or cube_settings_for(
        variant, match_length=variant.options.get("match_length")
    )
    if (
        cube.enabled
        and cube.auto_doubles_limit
        and any(e.kind == "opening" and e.dice[0] == e.dice[1] for e in record.events)
    ):
        # A tie of the opening throw doubled the cube; the format cannot say so, and gnubg would
        # then score the game at half its value.
        raise GameStateError("the .mat format has no automatic doubles")
    actions: list[MatAction] = []
    dice: tuple[int, int] | None = None
    for event in record.events:
        if event.kind == "roll":
            dice = (event.dice[0], event.dice[1])
        elif event.kind == "play":
            assert dice is not None, "a play follows its roll"
            moves = mat_moves_from_steps(parse_steps(event.play))
            actions.append(MatAction.roll(event.player, dice, moves))
            dice = None
        elif event.kind == "double":
            actions.append(MatAction.double(event.player, event.value))
        elif event.kind == "take":
            actions.append(MatAction.take(event.player))
        elif event.kind == "drop":
            actions.append(MatAction.drop(event.player))
        elif event.kind == "beaver":
            raise GameStateError("the .mat format has no beavers")
    winner, points = record.winner_points()
    if winner is None:
        return MatGame(score_before, actions)
    return MatGame(score_before, actions, winner, points)


def mat_record(
    records: Sequence[GameRecord], players: tuple[str, str], match_length: int | None
) -> MatchRecord:
    """The games of a match (or money session, ``match_length=None``) as a ``.mat`` record."""
    score = [0, 0]
    games = []
    for record in records:
        games.append(mat_game(record, (score[0], score[1])))
        winner, points = record.winner_points()
        if winner is not None:
            score[winner] += points
    return MatchRecord(players, match_length or 0, games)


def from_mat(match: MatchRecord, match_id: str = "") -> list[GameRecord]:
    """The games of a parsed ``.mat`` match as records: each with its rolls (the opening throw's
    dice as White's and Black's: the higher one starts and plays both numbers, RULES.md §2.11),
    its plays and cube actions, the cube and score the match gives it, and the ``Wins`` line as
    its outcome (``termination`` empty: the file does not say how)."""
    variant = load_variant("backgammon")
    state = Match(variant, match.match_length or None)
    records = []
    players = (Player(match.players[0]), Player(match.players[1]))
    for number, game in enumerate(match.games, start=1):
        rolls: list[tuple[int, int]] = []
        events: list[Event] = []
        for action in game.actions:
            if action.kind == "roll":
                high, low = max(action.dice), min(action.dice)
                if not rolls:
                    rolls.append((high, low) if action.player == 0 else (low, high))
                else:
                    rolls.append((high, low))
                dice = (high, low)
                events.append(Event("roll", action.player, dice))
                play = mat_play_to_text(action.moves)
                events.append(Event("play", action.player, dice, play=play))
            else:
                events.append(Event(action.kind, action.player, value=action.cube))
        records.append(
            GameRecord(
                variant.name,
                variant.options,
                tuple(rolls),
                tuple(events),
                players=players,
                match=MatchInfo(
                    match.match_length,
                    (state.score[0], state.score[1]),
                    number,
                    state.crawford_game,
                    match_id,
                ),
                setup=Setup(None, state.cube_settings()),
                outcome=None if game.winner is None else Outcome(game.winner, game.points, 0, ""),
            )
        )
        if game.winner is not None and not state.is_over:
            state.add_result(GameResult(game.winner, game.points, 1, 1, "bear_off"))
    return records
