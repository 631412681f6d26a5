"""OpenSpiel games of every registered variant (``open_spiel``; docs/learning.md).

::

    import pyspiel
    from nardy.openspiel import register

    register()                                    # python_nardy_<variant> for every variant
    game = pyspiel.load_game("python_nardy_long")
    cubed = pyspiel.load_game("python_nardy_long", {"cube": True, "match_length": 5})

The variant's options are the game's parameters (0 stands for an unset ``match_length`` or
``max_cube``). The dice are EXPLICIT_STOCHASTIC chance nodes. The opening throw is one chance
node whatever its ties: outcome ``36 k + 6 (w − 1) + (b − 1)`` is White's ``w`` and Black's ``b``
(``w ≠ b``) after ``k`` ties (``k`` > 0 only where ties double the cube, up to the limit of
automatic doubles). Every other roll has 21 outcomes ``6 (a − 1) + (b − 1)``, high die first, with
probability 1/36 (doubles) or 2/36. Player actions, observations and rewards are those of the
learning environments (:mod:`nardy.env.driver`): the canonical play order, 0 roll / 1 double,
0 take / 1 drop / 2 beaver; ``observation_tensor`` is the AEC observation; the observation and
information-state strings spell out the same (position, dice, turn plan, cube, match). Forced plays
are made without asking. Returns are the game points, + for the winner.

A state is a :class:`~nardy.core.game.Game` without a dice source (its throws are the chance
nodes) behind the environments' :class:`~nardy.env.driver.Driver`: one game flow for every API.
Cloning and serialisation replay the game's inputs (:meth:`Game.__deepcopy__`).
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import pyspiel

from nardy.core.game import DoubleDecision, Game, PlayDecision, cube_settings_for
from nardy.core.options import OptionSpec
from nardy.core.plugins import game_variant_names, load_variant
from nardy.core.position import Position
from nardy.core.variant import LegalPlays, Variant
from nardy.env.driver import Driver, EnvConfig

__all__ = ["game_name", "register"]

MAX_GAME_LENGTH = 10_000
"""A bound on the number of actions (chance outcomes included) of a game; random games of every
variant stay far below it (a few hundred)."""

_TAKE_ANSWERS = ("take", "drop", "beaver")
_TIE = 1
"""The face thrown for a tie folded into the opening chance node (any equal pair would do)."""
_registered: set[str] = set()


def game_name(variant: str) -> str:
    """The OpenSpiel short name of a variant's game."""
    return f"python_nardy_{variant}"


class _RememberingVariant(Variant):
    """The game's variant, remembering the legal plays of the last segments it was asked for.

    A clone replays the game's inputs, asking again for the legal plays of every segment so far;
    the states of one OpenSpiel game (MCTS: a clone of the root per simulation) share their history,
    so the answers are remembered (least recently used first out): clones cost a third to a half."""

    CAPACITY: Final = 2048

    def __init__(self, variant: Variant) -> None:
        super().__init__(variant.info, variant.options, variant.rules)
        self._remembered: OrderedDict[tuple[Position, tuple[int, ...]], LegalPlays] = OrderedDict()

    def legal_plays(self, position: Position, dice: Sequence[int]) -> LegalPlays:
        key = (position, tuple(dice))
        remembered = self._remembered
        plays = remembered.get(key)
        if plays is None:
            plays = remembered[key] = super().legal_plays(position, dice)
            if len(remembered) > self.CAPACITY:
                remembered.popitem(last=False)
        else:
            remembered.move_to_end(key)
        return plays


def _max_utility(variant: Variant) -> float:
    """The most points one game can score: the largest game value × the largest cube (64 where the
    cube has no max_cube)."""
    cube = 1
    if variant.rules.cube.available:
        cube = int(variant.options.get("max_cube") or 64)
    return float(variant.max_game_value() * cube)


def _opening_ties(variant: Variant) -> int:
    """How many ties of the opening throw double the cube (0: ties change nothing)."""
    settings = cube_settings_for(variant, match_length=variant.options.get("match_length"))
    return settings.auto_doubles_limit if settings.enabled else 0


def _parameter_default(spec: OptionSpec) -> bool | int | str:
    """A variant option as an OpenSpiel parameter: its default, with 0 for "none" (an integer
    option whose default is unset, such as ``match_length`` or ``max_cube``)."""
    if spec.default is None:
        return 0
    value: bool | int | str = spec.default
    return value


def register(variants: list[str] | None = None) -> list[str]:
    """Register ``python_nardy_<variant>`` for ``variants`` (default: every registered variant
    that plays single games); returns the names. Registering again is a no-op. A match variant
    (tavli) raises :class:`~nardy.core.errors.MatchVariantError`."""
    names = []
    for name in variants or game_variant_names():
        short = game_name(name)
        names.append(short)
        if short in _registered:
            continue
        variant = load_variant(name).single_game("an OpenSpiel game")  # tavli: a match
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
        self.variant = _RememberingVariant(load_variant(self._variant_name, options))
        self.config = EnvConfig.build(self.variant, {})
        self.opening_ties = _opening_ties(self.variant)
        top = _max_utility(self.variant)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.config.actions,
            max_chance_outcomes=36 * (self.opening_ties + 1),
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
        return NardyObserver(self.config.obs_size)


class NardyState(pyspiel.State):  # type: ignore[misc]
    """A game state: a :class:`Game` whose throws are chance nodes, behind a :class:`Driver`."""

    def __init__(self, game: NardyGame) -> None:
        super().__init__(game)
        self.driver = Driver(game.config, None)
        self.opening_ties = game.opening_ties

    def __deepcopy__(self, memo: dict[int, Any]) -> NardyState:
        # OpenSpiel clones Python states with deepcopy: the game is copied by replaying its inputs.
        new: NardyState = self.__class__.__new__(self.__class__)
        pyspiel.State.__init__(new, self.get_game())
        new.__dict__.update(self.__dict__)
        new.driver = Driver.of(self.driver.config, copy.deepcopy(self.driver.game, memo))
        return new

    @property
    def game(self) -> Game:
        return self.driver.game

    def current_player(self) -> int:
        game = self.driver.game
        if game.result is not None:
            return int(pyspiel.PlayerId.TERMINAL)
        if game.chance is not None:
            return int(pyspiel.PlayerId.CHANCE)
        return self.driver.player

    def _legal_actions(self, player: int) -> list[int]:
        return [int(a) for a in np.flatnonzero(self.driver.mask(player))]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        node = self.driver.game.chance
        if node is None:
            raise ValueError("not a chance node")
        if node.kind == "opening":
            ties = self.opening_ties
            out = []
            for k in range(ties + 1):
                p = (1 / 6) ** k * (5 / 6 if k < ties else 1.0) / 30
                out += [
                    (36 * k + 6 * (w - 1) + (b - 1), p)
                    for w in range(1, 7)
                    for b in range(1, 7)
                    if w != b
                ]
            return out
        return [
            (6 * (a - 1) + (b - 1), (1 if a == b else 2) / 36)
            for a in range(6, 0, -1)
            for b in range(a, 0, -1)
        ]

    def _apply_action(self, action: int) -> None:
        driver = self.driver
        if driver.game.chance is not None:
            ties, dice = divmod(action, 36)
            a, b = dice // 6 + 1, dice % 6 + 1
            if driver.game.chance.kind == "opening":
                if a == b or ties > self.opening_ties:
                    raise ValueError(f"{action} is not an outcome of the opening throw")
                for _ in range(ties):
                    driver.roll(_TIE, _TIE)
            elif ties or a < b:
                raise ValueError(f"{action} is not a roll outcome (high die first)")
            driver.roll(a, b)
            return
        driver.step(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            ties, dice = divmod(action, 36)
            text = f"roll {dice // 6 + 1}-{dice % 6 + 1}"
            return f"{ties} ties, then {text}" if ties else text
        decision = self.driver.game.decision
        if isinstance(decision, PlayDecision) and 0 <= action < len(decision.plays):
            return str(self.driver.play(action))
        if isinstance(decision, DoubleDecision):
            return ("roll", "double")[action] if action in (0, 1) else f"action {action}"
        if action in (0, 1, 2) and decision is not None:
            return _TAKE_ANSWERS[action]
        return f"action {action}"

    def is_terminal(self) -> bool:
        return self.driver.over

    def returns(self) -> list[float]:
        white, black = self.driver.points()
        return [float(white), float(black)]

    def __str__(self) -> str:
        return self.driver.describe(0)


class NardyObserver:
    """Observations (OpenSpiel's PyObserver interface): the AEC environment's observation of the
    player, and its text (:meth:`Driver.describe`) for the strings."""

    def __init__(self, size: int) -> None:
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: NardyState, player: int) -> None:
        self.tensor[:] = state.driver.observation(player)

    def string_from(self, state: NardyState, player: int) -> str:
        return state.driver.describe(player)
