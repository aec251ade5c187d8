"""Policy hooks: ``act(observation) -> action``. Chosen by ``_target_`` in ``rl.policy``.

observation: ``{"peg_pose": 4×4 (as seen), "slot_pose": 4×4, "slot_size_m": [width, length]}``
action: ``{"place_xy": [x, y], "yaw_rad": ψ}`` — where to lay the peg down (released just
above the slot's rim; it falls in, or not).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from core.errors import ConfigError
from core.targets import check_targets


class Policy(Protocol):
    def act(self, observation: dict[str, Any]) -> dict[str, Any]: ...


class ScriptedInsertion:
    """Aims at the slot's centre along its axis, with Gaussian aiming noise (a stand-in learner)."""

    def __init__(self, noise_m: float = 0.003, noise_rad: float = 0.02, seed: int = 0):
        self.noise_m, self.noise_rad = float(noise_m), float(noise_rad)
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        slot = np.asarray(observation["slot_pose"])
        yaw = float(np.arctan2(slot[1, 0], slot[0, 0]))
        xy = slot[:2, 3] + self.rng.normal(0.0, self.noise_m, 2)
        return {"place_xy": xy.tolist(), "yaw_rad": yaw + float(self.rng.normal(0.0, self.noise_rad))}


def make_policy(cfg: Mapping[str, Any], seed: int):
    cfg = dict(cfg or {"_target_": "stages.arms.rl.policy.ScriptedInsertion"})
    check_targets(cfg, "rl.policy")
    target = cfg.pop("_target_")
    module, _, name = target.rpartition(".")
    cls = getattr(importlib.import_module(module), name, None)
    if cls is None or not hasattr(cls, "act"):
        raise ConfigError(f"rl.policy._target_={target!r} must name a class with act(observation)")
    cfg.setdefault("seed", seed)
    return cls(**cfg)


