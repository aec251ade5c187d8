"""Policy hooks: ``act(observation) -> action``. Chosen by ``_target_`` in ``rl.policy``.

observation: ``{"peg_pose": 4×4 (as seen), "slot_pose": 4×4, "slot_size_m": [width, length]}``
action: ``{"place_xy": [x, y], "yaw_rad": ψ}`` — where to lay the peg down (released just
above the slot's rim; it falls in, or not).

A policy class may name its settings dataclass as ``Settings``: its config is then checked
against it (keys, types, values, naming the full key) when the stage is built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from core.errors import ConfigError
from core.settings import from_config
from core.targets import check_targets, resolve_target
from stages.arms.rl.settings import DEFAULT_POLICY, ScriptedInsertionSettings


class Policy(Protocol):
    def act(self, observation: dict[str, Any]) -> dict[str, Any]: ...


class ScriptedInsertion:
    """Aims at the slot's centre along its axis, with Gaussian aiming noise (a stand-in learner)."""

    Settings = ScriptedInsertionSettings

    def __init__(self, noise_m: float = 0.003, noise_rad: float = 0.02, seed: int = 0):
        self.noise_m, self.noise_rad = float(noise_m), float(noise_rad)
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        slot = np.asarray(observation["slot_pose"])
        yaw = float(np.arctan2(slot[1, 0], slot[0, 0]))
        xy = slot[:2, 3] + self.rng.normal(0.0, self.noise_m, 2)
        return {"place_xy": xy.tolist(), "yaw_rad": yaw + float(self.rng.normal(0.0, self.noise_rad))}


@dataclass(frozen=True)
class PolicyFactory:
    """A checked policy config: the class and its arguments; :meth:`make` seeds and builds it."""

    cls: type
    kwargs: dict[str, Any]
    key: str = "rl.policy"

    def make(self, seed: int) -> Policy:
        kwargs = {"seed": seed, **self.kwargs}
        try:
            return self.cls(**kwargs)
        except TypeError as exc:
            raise ConfigError(f"{self.key}: {exc}") from exc


def policy_factory(cfg: Mapping[str, Any] | None, key: str = "rl.policy") -> PolicyFactory:
    """Check ``cfg`` (``_target_`` and the class's arguments) without building the policy."""
    cfg = dict(cfg or {"_target_": DEFAULT_POLICY})
    check_targets(cfg, key)
    target = cfg.pop("_target_", None)
    if target is None:
        raise ConfigError(f"{key}._target_ is required: a class with act(observation)")
    cls = resolve_target(target, key)
    if not isinstance(cls, type) or not hasattr(cls, "act"):
        raise ConfigError(f"{key}._target_={target!r} must name a class with act(observation)")
    settings = getattr(cls, "Settings", None)
    if dataclasses.is_dataclass(settings):
        checked = dataclasses.asdict(from_config(settings, cfg, key))
        cfg = {k: v for k, v in checked.items() if v is not None}
    return PolicyFactory(cls, cfg, key)


def make_policy(cfg: Mapping[str, Any] | None, seed: int, key: str = "rl.policy") -> Policy:
    """The policy ``cfg`` names, seeded with ``seed`` unless the config gives its own."""
    return policy_factory(cfg, key).make(seed)
