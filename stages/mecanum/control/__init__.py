"""SKIDADDLE's control loop and the Road Runner-style baseline, on the mecanum simulator.

    controllers.py  along-path, back-onto-path, heading, end correction, stop: AccelRequests
    scheduler.py    projection, look-ahead by braking distance, which controllers run
    allocator.py    requests → motor space, headroom by priority and weight (exact)
    pidf.py         per-wheel PIDF + kS/kV/kA feedforward, battery compensation
    loop.py         SkidaddleFollower and the simulator loop with its per-tick log
    roadrunner.py   the Road Runner 1.0-style profile + holonomic controller
    metrics.py      the follow benchmark's metrics (SPEC section 4)
    teleop.py       scripted gamepad → Hermite paths built on the fly
    factory.py      followers from plain config
    stage.py        Follow, FollowCompare, Teleop, SweepSummary
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
from stages.mecanum.control.pidf import Feedforward, PidGains, WheelPIDF, model_feedforward
from stages.mecanum.control.roadrunner import RoadRunnerFollower, RoadRunnerParams, build_profile
from stages.mecanum.control.scheduler import Scheduler

__all__ = [
    "AccelRequest", "Allocation", "Allocator", "AlongPath", "BackOntoPath", "Command",
    "EndCorrection", "Feedforward", "Guidance", "Heading", "LoopLog", "MotorModel", "PidGains",
    "RoadRunnerFollower", "RoadRunnerParams", "Scheduler", "SkidaddleFollower", "Stop",
    "WheelPIDF", "build_profile", "follow_metrics", "model_feedforward", "run_loop",
    "split_velocity",
]
