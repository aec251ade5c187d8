"""Execution stages: synchronized execution on the physics driver, and the sequential baseline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from stages.artifacts import JsonFile, Mp4Video, NpzFile
from stages.errors import ConfigError, ExecutionError
from stages.execution.executor import SynchronizedExecutor, split_trajectory
from stages.execution.replay import colliding_states, render_states, tracking_error
from stages.graph import Stage, StageContext, StageResult

FAULT_KEYS = ("send_latency_s", "send_jitter_s", "fail_at_s", "reject", "hang")
HARDWARE_KEYS = ("driver", "speed", "start_buffer_s", "max_start_lead_s", "ack_timeout_s", "faults", "video",
                 "seed", "joint_offsets_deg", "timestep_s")


def hardware_settings(cfg: Mapping[str, Any] | None) -> dict[str, Any]:
    cfg = dict(cfg or {})
    unknown = sorted(set(cfg) - set(HARDWARE_KEYS))
    if unknown:
        raise ConfigError(f"hardware.{unknown[0]} is not a hardware setting; allowed: {list(HARDWARE_KEYS)}")
    if cfg.get("driver", "mujoco") != "mujoco":
        raise ConfigError(f"hardware.driver={cfg['driver']!r}: only 'mujoco' runs here (the ROS 2 adapter "
                          "hardware.arms.ros2 needs a robot); allowed: ['mujoco']")
    for arm, faults in (cfg.get("faults") or {}).items():
        bad = sorted(set(faults or {}) - set(FAULT_KEYS))
        if bad:
            raise ConfigError(f"hardware.faults.{arm}.{bad[0]} is not a fault; allowed: {list(FAULT_KEYS)}")
    step = cfg.get("timestep_s")
    if step is not None and not (isinstance(step, (int, float)) and 0 < step <= 0.01):
        raise ConfigError(f"hardware.timestep_s={step!r}: the physics step in seconds, in (0, 0.01], "
                          "or null for the model's own")
    offsets = cfg.get("joint_offsets_deg")
    if offsets is not None:
        if not isinstance(offsets, Mapping):
            raise ConfigError(f"hardware.joint_offsets_deg must be null or {{arm: [one value per joint]}}, "
                              f"got {offsets!r}")
        for arm, values in offsets.items():
            try:
                vals = [float(v) for v in values]
            except (TypeError, ValueError):
                raise ConfigError(f"hardware.joint_offsets_deg.{arm} must be a list of numbers (deg), "
                                  f"got {values!r}") from None
            if any(abs(v) > 10.0 for v in vals):
                raise ConfigError(f"hardware.joint_offsets_deg.{arm}={vals}: hidden zero offsets are "
                                  "small (|offset| <= 10 deg)")
    return cfg


def joint_offsets_rad(hw: Mapping[str, Any], arm) -> np.ndarray | None:
    """The hidden zero offsets of ``arm`` (an ArmSpec) in rad, or None; checks the count."""
    values = (hw.get("joint_offsets_deg") or {}).get(arm.name)
    if values is None:
        return None
    if len(values) != len(arm.joints):
        raise ConfigError(f"hardware.joint_offsets_deg.{arm.name} lists {len(values)} values; the arm "
                          f"has {len(arm.joints)} joints {list(arm.joints)}")
    return np.radians(np.asarray(values, float))


def active_faults(faults: Mapping[str, Any] | None) -> dict[str, Any]:
    """The faults that do something (zero latency, no failure time, false flags are none)."""
    return {k: v for k, v in (faults or {}).items() if v not in (None, 0, 0.0, False)}


def simulated_robot(world, start_q: np.ndarray, joint_names, hw: Mapping[str, Any], seed: int):
    """A PhysicsSim at ``start_q`` and one (possibly fault-injecting) driver per arm."""
    from hardware.arms.faults import FaultyDriver
    from hardware.arms.mujoco_driver import MujocoArmDriver
    from hardware.arms.mujoco_sim import PhysicsSim

    qpos = world.home_qpos()
    index = {j: i for i, j in enumerate(joint_names)}
    for arm in world.robot.arms:
        for j, adr in zip(arm.joints, arm.qpos_indices, strict=True):
            if j in index:
                qpos[adr] = start_q[index[j]]
    sim = PhysicsSim(world.model, qpos, speed=float(hw.get("speed", 1.0)), timestep_s=hw.get("timestep_s"))
    drivers = {}
    faults = hw.get("faults") or {}
    for k, arm in enumerate(world.robot.arms):
        if not set(arm.joints) <= set(joint_names):
            continue
        driver = MujocoArmDriver(sim, arm.name, arm.joints, joint_offsets_rad(hw, arm))
        if arm.gripper is not None:
            for a in arm.gripper.actuator_ids:
                sim.set_ctrl(a, arm.gripper.open)
        f = active_faults(faults.get(arm.name))
        drivers[arm.name] = FaultyDriver(driver, seed=seed + k, **f) if f else driver
    return sim, drivers


class Execute(Stage):
    """Runs the verified trajectory on the simulated drivers, all arms from one start stamp."""

    outputs = ("states",)

    def __init__(self, hardware: Mapping[str, Any] | None = None, video: bool = True,
                 camera: str = "overview", fps: float = 30.0):
        self.hw = hardware_settings(hardware)
        self.video, self.camera, self.fps = bool(video), camera, float(fps)

    def run(self, ctx: StageContext, world, trajectory) -> StageResult:
        names = tuple(trajectory.joint_names)
        arms = {a.name: a.joints for a in world.robot.arms if set(a.joints) <= set(names)}
        per_arm = split_trajectory(trajectory, arms)
        sim, drivers = simulated_robot(world, trajectory.positions[0], names, self.hw, ctx.seed)
        executor = SynchronizedExecutor.from_hardware(drivers, self.hw)
        with sim:
            report = executor.run(per_arm)
            sim.run_until_idle(1.0)
        result = self._record(ctx, world, sim, report, trajectory, arms)
        if not report.ok:
            raise ExecutionError(report.failure() + (f"; others cancelled ({report.cancel_reason})"
                                                      if report.cancel_reason else ""))
        return result

    def _record(self, ctx, world, sim, report, trajectory, arms) -> StageResult:
        times, qpos = sim.recorded()
        adr = np.array([i for a in world.robot.arms if a.name in arms for i in a.qpos_indices])
        names = [j for a in world.robot.arms if a.name in arms for j in a.joints]
        positions = qpos[:, adr]
        starts = {a: r.started_s for a, r in report.results.items()}
        colliding = colliding_states(world, names, positions)
        m: dict[str, Any] = {
            "start_skew_s": report.start_skew_s, "states": int(len(times)),
            "colliding_states": int(colliding.sum()), "start_buffer_s": report.start_buffer_s,
            "start_lead_s": report.start_buffer_s, "stamp_retries": report.stamp_retries,
            "ok": report.ok,
            **{f"{a}_outcome": r.outcome.value for a, r in report.results.items()},
            **{f"{a}_send_latency_s": v for a, v in report.send_latency_s.items()},
        }
        if report.cancel_latency_s is not None:
            m["cancel_latency_s"] = report.cancel_latency_s
        m.update(tracking_errors(trajectory, report.start_stamp, times, positions, names))
        ctx.metrics.update(m)
        states = NpzFile({"times": times, "positions": positions, "joint_names": names, "qpos": qpos,
                          "colliding": colliding, "start_stamp": report.start_stamp,
                          **{f"{a}_start_s": s for a, s in starts.items()}})
        ctx.save("states.npz", states)
        ctx.save("results.json", JsonFile({a: {"outcome": r.outcome.value, "reason": r.reason,
                                                "started_s": r.started_s, "ended_s": r.ended_s,
                                                "send_latency_s": r.send_latency_s}
                                            for a, r in report.results.items()}))
        if self.video:
            frames = render_states(world.model, times, qpos, self.camera, self.fps)
            ctx.save("execute.mp4", Mp4Video(frames, self.fps))
        return StageResult(outputs={"states": {"times": times, "positions": positions, "names": names}},
                           metrics=m)


def tracking_errors(trajectory, start_stamp, times, positions, names) -> dict[str, float]:
    """Largest |measured − desired| during the motion, and at the end."""
    index = {j: i for i, j in enumerate(trajectory.joint_names)}
    cols = [index[j] for j in names]
    reference = np.asarray(trajectory.positions)[:, cols]
    return {"tracking_error_max_rad": tracking_error(np.asarray(trajectory.times), reference, start_stamp,
                                                     times, positions),
            "final_error_rad": float(np.abs(positions[-1] - reference[-1]).max())}


class Sequential(Stage):
    """The old execution layer's way: one arm after the other; checks every ``check_every``-th state."""

    outputs = ()

    def __init__(self, hardware: Mapping[str, Any] | None = None, check_every: int = 4):
        self.hw = hardware_settings(hardware)
        self.check_every = int(check_every)

    def run(self, ctx: StageContext, world, trajectory) -> StageResult:
        names = tuple(trajectory.joint_names)
        arms = {a.name: a.joints for a in world.robot.arms if set(a.joints) <= set(names)}
        per_arm = split_trajectory(trajectory, arms)
        hw = {**self.hw, "faults": {}}
        sim, drivers = simulated_robot(world, trajectory.positions[0], names, hw, ctx.seed)
        outcomes = {}
        with sim:
            for arm, tr in per_arm.items():
                executor = SynchronizedExecutor.from_hardware({arm: drivers[arm]}, hw)
                outcomes[arm] = executor.run({arm: tr}).results[arm].outcome.value
            sim.run_until_idle(1.0)
        times, qpos = sim.recorded()
        adr = np.array([i for a in world.robot.arms if a.name in arms for i in a.qpos_indices])
        joint_names = [j for a in world.robot.arms if a.name in arms for j in a.joints]
        checked = qpos[:: self.check_every, adr]
        colliding = colliding_states(world, joint_names, checked)
        ctx.log.info("sequential replay: %d of %d checked states touch", colliding.sum(), len(checked))
        return StageResult(
            metrics={"states": int(len(times)), "checked_states": int(len(checked)),
                     "colliding_states": int(colliding.sum()), "duration_s": float(times[-1] - times[0]),
                     **{f"{a}_outcome": o for a, o in outcomes.items()}},
            files={"states.npz": NpzFile({"times": times, "qpos": qpos, "joint_names": joint_names,
                                          "checked_colliding": colliding})},
        )
