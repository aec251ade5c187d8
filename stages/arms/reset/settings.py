"""The ``reset`` config group and a peg drop's settings."""

from __future__ import annotations

from dataclasses import dataclass

from core.settings import require


@dataclass(frozen=True)
class ResetSettings:
    pregrasp_m: float = 0.10
    lift_m: float = 0.12
    place_gap_m: float = 0.003     # the peg is released this far above the table
    retreat_m: float = 0.10
    max_grasps: int = 6            # grasps tried (least travel first) before giving up
    velocity_scale: float = 0.5    # of the joint limits, for a careful reset
    acceleration_scale: float = 0.3
    push_toward_xy: tuple[float, float] = (0.62, 0.0)   # where a peg that cannot be picked is pushed


@dataclass(frozen=True)
class DropSettings:
    """Where a dropped peg is released (uniformly in the box, m) and how long physics may settle it (s)."""

    x_range: tuple[float, float] = (0.4, 0.65)
    y_range: tuple[float, float] = (-0.25, 0.25)
    z_range: tuple[float, float] = (0.85, 0.95)
    settle_s: float = 0.3
    max_s: float = 4.0

    def __post_init__(self):
        for name in ("x_range", "y_range", "z_range"):
            low, high = getattr(self, name)
            require(low <= high, name, [low, high], "[low, high] with low <= high (m)")
        require(0 < self.settle_s <= self.max_s, "settle_s", self.settle_s, f"in (0, max_s={self.max_s}] s")

    @property
    def center_xy(self) -> tuple[float, float]:
        return (sum(self.x_range) / 2, sum(self.y_range) / 2)
