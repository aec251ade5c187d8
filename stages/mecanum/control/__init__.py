"""SKIDADDLE's control loop and the Road Runner-style baseline, on the mecanum simulator.

    controllers.py  along-path, back-onto-path, heading, end correction, stop: AccelRequests
    scheduler.py    projection, look-ahead by braking distance, which controllers run
    allocator.py    requests → motor space, headroom by priority and weight (exact)
    pidf.py         per-wheel PIDF + kS/kV/kA feedforward, battery compensation
    loop.py         SkidaddleFollower and the simulator loop with its per-tick log
    roadrunner.py   the Road Runner 1.0-style profile + holonomic controller
    metrics.py      the follow benchmark's metrics (SPEC section 4)
    teleop.py       scripted gamepad → Hermite paths built on the fly
    settings.py     the follower config group (both kinds)
    teleop_settings.py  the teleop config group and the teleop stage's parameters
    follow_settings.py  the follow, compare and sweep-summary stages' parameters
    factory.py      a ready follower from its settings
    follow_sim.py   one follower on the simulator along a path, and its metrics
    csv_log.py      a run's per-tick log as CSV
    follow_files.py a run's files (log, pictures), the comparison table, tele-op's files
    sweep.py        a follower sweep's runs gathered into one table
    plots.py        the figures

The stage adapters (Follow, FollowCompare, Teleop) live in ``stages.adapters.mecanum``.
"""

from stages.mecanum.control.allocator import AccelRequest, Allocation, Allocator, MotorModel
from stages.mecanum.control.controllers import (
    AlongPath,
    BackOntoPath,
    EndCorrection,
    Guidance,
    Heading,
    Stop,
    split_velocity,
)
from stages.mecanum.control.loop import Command, LoopLog, SkidaddleFollower, run_loop
from stages.mecanum.control.metrics import follow_metrics
from stages.mecanum.control.pidf import Feedforward, WheelPIDF, model_feedforward
from stages.mecanum.control.roadrunner import RoadRunnerFollower, build_profile
from stages.mecanum.control.scheduler import Scheduler
from stages.mecanum.control.settings import (
    FollowerSettings,
    PidGains,
    RoadRunnerParams,
    SchedulerSettings,
    SkidaddleSettings,
)
from stages.mecanum.control.teleop_settings import TeleopSettings

__all__ = [
    "AccelRequest", "Allocation", "Allocator", "AlongPath", "BackOntoPath", "Command",
    "EndCorrection", "Feedforward", "FollowerSettings", "Guidance", "Heading", "LoopLog",
    "MotorModel", "PidGains", "RoadRunnerFollower", "RoadRunnerParams", "Scheduler",
    "SchedulerSettings", "SkidaddleFollower", "SkidaddleSettings", "Stop", "TeleopSettings",
    "WheelPIDF", "build_profile", "follow_metrics", "model_feedforward", "run_loop",
    "split_velocity",
]
