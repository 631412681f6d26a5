"""Match records in the Jellyfish/gnubg ``.mat`` format, for backgammon.

A game's own record is :meth:`nardy.core.game.Game.record` (every roll, play and cube action,
JSON-ready; ``nardy play --jsonl`` writes one per line). :func:`mat_record` turns the games of a
backgammon match into :class:`nardy.core.gnubg.MatchRecord`, which :func:`nardy.core.gnubg.write_mat`
writes and gnubg imports.
"""

from __future__ import annotations

from collections.abc import Sequence

from nardy.core.errors import GameStateError
from nardy.core.game import Game
from nardy.core.gnubg import GameRecord, MatAction, MatchRecord, mat_moves_from_steps
from nardy.core.notation import parse_steps


def mat_game(game: Game, score_before: tuple[int, int]) -> GameRecord:
    """One finished or unfinished backgammon game as a ``.mat`` game (player 0 = White)."""
    if game.variant.rules.geometry != "opposite" or game.variant.rules.turn.doubles != "four":
        raise GameStateError(f"the .mat format holds backgammon games, not {game.variant.name}")
    if game.variant.rules.hitting.pins or game.variant.rules.game_end.mother != "off":
        # gnubg has no pinned checkers, no mother rule and no draws.
        raise GameStateError(f"the .mat format cannot hold {game.variant.name} (pinning)")
    if game.variant.max_game_value() != 3:
        # portes (RULES.md §3.12.1): no triple game, so gnubg would score its games differently.
        raise GameStateError(
            f"the .mat format cannot hold {game.variant.name}: gnubg scores a backgammon 3, "
            f"{game.variant.name} at most {game.variant.max_game_value()}"
        )
    if (
        game.cube_settings.enabled
        and game.cube_settings.auto_doubles_limit
        and any(e.kind == "opening" and e.data["dice"][0] == e.data["dice"][1] for e in game.events)
    ):
        # A tie of the opening throw doubled the cube; the format cannot say so, and gnubg would
        # then score the game at half its value.
        raise GameStateError("the .mat format has no automatic doubles")
    actions: list[MatAction] = []
    dice: tuple[int, int] | None = None
    for event in game.events:
        if event.kind == "roll":
            dice = (event.data["dice"][0], event.data["dice"][1])
        elif event.kind == "play":
            assert dice is not None, "a play follows its roll"
            moves = mat_moves_from_steps(parse_steps(event.data["play"]))
            actions.append(MatAction.roll(event.player, dice, moves))
            dice = None
        elif event.kind == "double":
            actions.append(MatAction.double(event.player, event.data["value"]))
        elif event.kind == "take":
            actions.append(MatAction.take(event.player))
        elif event.kind == "drop":
            actions.append(MatAction.drop(event.player))
        elif event.kind == "beaver":
            raise GameStateError("the .mat format has no beavers")
    result = game.result
    if result is None:
        return GameRecord(score_before, actions)
    return GameRecord(score_before, actions, result.winner, result.points)


def mat_record(
    games: Sequence[Game], players: tuple[str, str], match_length: int | None
) -> MatchRecord:
    """The games of a match (or money session, ``match_length=None``) as a ``.mat`` record."""
    score = [0, 0]
    records = []
    for game in games:
        records.append(mat_game(game, (score[0], score[1])))
        if game.result is not None:
            score[game.result.winner] += game.result.points
    return MatchRecord(players, match_length or 0, records)
