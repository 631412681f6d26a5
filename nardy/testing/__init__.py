"""The conformance battery, shipped for plugin authors (``docs/writing-a-variant.md``).

Seeded random games are played to the end; at every decision the battery checks that the position is
legal for the variant, that the position id and JSON round-trip, that every legal play's text parses
back to the same play, that results are distinct and each uses the same number of dice, and that the
game ends within a bound on its length with a positive score (RULES.md §2.3, §2.6).

From a plugin's own test suite::

    from nardy.testing import conformance_test

    test_conformance = conformance_test("nackgammon")   # a parametrized pytest test

or call :func:`check_variant` directly; ``nardy check-variant NAME`` runs it from the command line.
The pytest plugin (:mod:`nardy.testing.pytest_plugin`, loaded automatically where nardy is installed)
adds ``--nardy-games`` and ``--nardy-seed`` to scale the battery.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nardy.core import InvalidPositionError, Position, load_variant, parse_steps
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings, DoubleDecision, Game, PlayDecision, TakeDecision
from nardy.core.variant import Variant, apply_steps

__all__ = [
    "DEFAULT_GAMES",
    "MAX_DECISIONS",
    "ConformanceError",
    "ConformanceReport",
    "check_decision",
    "check_game",
    "check_position",
    "check_variant",
    "conformance_test",
]

DEFAULT_GAMES = 6
MAX_DECISIONS = 3000
"""A game still running after this many decisions fails the battery (no variant needs 1,000)."""


class ConformanceError(AssertionError):
    """A variant broke an invariant; the message says which, where and with what seed."""


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConformanceError(message)


def check_position(variant: Variant, position: Position) -> None:
    """The position is legal for the variant and its id and JSON round-trip."""
    try:
        variant.validate(position)
    except InvalidPositionError as exc:
        raise ConformanceError(
            f"{position.id()} is not a position of {variant.name}: {exc}"
        ) from exc
    _require(
        Position.from_id(position.id(), variant.checkers) == position,
        f"position id {position.id()} does not round-trip",
    )
    _require(
        variant.position_from_json(position.to_json()) == position,
        f"position JSON of {position.id()} does not round-trip",
    )
    _require(variant.flip(variant.flip(position)) == position, f"flip twice of {position.id()}")


def check_decision(variant: Variant, decision: PlayDecision) -> int:
    """Every invariant of one play decision; returns the number of plays checked."""
    position = decision.position
    check_position(variant, position)
    plays = decision.plays
    where = f"{position.id()} with {list(plays.dice)}"
    _require(len(plays) >= 1, f"{where}: no play at all (the empty play is a play)")
    results = [p.result for p in plays]
    _require(len(set(results)) == len(results), f"{where}: plays not deduplicated by result")
    pins = variant.rules.hitting.pins
    for play in plays:
        check_position(variant, play.result)
        result: object = play.result  # ``in`` takes a Play, a resulting Position or play text
        _require(play in plays and result in plays, f"{where}: {play.text!r} not found")
        # Every play uses the segment's N dice, unless it ended the game: it bore off the last
        # checker (§2.3 item 2) or, in plakoto, the mother rule ended it (§3.12.2).
        if variant.outcome(play.result) is None:
            _require(
                len(play.steps) == plays.dice_used,
                f"{where}: {play.text!r} uses {len(play.steps)} dice, not {plays.dice_used}",
            )
        _require(
            apply_steps(position, play.steps, pins=pins) == play.result, f"{where}: {play.text!r}"
        )
        _require(
            apply_steps(position, parse_steps(play.text), pins=pins) == play.result,
            f"{where}: the text {play.text!r} does not parse back to the play",
        )
        _require(plays.find(play.text).result == play.result, f"{where}: find({play.text!r})")
    if plays.dice_used == 0:
        _require(results == [position], f"{where}: no die used but the position changed")
    return len(plays)


@dataclass
class ConformanceReport:
    """What :func:`check_variant` did: games, decisions and plays checked, and the failures."""

    variant: str
    games: int = 0
    decisions: int = 0
    plays: int = 0
    points: dict[int, int] = field(default_factory=dict)
    """Game value → games that ended with it."""
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def check_game(variant: Variant, seed: int, report: ConformanceReport | None = None) -> Game:
    """Play one seeded random game of ``variant`` to the end, checking every decision."""
    report = report or ConformanceReport(variant.name)
    rng = random.Random(seed)
    cube = CubeSettings(enabled=variant.rules.cube.available, beavers=True)
    game = Game(variant, SeededDice(seed), cube=cube, auto_forced=False)
    for _ in range(MAX_DECISIONS):
        decision = game.decision
        if decision is None:
            break
        report.decisions += 1
        if isinstance(decision, PlayDecision):
            report.plays += check_decision(variant, decision)
            game.decide(rng.randrange(len(decision.plays)))
        elif isinstance(decision, DoubleDecision):
            game.decide(rng.random() < 0.05)
        elif isinstance(decision, TakeDecision):
            game.decide("take" if rng.random() < 0.9 else "drop")
    result = game.result
    _require(result is not None, f"seed {seed}: no result after {MAX_DECISIONS} decisions")
    assert result is not None
    _require(
        result.points >= 1 or (result.draw and result.points == 0),
        f"seed {seed}: the game scored {result.points}",
    )
    if result.reason == "bear_off":
        final = game.position
        _require(
            final.off[0] == variant.checkers and final.off[1] < variant.checkers,
            f"seed {seed}: ended by a bear-off at {final.id()} (off {final.off})",
        )
    report.games += 1
    report.points[result.points] = report.points.get(result.points, 0) + 1
    return game


def check_variant(
    name: str,
    options: Mapping[str, Any] | None = None,
    *,
    games: int = DEFAULT_GAMES,
    seed: int = 0,
    progress: Callable[[], object] | None = None,
) -> ConformanceReport:
    """Seeded random games of a variant with every invariant checked; failures are collected.

    Game ``i`` uses seed ``seed + i``; ``progress`` is called after each game.
    """
    # A match variant (tavli) has no game of its own: check the variants it cycles instead.
    variant = load_variant(name, options).single_game("the conformance battery's games")
    report = ConformanceReport(name)
    for index in range(games):
        try:
            check_game(variant, seed + index, report)
        except Exception as exc:  # every failure is reported, with its seed
            report.failures.append(f"seed {seed + index}: {type(exc).__name__}: {exc}")
        if progress is not None:
            progress()
    return report


def conformance_test(*names: str, games: int = DEFAULT_GAMES) -> Callable[..., None]:
    """A pytest test function running the battery over ``names`` (one parametrized case each).

    Assign it in a test module: ``test_conformance = conformance_test("nackgammon")``.
    """
    import pytest

    @pytest.mark.parametrize("nardy_variant_name", names)
    def test_conformance(nardy_variant_name: str, request: Any) -> None:
        count = request.config.getoption("nardy_games", None) or games
        first = request.config.getoption("nardy_seed", None) or 0
        report = check_variant(nardy_variant_name, games=count, seed=first)
        assert report.ok, "\n".join(report.failures)

    made: Callable[..., None] = test_conformance
    return made
