"""The Hydra schema registered in the ConfigStore: a wrong key or type fails at compose time.

Every config group with a settings dataclass in its package (robot, scene, planner, retimer,
hardware, goal, drive, path, follower, teleop) is registered as its :func:`core.settings.schema`,
so ``hardware.sped=2`` or ``robot.clearance_m=abc`` never reach a stage. The rest (``start``,
``calibration``, ``task``, the stages' own parameters under ``pipeline.stages``) are
read by the stage that uses them with :func:`core.settings.from_config` when the stage is
constructed, before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from core.settings import schema
from hardware.mecanum.params import DriveParams
from hardware.models.scene import SceneSettings
from hardware.robot_settings import RobotSettings
from stages.arms.execution.settings import HardwareSettings
from stages.arms.planning.settings import GoalSettings, PlannerSettings
from stages.arms.retiming.settings import RetimerSettings
from stages.mecanum.control.settings import FollowerSettings
from stages.mecanum.control.teleop_settings import TeleopSettings
from stages.mecanum.paths.settings import PathSettings


@dataclass
class PipelineSchema:
    name: str = MISSING
    stages: dict[str, Any] = MISSING
    # pipeline-level parameters the stages interpolate (goal poses, frame counts, ...)
    goal_poses: dict[str, Any] | None = None
    frames: int | None = None
    params: dict[str, Any] = field(default_factory=dict)


class LogLevel(str, Enum):  # noqa: UP042 (OmegaConf takes Enum, not StrEnum)
    DEBUG = "DEBUG"
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"


@dataclass
class RunnerSchema:
    log_level: LogLevel = LogLevel.INFO  # console level; run.log always gets DEBUG


@dataclass
class PathsSchema:
    output_dir: str = MISSING


@dataclass
class CalibrateSchema:
    """``pipeline=calibrate`` inputs given on the command line (``calibrate.images=<dir>``)."""

    images: str | None = None  # a folder of real ChArUco photos instead of simulated views


@dataclass
class ChoreographSchema:
    seed: int = 0
    record: bool = True   # write recording.rrd (Rerun) in the run folder; `choreograph view <run>` opens it
    pipeline: PipelineSchema = MISSING
    robot: schema(RobotSettings) = MISSING  # type: ignore[valid-type]
    scene: schema(SceneSettings) = field(default_factory=schema(SceneSettings))  # type: ignore[valid-type]
    runner: RunnerSchema = field(default_factory=RunnerSchema)
    paths: PathsSchema = field(default_factory=PathsSchema)
    planner: schema(PlannerSettings) = field(default_factory=schema(PlannerSettings))  # type: ignore[valid-type]
    retimer: schema(RetimerSettings) = field(default_factory=schema(RetimerSettings))  # type: ignore[valid-type]
    hardware: schema(HardwareSettings) = field(default_factory=schema(HardwareSettings))  # type: ignore[valid-type]
    start: Any = None
    goal: schema(GoalSettings) = field(default_factory=schema(GoalSettings))  # type: ignore[valid-type]
    calibration: Any = None
    calibrate: CalibrateSchema = field(default_factory=CalibrateSchema)
    drive: Optional[schema(DriveParams)] = None  # type: ignore[valid-type]  # noqa: UP045 (OmegaConf)
    path: Optional[schema(PathSettings)] = None  # type: ignore[valid-type]  # noqa: UP045 (OmegaConf)
    follower: Optional[schema(FollowerSettings)] = None  # type: ignore[valid-type]  # noqa: UP045 (OmegaConf)
    teleop: Optional[schema(TeleopSettings)] = None  # type: ignore[valid-type]  # noqa: UP045 (OmegaConf)
    task: Any = None
    bench: Any = None
    sweep_dir: Optional[str] = None  # noqa: UP045 (OmegaConf)  # a multirun folder, for pipeline=gather


def register() -> None:
    ConfigStore.instance().store(name="choreograph_schema", node=ChoreographSchema)
