"""Settings of the online RL loop and of the scripted stand-in policy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.settings import require
from stages.arms.reset.settings import DropSettings, ResetSettings

DEFAULT_POLICY = "stages.arms.rl.policy.ScriptedInsertion"


@dataclass(frozen=True)
class RLLoopSettings:
    """``episodes`` of (the ``policy`` attempts the insertion → success detection → reset).

    ``policy``: ``_target_`` (a class with ``act(observation)`` in ``stages.*``/``hardware.*``) and
    its arguments; ``reset``, ``drop``: as in the reset stage; the peg is released
    ``release_gap_m`` above the slot's rim; the table top is at ``surface_z`` (m)."""

    episodes: int = 5
    policy: dict[str, Any] | None = None          # None: the scripted stand-in
    reset: ResetSettings = field(default_factory=ResetSettings)
    drop: DropSettings = field(default_factory=DropSettings)
    calibration: str | None = None
    max_attempts: int = 3
    surface_z: float = 0.75
    release_gap_m: float = 0.007

    def __post_init__(self):
        require(self.episodes >= 1, "episodes", self.episodes, ">= 1")
        require(self.max_attempts >= 1, "max_attempts", self.max_attempts, ">= 1")

    @property
    def policy_config(self) -> dict[str, Any]:
        return dict(self.policy or {"_target_": DEFAULT_POLICY})


@dataclass(frozen=True)
class ScriptedInsertionSettings:
    """The scripted policy's Gaussian aiming noise (m, rad); ``seed`` (default: the run's)."""

    noise_m: float = 0.003
    noise_rad: float = 0.02
    seed: int | None = None

    def __post_init__(self):
        require(self.noise_m >= 0, "noise_m", self.noise_m, ">= 0 (m)")
        require(self.noise_rad >= 0, "noise_rad", self.noise_rad, ">= 0 (rad)")
