"""Decision speed of the neural bot beside the heuristic bot on the same decisions (one batch per
decision: encoding, heuristic prior and the network for every legal result)."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

from nardy.bots import HeuristicBot, play_game  # noqa: E402
from nardy.bots.neural import NeuralBot  # noqa: E402
from nardy.core import load_variant  # noqa: E402
from nardy.core.dice import SeededDice  # noqa: E402
from nardy.core.game import CubeSettings, PlayDecision  # noqa: E402


def _decision(name: str) -> PlayDecision:
    """The decision with the most legal plays in a seeded game of heuristic against itself."""
    variant = load_variant(name)
    found: list[PlayDecision] = []

    class Collect(HeuristicBot):
        def choose_play(self, decision: PlayDecision) -> int:
            found.append(decision)
            return super().choose_play(decision)

    play_game(variant, (Collect(1), Collect(2)), SeededDice(3), cube=CubeSettings())
    return max(found, key=lambda d: len(d.plays))


@pytest.mark.parametrize("bot_name", ["neural", "heuristic"])
@pytest.mark.parametrize("name", ["backgammon", "long"])
def test_choose_play(benchmark, name: str, bot_name: str) -> None:
    variant = load_variant(name)
    decision = _decision(name)
    bot = (
        NeuralBot(0, variant=variant) if bot_name == "neural" else HeuristicBot(0, variant=variant)
    )
    index = benchmark(bot.choose_play, decision)
    assert 0 <= index < len(decision.plays)
