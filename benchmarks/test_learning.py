"""Learning benchmarks (pytest-benchmark): encodings per second, batched against a per-position
loop, and environment steps per second per variant (docs/learning.md has measured figures).

    pytest benchmarks/test_learning.py --benchmark-group-by=group
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

np = pytest.importorskip("numpy", reason="the rl extra (numpy) is not installed")

from nardy import encoding  # noqa: E402
from nardy.core import game_variant_names, load_variant  # noqa: E402
from nardy.core.position import Position  # noqa: E402
from nardy.core.variant import LegalPlays  # noqa: E402


def _positions(get: Callable[[str], list[tuple[Position, tuple[int, ...]]]]) -> list[Position]:
    return [p for name in ("backgammon", "long") for p, _ in get(name)]


@pytest.mark.benchmark(group="encode")
@pytest.mark.parametrize("mode", ["batch", "loop"])
def test_encode_positions(benchmark, variant_corpus, mode: str) -> None:
    """The positions of seeded random backgammon and long games, ``nardy196_v1``."""
    positions = _positions(variant_corpus)

    def run() -> int:
        if mode == "batch":
            return len(encoding.encode_batch(positions))
        return len([encoding.encode(p) for p in positions])

    assert benchmark.pedantic(run, rounds=5, warmup_rounds=1) == len(positions)
    if benchmark.stats is not None:
        benchmark.extra_info["encodings_per_s"] = round(
            len(positions) / benchmark.stats.stats.median
        )


@pytest.mark.benchmark(group="encode-plays")
@pytest.mark.parametrize("mode", ["encode_plays", "loop"])
def test_encode_all_plays(benchmark, variant_corpus, mode: str) -> None:
    """Every legal result of the decisions of seeded random long games, ``nardy226_v1``."""
    variant = load_variant("long")
    decisions: list[LegalPlays] = [variant.legal_plays(p, d) for p, d in variant_corpus("long")]
    context = encoding.Context(phase="roll")
    total = sum(len(plays) for plays in decisions)

    def run() -> int:
        if mode == "encode_plays":
            return sum(len(encoding.encode_plays(plays, context)) for plays in decisions)
        return sum(len([encoding.encode(p.result, context) for p in plays]) for plays in decisions)

    assert benchmark.pedantic(run, rounds=3, warmup_rounds=1) == total
    if benchmark.stats is not None:
        benchmark.extra_info["encodings_per_s"] = round(total / benchmark.stats.stats.median)


def _aec_episode(variant: str, seed: int) -> int:
    """One AEC episode with seeded random legal plays (cube: roll, take); the agent steps."""
    from nardy.core.game import PlayDecision
    from nardy.env import raw_aec_env

    env = raw_aec_env(variant)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    for _agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        if isinstance(env.driver.decision, PlayDecision):  # not .game: that replays a lean game
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        else:
            env.step(0)
        steps += 1
    return steps


@pytest.mark.benchmark(group="env-steps")
@pytest.mark.parametrize("variant", game_variant_names())
def test_aec_env_steps(benchmark, variant: str) -> None:
    """Agent steps per second of the PettingZoo AEC environment (observation, mask, step), random
    legal plays, three seeded episodes."""
    pytest.importorskip("pettingzoo", reason="the rl extra is not installed")

    def run() -> int:
        return sum(_aec_episode(variant, seed) for seed in range(3))

    steps = benchmark.pedantic(run, rounds=3, warmup_rounds=0)
    assert steps > 0
    if benchmark.stats is not None:
        benchmark.extra_info["steps"] = steps
        benchmark.extra_info["steps_per_s"] = round(steps / benchmark.stats.stats.median)


@pytest.mark.benchmark(group="state-steps")
@pytest.mark.parametrize("variant", ["backgammon", "long", "mad_gulbar"])
def test_game_state_steps(benchmark, variant: str) -> None:
    """Actions per second (decisions and chance outcomes) of a kernel Game whose throws are chance
    nodes (the state behind the OpenSpiel games), random play, three seeded games, with a deep copy
    every 10 actions (a copy replays the game's inputs, so it costs O(actions so far))."""
    import copy
    import random

    from nardy.core.game import Game, PlayDecision

    loaded = load_variant(variant)

    def run() -> int:
        actions = 0
        for seed in range(3):
            rng = random.Random(seed)
            game = Game(loaded, None)
            while game.result is None:
                if actions % 10 == 0:
                    game = copy.deepcopy(game)
                if game.chance is not None:
                    game.roll(rng.randint(1, 6), rng.randint(1, 6))
                else:
                    d = game.decision
                    game.decide(
                        rng.randrange(len(d.plays)) if isinstance(d, PlayDecision) else False
                    )
                actions += 1
        return actions

    actions = benchmark.pedantic(run, rounds=3, warmup_rounds=0)
    if benchmark.stats is not None:
        benchmark.extra_info["actions_per_s"] = round(actions / benchmark.stats.stats.median)
