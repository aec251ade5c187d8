"""The ramp logs one fit reads: found in a Road Runner tuning folder, or made on the simulator.

Road Runner saves each logger run as ``RoadRunner/tuning/<kind>/<millis>.json`` on the robot;
:func:`find_ramp_log` takes the newest of a kind from such a folder (or a ``<kind>*.json`` beside
the others, as a team may have renamed them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hardware.mecanum.params import DriveParams
from stages.mecanum.tuning.ramp_logs import (
    AngularRampLog,
    DriveFitError,
    ForwardRampLog,
    LateralRampLog,
    read_angular_ramp,
    read_forward_ramp,
    read_lateral_ramp,
)
from stages.mecanum.tuning.ramp_sim import RampSettings, drive_in_per_tick, simulate_ramps


@dataclass(frozen=True, eq=False)
class RampLogSet:
    """The forward and angular ramps (the lateral one when there is one), the drive encoders'
    inches per tick, the files they came from, and for simulated logs the robot that made them."""

    forward: ForwardRampLog
    angular: AngularRampLog
    lateral: LateralRampLog | None
    in_per_tick: float
    files: dict[str, str]
    truth: DriveParams | None = None


def find_ramp_log(folder: Path, kind: str) -> Path | None:
    """The newest ``<kind>/*.json`` in ``folder``, else the last ``<kind>*.json`` by name; None."""
    found = sorted(folder.glob(f"{kind}/*.json")) or sorted(folder.glob(f"{kind}*.json"))
    return found[-1] if found else None


def read_ramp_logs(folder: Path | str, in_per_tick: float) -> RampLogSet:
    """The forward and angular ramps from a tuning folder (the lateral one if present)."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise DriveFitError(f"pipeline.stages.logs.folder: {folder} is not a folder")
    paths = {kind: find_ramp_log(folder, kind) for kind in ("forward-ramp", "angular-ramp", "lateral-ramp")}
    for kind in ("forward-ramp", "angular-ramp"):
        if paths[kind] is None:
            raise DriveFitError(f"pipeline.stages.logs.folder: {folder} has no {kind} log "
                                f"({kind}/<millis>.json as Road Runner saves it, or {kind}*.json)")
    lateral = read_lateral_ramp(paths["lateral-ramp"]) if paths["lateral-ramp"] else None
    return RampLogSet(read_forward_ramp(paths["forward-ramp"]), read_angular_ramp(paths["angular-ramp"]),
                      lateral, in_per_tick, {k: str(p) for k, p in paths.items() if p is not None})


def simulated_ramp_logs(robot: DriveParams, settings: RampSettings) -> RampLogSet:
    """Road Runner's three loggers run on the simulator with ``robot``."""
    logs = simulate_ramps(robot, settings)
    return RampLogSet(logs["forward-ramp"], logs["angular-ramp"], logs["lateral-ramp"],
                      drive_in_per_tick(robot, settings), {k: f"simulated ({robot.name})" for k in logs},
                      robot)
