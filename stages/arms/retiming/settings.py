"""The ``retimer`` config group: the shared sample rate and how far corner blends may leave the path."""

from __future__ import annotations

from dataclasses import dataclass

from core.settings import require


@dataclass(frozen=True)
class RetimerSettings:
    rate_hz: float = 125.0              # every arm shares these timestamps
    max_deviation_rad: float = 0.02     # corner blends stay this close to the checked polyline (0 = stop)

    def __post_init__(self):
        require(self.rate_hz > 0, "rate_hz", self.rate_hz, "> 0 (Hz)")
        require(self.max_deviation_rad >= 0, "max_deviation_rad", self.max_deviation_rad, ">= 0 (rad)")
