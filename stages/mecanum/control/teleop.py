"""Tele-op: a scripted gamepad session, each target a Hermite path built on the fly.

The script (``conf/teleop/*.yaml``, :class:`~stages.mecanum.control.teleop_settings.TeleopSettings`)
is a list of timed events:

* ``{t_s: 1.0, button: b}``: drive to the preset pose bound to that button;
* ``{t_s: 2.0, target: [x, y, heading]}``: drive to a pose given directly;
* ``{t_s: 3.0, stick: [x, y, turn], hold_s: 0.8}``: the left stick pushed (field-centric,
  each axis in [−1, 1]) and held: every ``stick_period_s`` while held the target becomes
  ``pose + stick_reach_in·[x, y]`` with the heading turned by ``turn·π/2``.

Each target the driver asks for becomes, at once, a cubic Hermite from the robot's
*current* pose and velocity to the target (``stages.mecanum.paths.hermite``), flattened and
precomputed (one backward pass) and handed to the SKIDADDLE follower, whose wheel
controllers carry over. A new event while a path is still being followed interrupts it
and replaces it mid-motion: the new curve leaves in the direction, and at the speed,
the robot already has. Between paths the default stop controller holds the robot.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from hardware.mecanum.params import DriveParams
from hardware.mecanum.simulator import MecanumSimulator
from stages.mecanum.control.factory import build_follower
from stages.mecanum.control.loop import Command, LoopLog, _record
from stages.mecanum.control.settings import FollowerSettings
from stages.mecanum.control.teleop_settings import TeleopRunSettings, TeleopSettings
from stages.mecanum.paths.bezier import PathError
from stages.mecanum.paths.flatten import flatten_chain
from stages.mecanum.paths.hermite import HermitePath, hermite_path
from stages.mecanum.paths.limits import PathLimits
from stages.mecanum.paths.precompute import precompute_entry_speeds


@dataclass
class TeleopResult:
    log: LoopLog
    metrics: dict
    paths: list  # flattened points of every path followed
    targets: list
    events: list  # what happened at each request
    limits: PathLimits  # the planning budget every path was precomputed with


def hermite_heading(hp: HermitePath, length_in: float):
    def f(s: float) -> tuple[float, float]:
        u = min(max(s / length_in, 0.0), 1.0)
        return float(hp.heading_at(u)), hp.heading_change_rad / length_in
    return f


def run_teleop(script: TeleopSettings, follower_settings: FollowerSettings, drive: DriveParams,
               settings: TeleopRunSettings | None = None, *,
               reach_tolerance_in: float = 0.5) -> TeleopResult:
    """Run the scripted session on the simulator (see the module doc)."""
    settings = settings or TeleopRunSettings()
    dt_s, flatness_in = settings.dt_s, settings.flatness_in
    limits = PathLimits.from_drive(drive, settings.accel_fraction, settings.speed_fraction)
    sim = MecanumSimulator(drive, dt_s=dt_s, substeps=settings.substeps, pose=script.start_pose)
    requests = script.requests()
    follower = None
    log = LoopLog("teleop")
    state = sim.state
    k_req, replan_s, events, paths, targets = 0, [], [], [], []
    reached = 0
    n = int(math.ceil(script.duration_s / dt_s))
    for _ in range(n + 1):
        while k_req < len(requests) and requests[k_req][0] <= state.time_s + 1e-9:
            t_req, source, value = requests[k_req]
            k_req += 1
            pose, vel = state.measured_pose, state.velocity
            if source == "stick":
                target = (pose[0] + script.stick_reach_in * value[0],
                          pose[1] + script.stick_reach_in * value[1],
                          pose[2] + value[2] * math.pi / 2)
            else:
                target = value
            half = 72.0 - 0.5 * max(drive.length_in, drive.width_in)
            target = (min(max(target[0], -half), half), min(max(target[1], -half), half),
                      target[2])
            busy = follower is not None and not follower.finished
            t0 = time.perf_counter()
            try:
                hp = hermite_path(pose, vel[:2], np.asarray(target))
            except PathError:
                events.append({"t_s": state.time_s, "source": source, "target": list(target),
                               "skipped": "already there"})
                continue
            flat = flatten_chain(hp.chain, flatness_in)
            table = precompute_entry_speeds(flat, limits, end_speed_in_s=0.0)
            if follower is None:
                follower = build_follower(follower_settings, drive=drive, table=table,
                                          chain=hp.chain, start_heading=float(pose[2]),
                                          dt_s=dt_s)
                follower.reset(state)
            follower.set_path(table, hermite_heading(hp, table.length_in))
            replan_s.append(time.perf_counter() - t0)
            paths.append(np.asarray(table.points_in))
            targets.append(target)
            events.append({"t_s": round(state.time_s, 3), "source": source,
                           "target": [round(x, 3) for x in target],
                           "interrupted_previous": busy, "segments": table.segments,
                           "length_in": round(table.length_in, 2),
                           "replan_ms": round(replan_s[-1] * 1e3, 3),
                           "start_speed_in_s": round(float(np.hypot(*vel[:2])), 2)})
        t0 = time.perf_counter()
        if follower is None:
            cmd = Command(np.zeros(4), np.zeros(4), False, ("stop",), "idle")
        else:
            cmd = follower.command(state)
        _record(log, state, cmd, time.perf_counter() - t0, drive)
        if targets and follower is not None and follower.finished and events and \
                not events[-1].get("reached") and "skipped" not in events[-1]:
            err = math.hypot(state.pose[0] - targets[-1][0], state.pose[1] - targets[-1][1])
            if err <= reach_tolerance_in:
                events[-1]["reached"] = round(state.time_s, 3)
                reached += 1
        if state.time_s >= script.duration_s - 1e-9:
            log.sim_s.append(0.0)
            break
        t2 = time.perf_counter()
        state = sim.step(cmd.power * drive.battery_voltage_v)
        log.sim_s.append(time.perf_counter() - t2)
    log.finish()
    final_err = math.hypot(state.pose[0] - targets[-1][0], state.pose[1] - targets[-1][1]) \
        if targets else 0.0
    speed = np.hypot(*log["velocity"][:, :2].T)
    planned = [e for e in events if "skipped" not in e]
    metrics = {
        "requests": len(requests), "replans": len(planned),
        "interrupted": sum(bool(e["interrupted_previous"]) for e in planned),
        "targets_reached": reached,
        "final_error_in": final_err,
        "replan_median_ms": float(np.median(replan_s) * 1e3) if replan_s else 0.0,
        "replan_max_ms": float(np.max(replan_s) * 1e3) if replan_s else 0.0,
        "max_speed_in_s": float(speed.max()),
        "peak_traction_fraction": float(log["traction"].max()),
        "saturated_ticks": int(np.count_nonzero(log["saturated"])),
        "compute_median_us": float(np.median(log["compute_s"]) * 1e6),
        "compute_p99_us": float(np.percentile(log["compute_s"], 99) * 1e6),
        "duration_s": float(log["time_s"][-1]),
    }
    return TeleopResult(log, metrics, paths, targets, events, limits)
