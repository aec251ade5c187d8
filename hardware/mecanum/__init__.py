"""A four-wheel mecanum FTC drivetrain: parameters, kinematics, simulator, field drawing.

    params = from_config(DriveParams, cfg, "drive")   # core.settings; or DriveParams()
    sim = MecanumSimulator(params, dt_s=0.01)    # 10 ms control step, 1 ms physics
    state = sim.step([lf, lb, rb, rf])           # volts in, DriveState out
"""

from hardware.mecanum.kinematics import (
    WHEEL_ORDER,
    field_to_robot,
    footprint_corners,
    forward_kinematics,
    inverse_kinematics,
    robot_to_field,
    wheel_matrix,
)
from hardware.mecanum.params import DriveParams
from hardware.mecanum.simulator import DriveState, MecanumSimulator, OdometryNoise

__all__ = [
    "WHEEL_ORDER", "DriveParams", "DriveState", "MecanumSimulator", "OdometryNoise",
    "field_to_robot", "footprint_corners", "forward_kinematics", "inverse_kinematics",
    "robot_to_field", "wheel_matrix",
]
