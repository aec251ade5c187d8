"""Drive tuning from Road Runner 1.0's ramp logs: read them, fit them as Road Runner does, fit our model.

    ramp_logs.py       Road Runner's forward/angular/lateral ramp JSON in and out, typed; DriveFitError
    roadrunner_fit.py  the tuning page's fits (kS, kV, trackWidthTicks, lateralInPerTick) and our kA fit
    ramp_sim.py        the three loggers run on MecanumSimulator, logged in Road Runner's schema
    drive_fit.py       DriveParams' motor, friction and track-width terms fitted to the logs; the YAML

    log = read_ramp_log("forward-ramp-1700000000000.json")      # or ramp_sim.simulate_ramp(...)
    ff = fit_forward_ramp(log)                                   # Road Runner's kS, kV (tick units)
    fit = fit_drive(forward, angular, DriveParams(), in_per_tick)
    write_drive_yaml("conf/drive/my_robot.yaml", fit)
"""

from stages.mecanum.tuning.drive_fit import (
    DriveFit,
    FittedValue,
    drive_yaml_text,
    fit_drive,
    write_drive_yaml,
)
from stages.mecanum.tuning.ramp_logs import (
    AngularRampLog,
    DriveFitError,
    Encoder,
    ForwardRampLog,
    LateralRampLog,
    RampLog,
    Signal,
    ramp_log_json,
    read_angular_ramp,
    read_forward_ramp,
    read_lateral_ramp,
    read_ramp_log,
    write_ramp_log,
)
from stages.mecanum.tuning.ramp_sim import (
    RAMP_KINDS,
    DeadWheels,
    RampSettings,
    drive_in_per_tick,
    simulate_ramp,
    simulate_ramps,
    write_simulated_ramps,
)
from stages.mecanum.tuning.roadrunner_fit import (
    AngularRampFit,
    LateralRampFit,
    LineFit,
    RampFeedforward,
    fit_angular_ramp,
    fit_forward_feedforward,
    fit_forward_ramp,
    fit_lateral_ramp,
    fit_linear_no_intercept,
    fit_linear_with_scaling,
    inverse_overflow,
)

__all__ = [
    "RAMP_KINDS", "AngularRampFit", "AngularRampLog", "DeadWheels", "DriveFit", "DriveFitError",
    "Encoder", "FittedValue", "ForwardRampLog", "LateralRampFit", "LateralRampLog", "LineFit",
    "RampFeedforward", "RampLog", "RampSettings", "Signal", "drive_in_per_tick", "drive_yaml_text",
    "fit_angular_ramp", "fit_drive", "fit_forward_feedforward", "fit_forward_ramp", "fit_lateral_ramp",
    "fit_linear_no_intercept", "fit_linear_with_scaling", "inverse_overflow", "ramp_log_json",
    "read_angular_ramp", "read_forward_ramp", "read_lateral_ramp", "read_ramp_log", "simulate_ramp",
    "simulate_ramps", "write_drive_yaml", "write_ramp_log", "write_simulated_ramps",
]
