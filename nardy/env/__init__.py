"""Learning environments for every registered variant (the ``rl`` extra; docs/learning.md).

* :func:`aec_env` / :func:`raw_aec_env` — PettingZoo AEC, two agents;
* :func:`gym_env` — Gymnasium, one agent against a fixed opponent;
* :func:`batched_env` / :func:`vector_env` — many games in lockstep, numpy arrays (PettingZoo-style
  batched self-play; a Gymnasium ``VectorEnv`` against a bot);
* :func:`action_space_size` — the discrete action space of a variant (``nardy.env.spaces``);
* Gymnasium ids ``nardy/Long-v0``, … one per variant, registered on import when Gymnasium is
  installed (``nardy.env.registration``).

Each is imported when first used, so Gymnasium alone serves :func:`gym_env` and a missing package
is named with the extra that installs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nardy.env.aec import NardyAECEnv, aec_env, raw_aec_env
    from nardy.env.gym import NardyGymEnv, gym_env
    from nardy.env.spaces import action_space_size
    from nardy.env.vector import BatchedSelfPlay, NardyVectorEnv, batched_env, vector_env

__all__ = [
    "BatchedSelfPlay",
    "NardyAECEnv",
    "NardyGymEnv",
    "NardyVectorEnv",
    "action_space_size",
    "aec_env",
    "batched_env",
    "gym_env",
    "raw_aec_env",
    "vector_env",
]

_WHERE = {
    "NardyAECEnv": "nardy.env.aec",
    "aec_env": "nardy.env.aec",
    "raw_aec_env": "nardy.env.aec",
    "NardyGymEnv": "nardy.env.gym",
    "gym_env": "nardy.env.gym",
    "action_space_size": "nardy.env.spaces",
    "BatchedSelfPlay": "nardy.env.vector",
    "NardyVectorEnv": "nardy.env.vector",
    "batched_env": "nardy.env.vector",
    "vector_env": "nardy.env.vector",
}


try:
    from nardy.env.registration import register_envs

    register_envs()
except ModuleNotFoundError:  # no Gymnasium: the ids wait until it is installed
    pass


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'nardy.env' has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"nardy.env.{name} needs {exc.name}: pip install 'nardy[rl]'", name=exc.name
        ) from exc
