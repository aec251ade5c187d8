"""A reset run in the simulated cell: drop the peg anywhere (physics), then reset it automatically.

:func:`drop_and_reset` builds the cell (:func:`~stages.arms.reset.setup.reset_cell`), drops the
peg at a seeded random pose, runs :func:`~stages.arms.reset.reset.run_reset` and returns the
outcome with the camera's pictures (overlaid with what it saw) and the recorded states.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.settings import require
from stages.arms.execution.settings import HardwareSettings
from stages.arms.perception.peg_pose import draw_overlay
from stages.arms.perception.settings import SceneCameraSettings
from stages.arms.perception.sim import DropResult
from stages.arms.planning.settings import PlannerSettings
from stages.arms.reset.plan import ResetPlanner
from stages.arms.reset.reset import ResetOutcome, run_reset
from stages.arms.reset.rig import ResetRig
from stages.arms.reset.settings import DropSettings, ResetSettings
from stages.arms.reset.setup import check_reach, drop_peg, reset_cell
from stages.arms.reset.task import TaskSpec


@dataclass(frozen=True)
class ResetRunSettings:
    """The reset stage: ``reset`` (the plan), ``drop`` (where the peg starts), the scene ``camera``,
    an optional ``calibration`` file, up to ``max_attempts`` attempts, the table top at
    ``surface_z`` (m), and a ``video`` of the run at ``fps``."""

    reset: ResetSettings = field(default_factory=ResetSettings)
    drop: DropSettings = field(default_factory=DropSettings)
    camera: SceneCameraSettings = field(default_factory=SceneCameraSettings)
    calibration: str | None = None
    max_attempts: int = 3
    surface_z: float = 0.75
    video: bool = True
    fps: float = 15.0

    def __post_init__(self):
        require(self.max_attempts >= 1, "max_attempts", self.max_attempts, ">= 1")
        require(self.fps > 0, "fps", self.fps, "> 0 (frames per second)")


@dataclass
class ResetRun:
    outcome: ResetOutcome
    dropped: DropResult
    pictures: dict[str, np.ndarray]   # file name -> the camera's image, with what it saw drawn on it
    times_s: np.ndarray               # recorded simulation states: times and full qpos
    qpos: np.ndarray
    camera: Any = None                # the camera model the estimates used, and the peg's tag layout
    layout: Any = None
    moves: list = field(default_factory=list)   # (start stamp, each arm's trajectory) of every move


def drop_and_reset(world, scene: Mapping[str, Any], task: TaskSpec, planner: PlannerSettings,
                   hardware: HardwareSettings, settings: ResetRunSettings, seed: int,
                   rng: np.random.Generator, log, metrics: dict[str, Any]) -> ResetRun:
    """Drop the peg, then perceive → grasp → plan all → execute → check, up to ``max_attempts``.

    ``metrics`` gets the drop's figures and ``stamp_retries`` as soon as they are known (kept
    when a later step fails)."""
    s = settings
    with reset_cell(world, scene, hardware, s.camera, s.calibration, seed, metrics) as (rig, half):
        check_reach(world, rig.hands, {"task.start_xy (scene.cell.start_xy)": task.start_xy,
                                       "the drop region's centre (scene.cell.drop)": s.drop.center_xy},
                    s.surface_z, 2 * float(np.min(half)), seed)
        reset_planner = ResetPlanner(world, planner, s.reset, hands=rig.hands)
        dropped = drop_peg(rig, rng, s.drop)
        metrics.update({"drop.settled": dropped.settled, "drop.time_s": dropped.sim_time_s})
        log.info("peg dropped at %s, came to rest at %s", np.round(dropped.start_pose[:3], 3),
                 np.round(dropped.rest_pose[:3], 3))
        with rig.sim:
            outcome = run_reset(rig, reset_planner, task, half, s.surface_z, rng, s.max_attempts, log)
    times, qpos = rig.sim.recorded()
    return ResetRun(outcome, dropped, overlaid(rig, outcome.images), times, qpos, rig.estimator.camera,
                    rig.layout, rig.moves)


def overlaid(rig: ResetRig, images: Mapping[str, tuple[np.ndarray, Any]]) -> dict[str, np.ndarray]:
    """Each (image, estimate) with the estimate drawn on it (the raw image if drawing fails)."""
    out = {}
    for name, (image, est) in images.items():
        try:
            out[name] = draw_overlay(image, rig.layout, rig.estimator.camera, est)
        except Exception:  # noqa: BLE001 - the overlay is a picture; keep the raw image then
            out[name] = image
    return out
