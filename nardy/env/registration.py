"""Gymnasium ids for every registered variant: ``nardy/Long-v0``, ``nardy/Backgammon-v0``, …

Registered when :mod:`nardy.env` is imported (with Gymnasium installed), so either of::

    import nardy.env, gymnasium
    env = gymnasium.make("nardy/Long-v0", opponent="random", cube=True)
    env = gymnasium.make("nardy.env:nardy/Long-v0")   # Gymnasium imports nardy.env itself

makes :class:`nardy.env.gym.NardyGymEnv` of that variant; keyword arguments are those of
:func:`nardy.env.gym_env` (the variant's options included).
"""

from __future__ import annotations

ENTRY_POINT = "nardy.env.gym:NardyGymEnv"


def env_id(variant: str) -> str:
    """The Gymnasium id of a variant: ``mad_gulbar`` → ``nardy/MadGulbar-v0``."""
    return "nardy/" + "".join(part.capitalize() for part in variant.split("_")) + "-v0"


def register_envs() -> list[str]:
    """Register (again: a no-op) the id of every registered variant that plays single games (not
    a match variant such as tavli, whose environments are refused); returns the ids."""
    import gymnasium

    from nardy.core.plugins import game_variant_names

    ids = []
    for name in game_variant_names():
        ident = env_id(name)
        ids.append(ident)
        if ident not in gymnasium.registry:
            gymnasium.register(id=ident, entry_point=ENTRY_POINT, kwargs={"variant": name})
    return ids
