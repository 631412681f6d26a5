"""OpenSpiel games of every registered variant (``open_spiel``; docs/learning.md).

::

    import pyspiel
    from nardy.openspiel import register

    register()                                    # python_nardy_<variant> for every variant
    game = pyspiel.load_game("python_nardy_long")
    cubed = pyspiel.load_game("python_nardy_long", {"cube": True, "match_length": 5})

The variant's options are the game's parameters (0 stands for an unset ``match_length`` or
``max_cube``). The dice are EXPLICIT_STOCHASTIC chance nodes: the opening throw has 36 ordered White-Black
outcomes (ties are thrown again), every other roll 21 outcomes with probability 1/36 (doubles) or
2/36. A chance outcome's action id is ``6 (a − 1) + (b − 1)`` for the dice ``a-b`` (high die first
after the opening throw). Player actions are those of the learning environments: a play's index in
the segment's legal plays; 0 roll / 1 double; 0 take / 1 drop / 2 beaver. Forced plays (a single
legal play) are made without asking. Returns are the game points, + for the winner. Observation
tensors are ``nardy226_v1`` (docs/encoding.md) from the observing player's view.

States are :class:`nardy.env.state.GameState` machines, so cloning (MCTS) is cheap.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from nardy import encoding
from nardy.core.game import DoubleDecision, PlayDecision
from nardy.core.options import OptionSpec
from nardy.core.plugins import load_variant, variant_names
from nardy.core.variant import Variant
from nardy.env.spaces import action_space_size
from nardy.env.state import GameState

__all__ = ["game_name", "register"]

MAX_GAME_LENGTH = 10_000
"""A bound on the number of actions (chance outcomes included) of a game; random games of every
variant stay far below it (a few hundred)."""

_TAKE_ANSWERS = ("take", "drop", "beaver")
_registered: set[str] = set()


def game_name(variant: str) -> str:
    """The OpenSpiel short name of a variant's game."""
    return f"python_nardy_{variant}"


def _max_utility(variant: Variant) -> float:
    """The most points one game can score: the largest game value × the largest cube (64 where the
    cube has no max_cube)."""
    rules = variant.rules
    checkers = sum(rules.layout.points.values())
    value = {"BackgammonScoring": 3, "TrictracScoring": 8, "LongScoring": 3, "FevgaScoring": 2}
    base = checkers if rules.scoring.per_checker else value.get(type(rules.scoring).__name__, 8)
    cube = 1
    if rules.cube.available:
        cube = int(variant.options.get("max_cube") or 64)
    return float(base * cube)


def _parameter_default(spec: OptionSpec) -> bool | int | str:
    """A variant option as an OpenSpiel parameter: its default, with 0 for "none" (an integer
    option whose default is unset, such as ``match_length`` or ``max_cube``)."""
    if spec.default is None:
        return 0
    value: bool | int | str = spec.default
    return value


def register(variants: list[str] | None = None) -> list[str]:
    """Register ``python_nardy_<variant>`` for ``variants`` (default: every registered variant);
    returns the names. Registering again is a no-op."""
    names = []
    for name in variants or variant_names():
        short = game_name(name)
        names.append(short)
        if short in _registered:
            continue
        variant = load_variant(name)
        specs = {spec.name: spec for spec in variant.info.options}
        game_type = pyspiel.GameType(
            short_name=short,
            long_name=f"nardy {variant.info.title}",
            dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
            chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
            information=pyspiel.GameType.Information.PERFECT_INFORMATION,
            utility=pyspiel.GameType.Utility.ZERO_SUM,
            reward_model=pyspiel.GameType.RewardModel.TERMINAL,
            max_num_players=2,
            min_num_players=2,
            provides_information_state_string=True,
            provides_information_state_tensor=False,
            provides_observation_string=True,
            provides_observation_tensor=True,
            parameter_specification={n: _parameter_default(s) for n, s in specs.items()},
        )
        # One class per variant, as OpenSpiel's own Python games register a class.
        game_class = type(
            f"NardyGame_{name}",
            (NardyGame,),
            {"_game_type": game_type, "_variant_name": name, "_specs": specs},
        )
        pyspiel.register_game(game_type, game_class)
        _registered.add(short)
    return names


class NardyGame(pyspiel.Game):  # type: ignore[misc]
    """One variant as an OpenSpiel game."""

    _game_type: Any
    _variant_name: str
    _specs: dict[str, OptionSpec]

    def __init__(self, params: Any = None) -> None:
        given = dict(params or {})
        options = {
            name: None if value == 0 and self._specs[name].default is None else value
            for name, value in given.items()
            if name in self._specs
        }
        self.variant = load_variant(self._variant_name, options)
        top = _max_utility(self.variant)
        info = pyspiel.GameInfo(
            num_distinct_actions=action_space_size(self.variant),
            max_chance_outcomes=36,
            num_players=2,
            min_utility=-top,
            max_utility=top,
            utility_sum=0.0,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(self._game_type, info, given)

    def new_initial_state(self) -> NardyState:
        return NardyState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> NardyObserver:
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        return NardyObserver()


class NardyState(pyspiel.State):  # type: ignore[misc]
    """A game state: a :class:`GameState` behind OpenSpiel's interface."""

    def __init__(self, game: NardyGame) -> None:
        super().__init__(game)
        self.state = GameState(game.variant)

    def __deepcopy__(self, memo: dict[int, Any]) -> NardyState:
        # OpenSpiel clones Python states with deepcopy; share the immutable variant and plays.
        new: NardyState = self.__class__.__new__(self.__class__)
        pyspiel.State.__init__(new, self.get_game())
        new.__dict__.update(self.__dict__)
        new.state = self.state.clone()
        return new

    def current_player(self) -> int:
        s = self.state
        if s.is_terminal:
            return int(pyspiel.PlayerId.TERMINAL)
        if s.is_chance:
            return int(pyspiel.PlayerId.CHANCE)
        assert s.decision is not None
        return s.decision.player

    def _legal_actions(self, player: int) -> list[int]:
        decision = self.state.decision
        if decision is None or decision.player != player:
            return []
        if isinstance(decision, PlayDecision):
            return list(range(len(decision.plays)))
        if isinstance(decision, DoubleDecision):
            return [0, 1]
        return [0, 1, 2] if decision.beaver_allowed else [0, 1]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(6 * (a - 1) + (b - 1), p) for (a, b), p in self.state.chance_outcomes()]

    def _apply_action(self, action: int) -> None:
        s = self.state
        if s.is_chance:
            s.apply_roll((action // 6 + 1, action % 6 + 1))
            return
        decision = s.decision
        if isinstance(decision, PlayDecision):
            s.apply(int(action))
        elif isinstance(decision, DoubleDecision):
            s.apply(action == 1)
        else:
            s.apply(_TAKE_ANSWERS[action])

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"roll {action // 6 + 1}-{action % 6 + 1}"
        decision = self.state.decision
        if isinstance(decision, PlayDecision) and 0 <= action < len(decision.plays):
            return str(decision.plays[action])
        if isinstance(decision, DoubleDecision):
            return ("roll", "double")[action] if action in (0, 1) else f"action {action}"
        if action in (0, 1, 2) and not isinstance(decision, PlayDecision):
            return _TAKE_ANSWERS[action]
        return f"action {action}"

    def is_terminal(self) -> bool:
        return self.state.is_terminal

    def returns(self) -> list[float]:
        white, black = self.state.points()
        return [float(white), float(black)]

    def __str__(self) -> str:
        return str(self.state)


class NardyObserver:
    """Observations: ``nardy226_v1`` of the position from the player's view (OpenSpiel's
    PyObserver interface)."""

    def __init__(self) -> None:
        self.tensor = np.zeros(encoding.FULL_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: NardyState, player: int) -> None:
        s = state.state
        decision = s.decision
        position = s.position if s.mover == player else s.variant.flip(s.position)
        context = encoding.Context(
            cube=s.cube_settings.enabled,
            cube_value=s.cube.value,
            cube_owner="centre"
            if s.cube.owner is None
            else "mover"
            if s.cube.owner == player
            else "opponent",
        )
        if isinstance(decision, PlayDecision) and decision.player == player:
            context = encoding.Context(
                phase=decision.segment.kind,
                segment=decision.segment.dice,
                cube=context.cube,
                cube_value=context.cube_value,
                cube_owner=context.cube_owner,
            )
            position = decision.position
        elif decision is not None and decision.player == player:
            phase: encoding.Phase = "double" if isinstance(decision, DoubleDecision) else "take"
            context = encoding.Context(
                phase=phase,
                cube=context.cube,
                cube_value=context.cube_value,
                cube_owner=context.cube_owner,
            )
            position = decision.position
        self.tensor[:] = encoding.encode(position, context)

    def string_from(self, state: NardyState, player: int) -> str:
        s = state.state
        position = s.position if s.mover == player else s.variant.flip(s.position)
        return f"{position.id()} cube {s.cube.value}"
