"""Bots: the interface and driver (nardy.bots), the random bot, and the heuristic bot's strength.

The strength test is a fixed, seeded run (dice seeds 0…39, bot seeds fixed), so it is deterministic; its
margin (points per game > 0.5 and a win rate of at least 70 %, where the measured figures are about
1.3–2.7 points and 88–100 % with the cube off, see the bots report) leaves room for changes in the
kernel that reshuffle the random bot's choices.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nardy.bots import (
    Bot,
    HeuristicBot,
    RandomBot,
    builtin_bot_names,
    installed_bots,
    is_builtin_bot,
    make_bot,
    play_game,
)
from nardy.core import game_variant_names, load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import (
    BLACK,
    WHITE,
    Cube,
    CubeSettings,
    DoubleDecision,
    Game,
    PlayDecision,
    Segment,
    TakeDecision,
)
from nardy.core.position import Position
from nardy.core.variant import Variant

VARIANTS = sorted(game_variant_names())
"""Every registered variant (the ten of RULES.md and any installed plugin)."""
RULES_VARIANTS = [
    "backgammon", "trictrac", "long", "nardgammon", "mad",
    "gulbar", "mad_gulbar", "khachapuri", "fevga", "giul",
]  # fmt: skip
"""The ten variants of RULES.md §3."""


class FirstBot(Bot):
    """Always the first play; records what it was asked."""

    name = "first"

    def __init__(self) -> None:
        self.started: list[tuple[str, int]] = []
        self.players: set[int] = set()

    def start_game(self, variant: Variant, colour: int) -> None:
        self.started.append((variant.name, colour))

    def choose_play(self, decision: PlayDecision) -> int:
        self.players.add(decision.player)
        return 0


class CheckingRandomBot(RandomBot):
    """A random bot that checks every index it returns."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed, double_rate=0.2)
        self.chosen = 0

    def choose_play(self, decision: PlayDecision) -> int:
        index = super().choose_play(decision)
        assert isinstance(index, int)
        assert 0 <= index < len(decision.plays)
        self.chosen += 1
        return index


# -- registry ---------------------------------------------------------------------------------------


def test_builtin_bots_registry() -> None:
    assert builtin_bot_names() == ["gnubg", "heuristic", "human", "neural", "random"]
    assert isinstance(make_bot("random", seed=1), RandomBot)
    assert isinstance(make_bot("heuristic"), HeuristicBot)
    assert make_bot("random").name == "random"
    assert make_bot("heuristic").name == "heuristic"


def test_unknown_bot_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown bot 'alphazero'") as info:
        make_bot("alphazero")
    assert "gnubg, heuristic, human, neural, random" in str(info.value)


def test_builtin_bots_are_entry_points_of_the_same_group_as_third_parties() -> None:
    """nardy's pyproject.toml declares its bots in the group ``nardy.bots``, and the registry finds
    exactly those as the built-ins (no second list in the code)."""
    import tomllib
    from importlib import metadata
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    declared = pyproject["project"]["entry-points"]["nardy.bots"]
    found = {
        ep.name: ep.value
        for ep in metadata.entry_points(group="nardy.bots")
        if ep.dist is not None and ep.dist.name == "nardy"
    }
    assert found == declared
    assert {
        name: bot.reference for name, bot in installed_bots().items() if bot.builtin
    } == declared


def test_a_bot_takes_an_argument_only_if_its_factory_does() -> None:
    assert is_builtin_bot("neural:weights.npz") and is_builtin_bot("gnubg:2")
    assert not is_builtin_bot("heuristic:3") and not is_builtin_bot("neuralish")
    with pytest.raises(
        ValueError, match=r"bot 'heuristic' takes no argument \(asked for 'heuristic:3'\)"
    ):
        make_bot("heuristic:3")


def test_bot_is_abstract_and_has_cube_defaults() -> None:
    with pytest.raises(TypeError):
        Bot()  # type: ignore[abstract]
    bot = FirstBot()
    position = load_variant("backgammon").start_position()
    assert bot.offer_double(DoubleDecision(WHITE, position, Cube())) is False
    assert (
        bot.respond_to_double(TakeDecision(BLACK, position, Cube(), beaver_allowed=True)) == "take"
    )


# -- play_game --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", VARIANTS)
def test_play_game_ends_with_a_result(name: str) -> None:
    variant = load_variant(name)
    white, black = FirstBot(), FirstBot()
    game = play_game(variant, (white, black), SeededDice(3))
    assert game.is_over and game.decision is None
    assert game.result is not None and game.result.points >= 1
    assert white.started == [(name, WHITE)] and black.started == [(name, BLACK)]
    # Every decision went to the bot of the deciding colour.
    assert white.players <= {WHITE} and black.players <= {BLACK}


def test_play_game_refuses_a_match_variant() -> None:
    """tavli (RULES.md §3.12.3) is a match of portes, plakoto and fevga: a single game of it
    would be portes under the wrong name, so it is refused, naming the cycle."""
    from nardy.core.errors import MatchVariantError

    with pytest.raises(MatchVariantError, match=r"portes → plakoto → fevga.*as a match"):
        play_game(load_variant("tavli"), (FirstBot(), FirstBot()), SeededDice(3))


def test_a_match_variant_has_no_legal_plays_of_its_own() -> None:
    """Asking tavli for the plays of a roll would answer by portes' rules under tavli's name."""
    from nardy.core.errors import MatchVariantError

    tavli = load_variant("tavli")
    with pytest.raises(MatchVariantError, match="tavli is a match of portes → plakoto → fevga"):
        tavli.legal_plays(tavli.start_position(), (6, 5))


def test_play_game_needs_two_bots() -> None:
    with pytest.raises(ValueError, match="two bots"):
        play_game(load_variant("long"), (FirstBot(),), SeededDice(1))  # type: ignore[arg-type]


def _record(name: str, seed: int, cube: bool) -> dict[str, object]:
    variant = load_variant(name, {"cube": True} if cube and name != "backgammon" else {})
    game = play_game(
        variant, (make_bot("heuristic", seed), make_bot("random", seed)), SeededDice(seed)
    )
    return game.record()


@pytest.mark.parametrize(("name", "cube"), [("backgammon", True), ("long", True), ("giul", False)])
def test_same_seeds_same_game(name: str, cube: bool) -> None:
    first = _record(name, 11, cube)
    assert first == _record(name, 11, cube)
    assert first != _record(name, 12, cube)


@pytest.mark.parametrize("name", VARIANTS)
def test_random_bot_picks_legal_indices(name: str) -> None:
    variant = load_variant(name)
    bots = (CheckingRandomBot(1), CheckingRandomBot(2))
    for seed in range(3):
        game = play_game(variant, bots, SeededDice(seed))
        assert game.is_over
    assert bots[0].chosen > 0 and bots[1].chosen > 0


def test_random_bot_cube_answers() -> None:
    bot = RandomBot(5)
    position = load_variant("backgammon").start_position()
    answers = {
        bot.respond_to_double(TakeDecision(BLACK, position, Cube(), True)) for _ in range(200)
    }
    assert answers == {"take", "drop"}
    doubles = [bot.offer_double(DoubleDecision(WHITE, position, Cube())) for _ in range(1000)]
    assert 0 < sum(doubles) < 100


# -- HeuristicBot -----------------------------------------------------------------------------------


def _decision(variant: Variant, position: Position, dice: tuple[int, ...]) -> PlayDecision:
    segment = Segment(WHITE, dice, "roll", "test roll")
    return PlayDecision(WHITE, segment, position, variant.legal_plays(position, dice))


def test_heuristic_needs_the_variant() -> None:
    variant = load_variant("backgammon")
    position = variant.start_position()
    decision = _decision(variant, position, (3, 1))
    with pytest.raises(RuntimeError, match="bind"):
        HeuristicBot().choose_play(decision)
    assert decision.plays[HeuristicBot(variant=variant).choose_play(decision)].text == "8/5 6/5"


def test_heuristic_backgammon_hits_and_bears_off() -> None:
    variant = load_variant("backgammon")
    bot = HeuristicBot(variant=variant)
    # A lone opposing checker on my 20 (his 5): 24/20* hits it.
    hit = Position.from_sides({24: 2, 13: 5, 8: 3, 6: 5}, {20: 1, 19: 1, 1: 13})
    decision = _decision(variant, hit, (4, 2))
    assert any(step.hit for step in decision.plays[bot.choose_play(decision)].steps)
    # Racing home: bear off rather than move inside.
    race = Position.from_sides({6: 3, 5: 3, 4: 3}, {24: 5, 23: 5})
    decision = _decision(variant, race, (6, 5))
    assert decision.plays[bot.choose_play(decision)].result.off[0] == 8


@pytest.mark.parametrize("name", ["long", "mad", "khachapuri", "fevga"])
def test_heuristic_same_direction_bears_off(name: str) -> None:
    variant = load_variant(name)
    bot = HeuristicBot(variant=variant)
    position = Position.from_sides({6: 2, 5: 3, 4: 3, 3: 2}, {18: 4, 17: 4, 16: 4, 20: 3})
    decision = _decision(variant, position, (5, 4))
    assert decision.plays[bot.choose_play(decision)].result.off[0] == 7


def test_heuristic_long_blocks_the_head() -> None:
    """With a lone runner, the heuristic parks it right in front of the opponent's head stack."""
    variant = load_variant("long")
    bot = HeuristicBot(variant=variant)
    position = Position.from_sides({24: 14, 18: 1}, {12: 14, 6: 1})
    decision = _decision(variant, position, (6, 1))
    result = decision.plays[bot.choose_play(decision)].result
    assert result.points[10] == 1  # 18/17/11: on 11, right in front of his head (my 12)


def test_heuristic_cube_policy() -> None:
    variant = load_variant("long", {"cube": True})
    bot = HeuristicBot(variant=variant)
    ahead = Position.from_sides({6: 5, 5: 5, 4: 5}, {20: 5, 19: 5, 18: 5})  # 75 vs 105 pips
    assert bot.offer_double(DoubleDecision(WHITE, ahead, Cube()))
    even = Position.from_sides({6: 5, 5: 5, 4: 5}, {18: 5, 17: 5, 16: 5})  # 75 vs 75
    assert not bot.offer_double(DoubleDecision(WHITE, even, Cube()))
    # Taking: the doubler is on roll. Far behind (75 vs 105 for him) -> drop; even -> take.
    far_behind = variant.flip(ahead)
    assert bot.respond_to_double(TakeDecision(BLACK, far_behind, Cube(), False)) == "drop"
    assert bot.respond_to_double(TakeDecision(BLACK, variant.flip(even), Cube(), False)) == "take"


# -- strength ---------------------------------------------------------------------------------------

STRENGTH_GAMES = 40


def _heuristic_results(name: str) -> Iterator[tuple[int, bool]]:
    """Heuristic vs random, the heuristic White in even games and Black in odd ones: its points."""
    variant = load_variant(name)
    for seed in range(STRENGTH_GAMES):
        colour = seed % 2
        heuristic, random_bot = HeuristicBot(seed), RandomBot(10_000 + seed)
        bots = (heuristic, random_bot) if colour == WHITE else (random_bot, heuristic)
        result = play_game(variant, bots, SeededDice(seed), cube=CubeSettings()).result
        assert result is not None
        won = result.winner == colour
        yield (result.points if won else -result.points), won


# The strength run of two variants (one per geometry) is in the default test run; the rest is slow.
STRENGTH_QUICK = ("backgammon", "long")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=() if name in STRENGTH_QUICK else pytest.mark.slow)
        for name in RULES_VARIANTS
    ],
)
def test_heuristic_beats_random(name: str) -> None:
    results = list(_heuristic_results(name))
    points = sum(p for p, _ in results) / len(results)
    wins = sum(w for _, w in results) / len(results)
    assert points > 0.5, f"{name}: heuristic scores {points:+.2f} points per game"
    assert wins >= 0.7, f"{name}: heuristic wins {wins:.0%}"


# -- Python bots by name: module:Class and the entry-point group nardy.bots ----------------------

FIRST_BOT = """
from nardy.bots import Bot

class First(Bot):
    name = "first"

    def __init__(self, seed=None):
        self.seed = seed

    def choose_play(self, decision):
        return 0

def broken(seed):
    raise RuntimeError("no model file")
"""


def test_bots_by_module_and_class(tmp_path, monkeypatch) -> None:
    from click.testing import CliRunner

    from nardy.bots import make_bot
    from nardy.cli import cli

    (tmp_path / "my_first_bot.py").write_text(FIRST_BOT)
    monkeypatch.syspath_prepend(str(tmp_path))
    bot = make_bot("my_first_bot:First", 5)
    assert bot.name == "first" and bot.seed == 5
    with pytest.raises(ValueError, match="failed to start: RuntimeError: no model file"):
        make_bot("my_first_bot:broken", 1)
    with pytest.raises(ValueError, match="cannot load bot 'my_first_bot:Nope'"):
        make_bot("my_first_bot:Nope")
    with pytest.raises(ValueError, match=r"unknown bot 'nope'.*module:Class"):
        make_bot("nope")
    done = CliRunner().invoke(
        cli, ["play", "-v", "long", "--bots", "my_first_bot:First,random", "--games", "2", "--json"]
    )
    assert done.exit_code == 0, done.output
    done = CliRunner().invoke(cli, ["play", "--bots", "my_first_bot:Nope,random"])
    assert done.exit_code == 2 and "cannot load bot" in done.output


def test_bots_from_the_entry_point_group(tmp_path) -> None:
    import os
    import subprocess
    import sys

    (tmp_path / "my_first_bot.py").write_text(FIRST_BOT)
    info = tmp_path / "my_first_bot-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-first-bot\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[nardy.bots]\nfirst = my_first_bot:First\n")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "nardy", "play", "-v", "backgammon", "--bots", "first,random"),
            *("--games", "2", "--seed", "1", "--json"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "first" in done.stdout
    # A third party's bot of a built-in's name does not hide the built-in.
    (info / "entry_points.txt").write_text("[nardy.bots]\nheuristic = my_first_bot:First\n")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from nardy.bots import make_bot; print(make_bot('heuristic').name)",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        check=False,
    )
    assert done.stdout.strip() == "heuristic", done.stderr


def test_a_stale_install_without_the_builtin_entry_points_says_so(monkeypatch) -> None:
    """An install made before nardy declared its bots as entry points finds none of them: the
    error says to install again instead of only listing no bots."""
    import nardy.bots.registry as registry

    monkeypatch.setattr(registry, "installed_bots", lambda: {})
    with pytest.raises(
        ValueError, match=r"known bots: none \(nardy's own bots .* install nardy again"
    ):
        make_bot("heuristic")


def test_bot_maker_makes_what_make_bot_makes_and_pickles_as_its_name() -> None:
    """An environment's opponent comes from a BotMaker (the name resolved once): the same bot as
    make_bot's for the same seed, the same errors, and a pickle that resolves the name again."""
    import pickle

    from nardy.bots.registry import BotMaker

    variant = load_variant("long")
    maker = BotMaker("random")
    for seed in (1, 2, 3):
        plays = []
        for bot in (maker(seed), make_bot("random", seed)):
            game = Game(variant, SeededDice(seed))
            bot.start_game(variant, 0)
            for _ in range(30):
                decision = game.decision
                if not isinstance(decision, PlayDecision):
                    break
                choice = bot.choose_play(decision) if decision.player == 0 else 0
                game.decide(choice)
            plays.append([event.data.get("play") for event in game.events])
        assert plays[0] == plays[1]
    copy = pickle.loads(pickle.dumps(maker))
    assert copy.name == "random" and type(copy(5)) is type(make_bot("random", 5))
    with pytest.raises(ValueError, match="unknown bot 'nobody'"):
        BotMaker("nobody")(1)
