"""Structured-config schemas registered in Hydra's ConfigStore.

They make a wrong key or a wrong type fail at compose time, naming the key:
``robot.clearance_m=abc`` or ``seed=x`` never reach a stage. Groups whose contents
belong to one stage (``planner``, ``path``, ...) are typed ``Any`` here and are
checked by the stage that uses them, at construction, before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING


@dataclass
class GripperSchema:
    actuators: list[str] = MISSING
    open: float = 0.04
    closed: float = 0.0


@dataclass
class ArmSchema:
    joints: list[str] = MISSING
    ee_site: str = MISSING
    gripper: GripperSchema | None = None
    velocity_limits: list[float] | None = None  # rad/s
    acceleration_limits: list[float] | None = None  # rad/s^2


@dataclass
class CollisionMatrixSchema:
    samples: int = 200     # configurations sampled for the "always" (and opt-in "never") rules
    never: bool = False    # also allow pairs never within clearance over the samples (a speed option)
    cache: bool = True     # reuse the matrix computed for the same robot file and settings


@dataclass
class RobotSchema:
    name: str = MISSING
    mjcf: str | None = None  # one file holding every arm (absolute, relative to the repo root, or pkg://...)
    build: dict[str, Any] | None = None  # or a rig built from parts (hardware.assembly)
    clearance_m: float = 0.005
    arms: dict[str, ArmSchema] = MISSING
    # joint lists are typed in the robot spec (hardware.robot): OmegaConf refuses YAML ints in a
    # dict of float lists ("Value 0 (int) is incompatible with type hint 'float'"), and a lab's file has ints
    home: dict[str, Any] = MISSING
    fixed_joints: dict[str, float] = field(default_factory=dict)  # joints outside every arm, held here
    keyframe: str | None = None  # else held at this keyframe of the robot file
    allowed_pairs: list[list[str]] = field(default_factory=list)  # [geom or body name or glob, same]
    collision_matrix: CollisionMatrixSchema = field(default_factory=CollisionMatrixSchema)
    extra: dict[str, Any] = field(default_factory=dict)  # robot-specific keys, free-form


@dataclass
class PipelineSchema:
    name: str = MISSING
    stages: dict[str, Any] = MISSING
    # pipeline-level parameters the stages interpolate (goal poses, frame counts, ...)
    goal_poses: dict[str, Any] | None = None
    frames: int | None = None
    params: dict[str, Any] = field(default_factory=dict)


class LogLevel(str, Enum):
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
    pipeline: PipelineSchema = MISSING
    robot: RobotSchema = MISSING
    scene: dict[str, Any] = field(default_factory=dict)
    runner: RunnerSchema = field(default_factory=RunnerSchema)
    paths: PathsSchema = field(default_factory=PathsSchema)
    # groups owned by the stages that read them (validated there)
    planner: Any = None
    retimer: Any = None
    hardware: Any = None
    start: Any = None
    goal: Any = None
    calibration: Any = None
    calibrate: CalibrateSchema = field(default_factory=CalibrateSchema)
    drive: Any = None
    path: Any = None
    follower: Any = None
    teleop: Any = None
    task: Any = None
    bench: Any = None


def register() -> None:
    ConfigStore.instance().store(name="choreograph_schema", node=ChoreographSchema)
