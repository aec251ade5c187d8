"""What the two-arm pipelines record (``recording.rrd``), kept out of the stage adapters' flow.

Entity paths (``docs/recordings.md`` lists them per pipeline)::

    world/scene/<body>/...                 the static scene (table, torso...), once
    world/planned/<body>/...               the robot posed by the verified 125 Hz trajectory
    world/executed/<body>/...              the robot posed by the executed (simulated) states
    world/independent/<body>/...           the independent baseline posed on its frames
    world/plan/gripper_path/<arm>          the planned path's gripper positions (waypoints)
    world/clearance/closest                the closest pair's segment at each sample, labelled
    joints/<joint>/position|velocity       planned value with its lower and upper limits
    joints/<joint>/executed                the executed position
    clearance/min_m, clearance/required_m  smallest distance over time and the clearance
    clearance/closest_pair                 which geom pair is closest (a state lane)
    independent/colliding                  1 at the baseline's frames where the arms touch

Every time is on the ``time`` timeline in seconds from the motion's start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import mujoco
import numpy as np

from core.recording import Recorder
from hardware.model_shapes import (
    entity_part,
    moving_bodies,
    record_body_poses,
    record_geometry,
    record_static_poses,
    static_bodies,
)
from stages.arms.recording.layout import ARM_VIEWS

ARM_COLORS = ((52, 120, 246), (246, 130, 52), (60, 180, 90), (180, 60, 200))
COLLIDING_COLOR = (230, 30, 30)
LIMIT_COLOR, PLANNED_COLOR, EXECUTED_COLOR = (150, 150, 150), (52, 120, 246), (240, 150, 30)


def full_qpos(world, joint_names: Sequence[str], positions: np.ndarray,
              base: np.ndarray | None = None) -> np.ndarray:
    """T full qpos rows: ``base`` (default home) with the named joints at ``positions`` (T×D)."""
    adr = {j: i for a in world.robot.arms for j, i in zip(a.joints, a.qpos_indices, strict=True)}
    rows = np.tile(world.home_qpos() if base is None else np.asarray(base, float),
                   (len(positions), 1))
    rows[:, [adr[j] for j in joint_names]] = np.asarray(positions, float).reshape(len(positions), -1)
    return rows


def framed(views, model, camera: str = "overview"):
    """``views`` with their 3-D views seen first from the scene's ``camera`` (where it has one), as
    the run's MP4 is: the arms in view, not wherever the viewer would guess."""
    cid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
    if cid < 0:
        return views
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    mujoco.mj_camlight(model, data)
    position = data.cam_xpos[cid].copy()
    forward = -data.cam_xmat[cid].reshape(3, 3)[:, 2]           # a MuJoCo camera looks along its -z
    eye = (tuple(map(float, position)), tuple(map(float, position + forward)))
    return tuple(dataclasses.replace(v, eye=eye) if v.kind == "3d" else v for v in views)


def record_scene(rec: Recorder, world) -> None:
    """The static scene's geometry and poses, once; a note of the robot."""
    if not rec.enabled:
        return
    rec.layout(framed(ARM_VIEWS, world.model))
    model, bodies = world.model, static_bodies(world.model)
    record_geometry(rec, model, "world/scene", bodies)
    record_static_poses(rec, model, "world/scene", world.home_qpos(), bodies)
    arms = ", ".join(f"{a.name} ({len(a.joints)} joints, gripper site {a.ee_site})"
                     for a in world.robot.arms)
    rec.document("world/scene/notes",
                 f"**robot**: {arms}\n\n**clearance**: {world.clearance_m * 1000:.1f} mm")


def record_robot_motion(rec: Recorder, world, root: str, times_s: np.ndarray, qpos_rows: np.ndarray, *,
                        collision: bool = True) -> None:
    """The moving bodies' geometry under ``root`` (once) and their poses at ``times_s``."""
    if not rec.enabled or not len(times_s):
        return
    bodies = moving_bodies(world.model)
    record_geometry(rec, world.model, root, bodies, collision=collision)
    record_body_poses(rec, world.model, root, times_s, qpos_rows, bodies)


def gripper_positions(world, qpos_rows: np.ndarray) -> dict[str, np.ndarray]:
    """Each arm's gripper site position (T×3) at each qpos row."""
    import mujoco

    model = world.model
    data = mujoco.MjData(model)
    out = {a.name: np.empty((len(qpos_rows), 3)) for a in world.robot.arms}
    for t, q in enumerate(qpos_rows):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        for a in world.robot.arms:
            out[a.name][t] = data.site_xpos[a.ee_site_id]
    return out


def record_gripper_paths(rec: Recorder, world, entity: str, qpos_rows: np.ndarray,
                         colors: Mapping[str, tuple] | None = None,
                         points: bool = False) -> dict[str, np.ndarray]:
    """Each arm's gripper path as a line (static), optionally with its points; returns the paths."""
    if not rec.enabled:
        return {}
    paths = gripper_positions(world, qpos_rows)
    for k, (arm, path) in enumerate(paths.items()):
        color = (colors or {}).get(arm, ARM_COLORS[k % len(ARM_COLORS)])
        rec.line_strips3d(f"{entity}/{entity_part(arm)}", [path], colors=color, radii_m=0.003,
                          labels=[arm], static=True)
        if points:
            rec.points3d(f"{entity}/{entity_part(arm)}/points", path, colors=color, radii_m=0.008,
                         static=True)
    return paths


def record_joint_profiles(rec: Recorder, world, trajectory, prefix: str = "joints") -> None:
    """Each joint's position and velocity over time against its limits."""
    if not rec.enabled:
        return
    limits = {j: (lo, hi, v) for a in world.robot.arms
              for j, lo, hi, v in zip(a.joints, a.lower, a.upper, a.velocity_limits, strict=True)}
    t = trajectory.times
    ones = np.ones_like(t)
    for k, j in enumerate(trajectory.joint_names):
        lo, hi, vmax = limits[j]
        base = f"{prefix}/{entity_part(j)}"
        rec.series(f"{base}/position", t, np.column_stack([trajectory.positions[:, k], lo * ones, hi * ones]),
                   names=["position_rad", "lower_rad", "upper_rad"])
        rec.series(f"{base}/velocity", t, np.column_stack([trajectory.velocities[:, k], -vmax * ones,
                                                           vmax * ones]),
                   names=["velocity_rad_s", "-limit_rad_s", "limit_rad_s"])


def record_clearance(rec: Recorder, world, report, qpos_rows: np.ndarray) -> None:
    """Smallest distance over time against the clearance, the closest pair as a state lane, and
    the closest pair's segment in 3-D at each sample (labelled with its distance)."""
    if not rec.enabled:
        return
    import mujoco

    t, d = np.asarray(report.times_s), np.asarray(report.distances_m)
    rec.series("clearance/min_m", t, d, names=["min_clearance_m"])
    rec.series("clearance/required_m", t, np.full_like(d, report.clearance_m), names=["clearance_m"])
    model = world.model
    data = mujoco.MjData(model)
    fromto = np.zeros(6)
    last = None
    for i, (g1, g2) in enumerate(report.pairs):
        rec.set_time_s(float(t[i]))
        pair = f"{g1} – {g2}"
        if pair != last:
            rec.state("clearance/closest_pair", pair)
            last = pair
        ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, g) for g in (g1, g2)]
        if min(ids) < 0:
            continue
        data.qpos[:] = qpos_rows[i]
        mujoco.mj_kinematics(model, data)
        fromto[:] = 0.0
        mujoco.mj_geomDistance(model, data, ids[0], ids[1], 1.0, fromto)
        color = COLLIDING_COLOR if d[i] < report.clearance_m else (40, 200, 120)
        rec.line_strips3d("world/clearance/closest", [fromto.reshape(2, 3)], colors=color, radii_m=0.002,
                          labels=[f"{d[i] * 1000:.1f} mm {pair}"])
    w = report.worst_sample
    rec.set_time_s(float(t[w]))
    rec.text("clearance/log", f"smallest distance {d[w] * 1000:.2f} mm at t={t[w]:.3f} s "
                              f"(sample {w}): {report.pairs[w][0]} – {report.pairs[w][1]}", "WARN"
             if d[w] < report.clearance_m else "INFO")


def record_independent(rec: Recorder, world, joint_names, times_s: np.ndarray, frames: np.ndarray,
                       colliding: np.ndarray) -> None:
    """The independent baseline posed on its frames, its touching frames marked (a 0/1 series, and
    the grippers at those frames as red points)."""
    if not rec.enabled:
        return
    rows = full_qpos(world, joint_names, frames)
    record_robot_motion(rec, world, "world/independent", times_s, rows, collision=False)
    rec.series("independent/colliding", times_s, np.asarray(colliding, float), names=["arms_touch"])
    paths = record_gripper_paths(rec, world, "world/independent/gripper_path", rows,
                                 colors={a.name: (150, 150, 150) for a in world.robot.arms})
    hits = np.flatnonzero(colliding)
    if len(hits):
        pts = np.concatenate([p[hits] for p in paths.values()])
        rec.points3d("world/independent/colliding_grippers", pts, colors=COLLIDING_COLOR, radii_m=0.012,
                     static=True)
        for i in hits:
            rec.set_time_s(float(times_s[i]))
            rec.text("independent/log", f"frame {i}: the arms touch", "WARN")


def record_executed(rec: Recorder, world, times_s: np.ndarray, qpos: np.ndarray, joint_names,
                    positions: np.ndarray, colliding: np.ndarray, rate_hz: float = 125.0) -> None:
    """The executed states (thinned to about ``rate_hz``): the robot posed, each joint's position,
    and the states where the arms touch."""
    if not rec.enabled or not len(times_s):
        return
    keep = thin(times_s, rate_hz)
    t = np.asarray(times_s)[keep]
    record_robot_motion(rec, world, "world/executed", t, np.asarray(qpos)[keep], collision=False)
    for k, j in enumerate(joint_names):
        rec.series(f"joints/{entity_part(j)}/executed", t, np.asarray(positions)[keep, k],
                   names=["executed_rad"])
    rec.series("execute/colliding", t, np.asarray(colliding, float)[keep], names=["arms_touch"])


def thin(times_s: np.ndarray, rate_hz: float) -> np.ndarray:
    """Indices of samples at least 1/rate_hz apart (the first and the last kept)."""
    keep, last = [], -np.inf
    for i, t in enumerate(np.asarray(times_s, float)):
        if t - last >= 1.0 / rate_hz - 1e-9:
            keep.append(i)
            last = t
    if keep and keep[-1] != len(times_s) - 1:
        keep.append(len(times_s) - 1)
    return np.asarray(keep, dtype=int)


def record_trajectory(rec: Recorder, world, trajectory) -> None:
    """A 125 Hz trajectory: the robot posed at every sample (``world/planned``) and its joint profiles."""
    if not rec.enabled:
        return
    rows = full_qpos(world, trajectory.joint_names, trajectory.positions)
    record_robot_motion(rec, world, "world/planned", trajectory.times, rows)
    record_joint_profiles(rec, world, trajectory)


def record_verified(rec: Recorder, world, verified) -> None:
    """Clearance over time of the verified trajectory (re-posed if a repair changed it)."""
    if not rec.enabled:
        return
    traj = verified.trajectory
    if verified.repairs:
        record_trajectory(rec, world, traj)
    record_clearance(rec, world, verified.clearance, full_qpos(world, traj.joint_names, traj.positions))


def record_detour(rec: Recorder, group_paths: Mapping[str, np.ndarray],
                  detours_m: Mapping[str, float]) -> None:
    """The group trajectory's gripper paths (beside the baseline's) and each arm's detour."""
    if not rec.enabled:
        return
    for k, (arm, path) in enumerate(group_paths.items()):
        rec.line_strips3d(f"world/planned/gripper_path/{entity_part(arm)}", [path],
                          colors=ARM_COLORS[k % len(ARM_COLORS)], radii_m=0.003, labels=[arm], static=True)
    rec.document("group/detour", "\n".join(f"- **{arm}**: detour {d * 1000:.0f} mm from its independent path"
                                           for arm, d in detours_m.items()))


def record_sequential(rec: Recorder, run, check_every: int) -> None:
    """The sequential baseline's checked states: 1 where the arms touch (time from its first state)."""
    if not rec.enabled or not len(run.times):
        return
    t = np.asarray(run.times)[::check_every][:len(run.checked_colliding)] - float(run.times[0])
    rec.series("sequential/colliding", t, np.asarray(run.checked_colliding, float), names=["arms_touch"])
