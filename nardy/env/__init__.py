"""Learning environments for every registered variant (the ``rl`` extra; docs/learning.md).

* :func:`aec_env` / :func:`raw_aec_env` — PettingZoo AEC, two agents;
* :func:`gym_env` — Gymnasium, one agent against a fixed opponent.
"""

from __future__ import annotations

from nardy.env.aec import NardyAECEnv, aec_env, raw_aec_env
from nardy.env.gym import NardyGymEnv, gym_env
from nardy.env.spaces import action_space_size

__all__ = ["NardyAECEnv", "NardyGymEnv", "action_space_size", "aec_env", "gym_env", "raw_aec_env"]
