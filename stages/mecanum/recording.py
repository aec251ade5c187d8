"""What the mecanum pipelines record (``recording.rrd``), kept out of the stage adapters' flow.

Units are the family's: inches, seconds, radians; the field lies in the z = 0 plane, origin
at its centre. Entity paths (``docs/recordings.md``)::

    field/tiles, field/walls                the 144 in field, once
    field/path/original, field/path/flat    the Bézier chain and its flattened polyline, once
    field/path/vertices                     the flattened polyline's vertices
    plan/speed_in_s, plan/entry_speed_in_s  the precomputed speed profile (planned time)
    field/robot                             the robot's pose every 10 ms tick (footprint, heading)
    field/robot/velocity                    its velocity (robot frame arrow) every tick
    field/trail                             where it drove (once, at the end)
    robot/position_in, robot/heading_rad    pose over time
    robot/velocity_in_s, robot/yaw_rate_rad_s, robot/speed_in_s
    robot/deviation_in, robot/traction      distance to the path; each wheel's traction fraction
    control/requests/<controller>           each controller's [ax, ay, α] request (in/s², rad/s²)
    control/mode                            the scheduler's mode (a state lane)
    motors/power, motors/volts              the four motor commands sent (WHEEL_ORDER)
    motors/feedforward_v                    the allocator's motor voltages before the wheel PIDF

``follow_compare`` logs each follower's robot, trail and signals under ``<follower>/`` (e.g.
``roadrunner/field/robot``, ``roadrunner/robot/speed_in_s``) on the one field; ``teleop`` logs the
path being followed at ``field/path/flat`` (replaced at each request), ``field/target`` and a line
per request in ``teleop/log``.
"""

from __future__ import annotations

import math

import numpy as np

from core.recording import Primitive, Recorder, View
from hardware.mecanum.drawing import FIELD_IN, TILE_IN
from hardware.mecanum.kinematics import WHEEL_ORDER

MECANUM_VIEWS = (
    View("3d", "field", ("field/**",)),
    View("series", "speed (in/s)", ("robot/speed_in_s",)),
    View("series", "deviation from the path (in)", ("robot/deviation_in",)),
    View("series", "controller requests", ("control/requests/**",)),
    View("series", "motor commands", ("motors/**",)),
    View("series", "pose", ("robot/position_in", "robot/heading_rad")),
    View("series", "velocity", ("robot/velocity_in_s", "robot/yaw_rate_rad_s")),
    View("series", "traction", ("robot/traction",)),
    View("state", "scheduler mode", ("control/mode",)),
    View("series", "planned speed (in/s, planned time)", ("plan/speed_in_s", "plan/entry_speed_in_s")),
    View("text", "tele-op requests", ("teleop/log",)),
)
PATH_COLOR, FLAT_COLOR, TRAIL_COLOR = (120, 120, 120), (30, 110, 240), (240, 120, 30)
FOLLOWER_COLORS = (TRAIL_COLOR, (150, 60, 200), (40, 170, 90), (200, 40, 60), (90, 90, 90))
ARROW_S = 0.2   # the velocity arrow's length per in/s: 0.2 s of travel


def _flat3(points_2d: np.ndarray, z: float = 0.0) -> np.ndarray:
    p = np.asarray(points_2d, float).reshape(-1, 2)
    return np.column_stack([p, np.full(len(p), z)])


def record_field(rec: Recorder, size_in: float = FIELD_IN, tile_in: float = TILE_IN) -> None:
    """The field's tiles and walls (static)."""
    if not rec.enabled:
        return
    rec.layout(MECANUM_VIEWS)
    half, n = size_in / 2, int(round(size_in / tile_in))
    ticks = -half + tile_in * np.arange(n + 1)
    lines = [np.array([[x, -half, 0.0], [x, half, 0.0]]) for x in ticks]
    lines += [np.array([[-half, y, 0.0], [half, y, 0.0]]) for y in ticks]
    rec.line_strips3d("field/tiles", lines, colors=(170, 170, 170), radii_m=0.15, static=True)
    rec.transform("field/walls", (0.0, 0.0, -0.6), static=True)
    rec.shape("field/walls", Primitive("box", (half, half, 0.5), (205, 205, 205)), static=True)


def record_path(rec: Recorder, bundle) -> None:
    """The path as designed and as flattened, with the flattened vertices."""
    if not rec.enabled:
        return
    rec.line_strips3d("field/path/original", [_flat3(bundle.original.sample(), 0.1)],
                      colors=PATH_COLOR, radii_m=0.25, labels=[bundle.name], static=True)
    flat = _flat3(bundle.flat.points, 0.2)
    rec.line_strips3d("field/path/flat", [flat], colors=FLAT_COLOR, radii_m=0.3, static=True)
    rec.points3d("field/path/vertices", flat, colors=FLAT_COLOR, radii_m=0.6, static=True)


def _quat_z(heading_rad: np.ndarray) -> np.ndarray:
    h = np.asarray(heading_rad, float) / 2
    return np.column_stack([np.cos(h), np.zeros_like(h), np.zeros_like(h), np.sin(h)])


def record_follow(rec: Recorder, run, drive) -> None:
    """One follower's run: the robot every tick on the field and its signals as time series."""
    record_drive(rec, run.name, run.log, run.deviation, drive)


def record_drive(rec: Recorder, name: str, log, deviation: np.ndarray, drive, *, prefix: str = "",
                 color=TRAIL_COLOR) -> None:
    """A drive's loop log (a :class:`~stages.mecanum.control.loop.LoopLog`): the robot every tick on
    the field, its signals as time series; every entity under ``prefix`` (``"<follower>/"`` when
    several drive in one recording)."""
    if not rec.enabled:
        return
    t, pose, vel = log["time_s"], log["pose"], log["velocity"]
    robot = f"{prefix}field/robot"
    rec.shape(f"{robot}/footprint", Primitive("box", (drive.length_in / 2, drive.width_in / 2, 1.0),
                                              (*color, 160)), label=name, static=True)
    rec.arrows3d(f"{robot}/heading", [[0.0, 0.0, 2.5]], [[drive.length_in / 2, 0.0, 0.0]],
                 colors=(250, 250, 250), static=True)
    rec.transforms(robot, t, _flat3(pose[:, :2], 0.0), _quat_z(pose[:, 2]))
    c, s = np.cos(pose[:, 2]), np.sin(pose[:, 2])
    v_robot = np.column_stack([c * vel[:, 0] + s * vel[:, 1], -s * vel[:, 0] + c * vel[:, 1]])
    for k in range(len(t)):
        rec.set_time_s(float(t[k]))
        rec.arrows3d(f"{robot}/velocity", [[0.0, 0.0, 3.0]],
                     [[v_robot[k, 0] * ARROW_S, v_robot[k, 1] * ARROW_S, 0.0]], colors=color)
    rec.line_strips3d(f"{prefix}field/trail", [_flat3(pose[:, :2], 0.3)], colors=color, radii_m=0.2,
                      labels=[name], static=True)
    rec.series(f"{prefix}robot/position_in", t, pose[:, :2], names=["x_in", "y_in"])
    rec.series(f"{prefix}robot/heading_rad", t, pose[:, 2], names=["heading_rad"])
    rec.series(f"{prefix}robot/velocity_in_s", t, vel[:, :2], names=["vx_in_s", "vy_in_s"])
    rec.series(f"{prefix}robot/yaw_rate_rad_s", t, vel[:, 2], names=["yaw_rate_rad_s"])
    rec.series(f"{prefix}robot/speed_in_s", t, np.hypot(vel[:, 0], vel[:, 1]), names=["speed_in_s"])
    rec.series(f"{prefix}robot/deviation_in", t, deviation, names=["deviation_in"])
    rec.series(f"{prefix}robot/traction", t, log["traction"], names=list(WHEEL_ORDER))
    rec.series(f"{prefix}motors/power", t, log["power"], names=list(WHEEL_ORDER))
    rec.series(f"{prefix}motors/volts", t, log["volts"], names=list(WHEEL_ORDER))
    if np.isfinite(log["feedforward_v"]).any():
        rec.series(f"{prefix}motors/feedforward_v", t, log["feedforward_v"], names=list(WHEEL_ORDER))
    _record_requests(rec, t, log.requests, prefix)
    _record_modes(rec, t, log.mode, prefix)


def record_compare(rec: Recorder, runs: dict, drive) -> None:
    """Several followers on one path: each under ``<follower>/`` on the same field, in its own colour;
    the plots show them side by side (speed, deviation, motor commands)."""
    if not rec.enabled:
        return
    names = list(runs)
    for k, (name, run) in enumerate(runs.items()):
        record_drive(rec, name, run.log, run.deviation, drive, prefix=f"{name}/",
                     color=FOLLOWER_COLORS[k % len(FOLLOWER_COLORS)])

    def each(path: str) -> tuple[str, ...]:
        return tuple(f"{n}/{path}" for n in names)

    rec.layout((
        View("3d", "field", ("field/**", *each("field/**"))),
        View("series", "speed (in/s)", each("robot/speed_in_s")),
        View("series", "deviation from the path (in)", each("robot/deviation_in")),
        View("series", "traction", each("robot/traction")),
        *(View("series", f"{n}: motor commands", (f"{n}/motors/**",)) for n in names),
        *(View("series", f"{n}: controller requests", (f"{n}/control/requests/**",)) for n in names),
        View("state", "scheduler mode", each("control/mode")),
        View("series", "planned speed (in/s, planned time)", ("plan/speed_in_s", "plan/entry_speed_in_s")),
    ))


def record_teleop(rec: Recorder, res, drive) -> None:
    """A tele-op session: the field, each path as it was built (it replaces the one before at its
    request's time), each target, each request's line in ``teleop/log``, then the robot as in
    :func:`record_drive` (deviation: the distance to the path being followed)."""
    if not rec.enabled:
        return
    record_field(rec)
    planned = [e for e in res.events if "skipped" not in e]
    for event, points, target in zip(planned, res.paths, res.targets, strict=True):
        rec.set_time_s(float(event["t_s"]))
        rec.line_strips3d("field/path/flat", [_flat3(points, 0.2)], colors=FLAT_COLOR, radii_m=0.3)
        rec.points3d("field/target", _flat3([target[:2]], 0.5), colors=(220, 40, 160), radii_m=1.5)
    for event in res.events:
        rec.set_time_s(float(event["t_s"]))
        if "skipped" in event:
            what = "skipped: " + event["skipped"]
        else:
            what = (f"{event['length_in']} in path, {event['segments']} segments, replanned in "
                    f"{event['replan_ms']} ms" + (" (interrupted the previous one)"
                                                  if event["interrupted_previous"] else ""))
        rec.text("teleop/log", f"{event['source']} → {event['target']}: {what}")
    record_drive(rec, "teleop", res.log, np.abs(np.asarray(res.log["cross_track_in"], float)), drive)


def _record_requests(rec: Recorder, t: np.ndarray, requests: list[dict], prefix: str = "") -> None:
    """Each controller's request as its own series (NaN — a gap — where it asked nothing)."""
    names = sorted({name for tick in requests for name in tick})
    for name in names:
        values = np.array([tick.get(name, (math.nan,) * 3) for tick in requests], dtype=float)
        rec.series(f"{prefix}control/requests/{name}", t, values.reshape(len(t), -1)[:, :3],
                   names=["ax_in_s2", "ay_in_s2", "alpha_rad_s2"])


def _record_modes(rec: Recorder, t: np.ndarray, modes: list[str], prefix: str = "") -> None:
    last = None
    for k, mode in enumerate(modes):
        if mode != last:
            rec.set_time_s(float(t[k]))
            rec.state(f"{prefix}control/mode", mode)
            last = mode


def record_entry_speeds(rec: Recorder, bundle, table, profile) -> None:
    """The planned speed over (planned) time, and each vertex's entry speed when the plan reaches it."""
    if not rec.enabled:
        return
    at_vertex_s = np.interp(table.cum_length_in, profile.s_in, profile.time_s)
    rec.series("plan/entry_speed_in_s", at_vertex_s, table.entry_speed_in_s, names=["entry_speed_in_s"])
    rec.series("plan/speed_in_s", profile.time_s, profile.speed_in_s, names=["planned_speed_in_s"])
