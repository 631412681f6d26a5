"""OpenSpiel (PyPI ``open-spiel``): ``pyspiel.load_game("backgammon")``.

OpenSpiel's Python bindings cannot be set to an arbitrary position: ``BackgammonState`` exposes no
``set_state`` (the C++ ``SetState`` is not bound), ``game.new_initial_state(str | json | struct)`` is not
implemented for backgammon, and a serialized state is just its action history. So OpenSpiel cannot run the
oracle corpus. Instead :func:`generate_corpus` plays seeded random games **in OpenSpiel itself** and keeps
every position where a player starts a turn, with OpenSpiel's own state for it and nardy's position JSON
for everybody else.

OpenSpiel has no single "all legal plays" call either: an action is **two** checker moves, and a double is
played as two decisions by the same player (an "extra turn"). Two modes:

* ``open_spiel full turn`` — what a user must do to get every distinct result of the turn:
  ``legal_actions()``, ``child(a)`` for each (and, on a double's extra turn, ``legal_actions()`` and
  ``child`` once more), deduplicated by ``to_string()``. The loop is Python around C++ calls.
* ``open_spiel legal_actions()`` — the C++ generator alone: the action ids of the first decision. It is the
  whole answer only for non-doubles and gives action ids, not positions: speed only.

``LegalActions`` recomputes from the state each call (no cache).
"""

from __future__ import annotations

import importlib
import random
import re
from importlib import metadata
from types import ModuleType
from typing import Any

from . import CHECKERS, Case, Engine, EngineUnavailable, Key, Mode, Unsupported, key_of_json

NAME = "open_spiel"

_SCORES = re.compile(r"Scores, X: (\d+), O: (\d+)")
_DICE = re.compile(r"^Dice: (\d)(\d)$", re.MULTILINE)
NOT_SETTABLE = (
    "OpenSpiel cannot be set to an arbitrary position from Python (no set_state binding; "
    "new_initial_state(str/json) not implemented for backgammon), so it cannot load this corpus"
)


def _pyspiel() -> ModuleType:
    try:
        return importlib.import_module("pyspiel")
    except ImportError as exc:
        raise EngineUnavailable(f"`pip install open-spiel` (not installed: {exc})") from exc


def position_json(state: Any, player: int) -> dict[str, list[int]]:
    """The position of an OpenSpiel backgammon state seen by ``player`` (0 = X, 1 = O).

    OpenSpiel's ``board(p, i)`` counts p's checkers on board index ``i``: X's own point ``k`` is index
    ``24 - k``, O's is index ``k - 1``. Bars and borne-off counts are only in the text form.
    """
    text = state.to_string()
    bar_line = next(line for line in text.splitlines() if line.startswith("Bar:"))
    bars = (bar_line.count("x"), bar_line.count("o"))
    match = _SCORES.search(text)
    if match is None:  # pragma: no cover - format guard
        raise ValueError(f"no scores in OpenSpiel state text:\n{text}")
    scores = (int(match.group(1)), int(match.group(2)))
    other = 1 - player
    points = []
    for k in range(1, 25):
        index = 24 - k if player == 0 else k - 1
        points.append(state.board(player, index) - state.board(other, index))
    position = {
        "points": points,
        "bar": [bars[player], bars[other]],
        "off": [scores[player], scores[other]],
    }
    key = key_of_json(position)
    mover = sum(n for n in key[:24] if n > 0) + key[24] + key[26]
    opponent = sum(-n for n in key[:24] if n < 0) + key[25] + key[27]
    if (mover, opponent) != (CHECKERS, CHECKERS):  # pragma: no cover - conversion guard
        raise ValueError(f"bad OpenSpiel conversion ({mover}, {opponent} checkers):\n{text}")
    return position


def generate_corpus(count: int, seed: int = 0) -> list[Case]:
    """``count`` turn-start positions from seeded random OpenSpiel games (uniform random legal actions,
    dice from the game's own chance outcomes drawn with the same seeded generator)."""
    pyspiel = _pyspiel()
    game = pyspiel.load_game("backgammon")
    rng = random.Random(seed)
    cases: list[Case] = []
    game_index = 0
    while len(cases) < count:
        state = game.new_initial_state()
        turn = 0
        after_chance = False
        while not state.is_terminal() and len(cases) < count:
            if state.is_chance_node():
                outcomes = [action for action, _ in state.chance_outcomes()]
                state.apply_action(rng.choice(outcomes))
                after_chance = True
                continue
            if after_chance:  # a turn starts (not a double's extra turn)
                match = _DICE.search(state.to_string())
                if match is None:  # pragma: no cover - format guard
                    raise ValueError(f"no dice in OpenSpiel state text:\n{state}")
                player = state.current_player()
                cases.append(
                    Case(
                        id=f"os{game_index:03d}t{turn:03d}",
                        position=position_json(state, player),
                        dice=(int(match.group(1)), int(match.group(2))),
                        results=None,
                        native={NAME: state.clone()},
                    )
                )
                turn += 1
            after_chance = False
            state.apply_action(rng.choice(state.legal_actions()))
        game_index += 1
    return cases


def full_turn(state: Any) -> dict[str, Any]:
    """Every distinct result of the turn: text form → final state."""
    player = state.current_player()
    out: dict[str, Any] = {}
    for action in state.legal_actions():
        child = state.child(action)
        if (
            not child.is_chance_node()
            and not child.is_terminal()
            and child.current_player() == player
        ):
            for second in child.legal_actions():  # a double's extra turn
                grandchild = child.child(second)
                out[grandchild.to_string()] = grandchild
        else:
            out[child.to_string()] = child
    return out


def _prepare(case: Case) -> tuple[Any, ...]:
    state = case.native.get(NAME)
    if state is None:
        raise Unsupported(NOT_SETTABLE)
    return (state,)


def _results(args: tuple[Any, ...], out: Any) -> frozenset[Key]:
    player = args[0].current_player()
    return frozenset(key_of_json(position_json(s, player)) for s in out.values())


def load() -> Engine:
    pyspiel = _pyspiel()
    try:
        version = metadata.version("open-spiel")
    except metadata.PackageNotFoundError:  # pragma: no cover
        version = "unknown"
    modes = (
        Mode(
            label="open_spiel full turn",
            returns="dict text → state of every distinct result (Python loop over child())",
            prepare=_prepare,
            call=full_turn,
            results=_results,
            notes=(
                "timed: legal_actions() + child() per action (twice on doubles) + to_string() dedup",
            ),
        ),
        Mode(
            label="open_spiel legal_actions()",
            returns="action ids of the first decision (doubles: first half of the turn only)",
            prepare=_prepare,
            call=pyspiel.BackgammonState.legal_actions,
            results=None,
            complete=False,
            notes=("speed only: action ids, not positions; on doubles only half the turn",),
        ),
    )
    return Engine(
        NAME,
        (("open-spiel", version),),
        modes,
        notes=(
            NOT_SETTABLE + "; measured on positions from seeded random OpenSpiel games instead",
        ),
    )
