"""Settings of tele-op: the ``teleop`` config group (the scripted session) and the stage's
parameters (``pipeline.stages.teleop``).

Read with :func:`core.settings.from_config`, e.g.
``from_config(TeleopSettings, cfg.teleop, "teleop")``; no Hydra import.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from core.settings import require
from stages.mecanum.control.settings import (
    Pose,
    is_finite,
    require_animation,
    require_positive,
)


@dataclass(frozen=True)
class TeleopEvent:
    """``{t_s, button}`` | ``{t_s, target: [x, y, heading]}`` | ``{t_s, stick: [x, y, turn],
    hold_s}``: a preset pose, a pose given directly, or the left stick held."""

    t_s: float
    button: str | None = None
    target: Pose | None = None
    stick: Pose | None = None  # field-centric x, y and turn, each in [-1, 1]
    hold_s: float = 0.0

    def __post_init__(self) -> None:
        kinds = tuple(k for k in ("button", "target", "stick") if getattr(self, k) is not None)
        require(len(kinds) == 1, "button|target|stick", kinds, "exactly one per event")
        require(is_finite(self.t_s), "t_s", self.t_s, "a finite time")
        if self.target is not None:
            require(all(map(math.isfinite, self.target)), "target", self.target,
                    "a pose [x_in, y_in, heading_rad] of finite numbers")
        if self.stick is not None:
            require(all(math.isfinite(x) and abs(x) <= 1 for x in self.stick), "stick",
                    self.stick, "[x, y, turn] each in [-1, 1]")


@dataclass(frozen=True)
class TeleopSettings:
    """The ``teleop`` config group (``conf/teleop/*.yaml``): a scripted gamepad session."""

    name: str = "teleop"
    start_pose: Pose = (0.0, 0.0, 0.0)
    duration_s: float = 10.0
    buttons: dict[str, Pose] = field(default_factory=dict)  # button → field pose
    events: tuple[TeleopEvent, ...] = ()
    stick_reach_in: float = 24.0  # a full stick deflection asks for a target this far away
    stick_period_s: float = 0.25  # while a stick is held, a new target this often

    def __post_init__(self) -> None:
        require(all(map(math.isfinite, self.start_pose)), "start_pose", self.start_pose,
                "a pose [x_in, y_in, heading_rad] of finite numbers")
        require_positive("duration_s", self.duration_s)
        require_positive("stick_period_s", self.stick_period_s)
        for name, pose in self.buttons.items():
            require(all(map(math.isfinite, pose)), f"buttons.{name}", pose,
                    "a pose [x_in, y_in, heading_rad] of finite numbers")
        for i, ev in enumerate(self.events):
            if ev.button is not None:
                require(ev.button in self.buttons, f"events[{i}].button", ev.button,
                        f"a bound button: {sorted(self.buttons)}")

    def requests(self) -> list[tuple[float, str, Pose]]:
        """(time, source, pose-or-stick) of every target request, sticks expanded."""
        out: list[tuple[float, str, Pose]] = []
        for ev in sorted(self.events, key=lambda e: e.t_s):
            if ev.stick is None:
                pose = self.buttons[ev.button] if ev.button is not None else ev.target
                out.append((ev.t_s, "target", pose))
            else:
                n = max(1, int(math.floor(ev.hold_s / self.stick_period_s + 1e-9)))
                out.extend((ev.t_s + k * self.stick_period_s, "stick", ev.stick)
                           for k in range(n))
        return sorted(out, key=lambda e: e[0])


@dataclass(frozen=True)
class TeleopRunSettings:
    """``pipeline.stages.teleop``: how each request is planned and simulated, and the pictures."""

    flatness_in: float = 0.05
    accel_fraction: float = 0.8
    speed_fraction: float = 0.9
    dt_s: float = 0.01
    substeps: int = 10
    animate: bool = True
    max_frames: int = 40
    fps: float = 10.0

    def __post_init__(self) -> None:
        require_positive("flatness_in", self.flatness_in)
        for name in ("accel_fraction", "speed_fraction"):
            value = getattr(self, name)
            require(0 < value <= 1, name, value, "in (0, 1]")
        require_positive("dt_s", self.dt_s)
        require(self.substeps >= 1, "substeps", self.substeps, "≥ 1")
        require_animation(self)
