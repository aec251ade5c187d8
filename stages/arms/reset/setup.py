"""The reset cell's set-up: the settings readers, the rig with its scene camera, the peg drop."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import mujoco
import numpy as np

from core.errors import ConfigError, PlanningError
from core.settings import from_config
from core.tag_layouts import layout_from_config
from stages.arms.execution.settings import HardwareSettings
from stages.arms.grasping.candidates import site_pose
from stages.arms.perception.settings import SceneCameraSettings
from stages.arms.perception.sim import DropResult, drop_body, random_drop_pose
from stages.arms.planning.ik import ArmIK
from stages.arms.reset.rig import ResetRig
from stages.arms.reset.settings import DropSettings, ResetSettings


def reset_settings(cfg: Mapping[str, Any] | ResetSettings | None) -> ResetSettings:
    return from_config(ResetSettings, cfg, "reset")


def drop_settings(cfg: Mapping[str, Any] | DropSettings | None) -> DropSettings:
    return from_config(DropSettings, cfg, "drop")


def build_rig(world, scene: Mapping[str, Any], hardware: HardwareSettings,
              camera: Mapping[str, Any] | SceneCameraSettings | None, calibration, seed,
              hold_noslip_iterations: int = 0) -> tuple[ResetRig, np.ndarray]:
    """The rig on ``scene.objects.peg`` (its tag layout), and the peg's half extents (m)."""
    peg_cfg = (scene.get("objects") or {}).get("peg")
    if peg_cfg is None:
        raise ConfigError("the reset needs a tagged peg: scene.objects.peg (use scene=reset_cell)")
    layout = layout_from_config(peg_cfg, "peg")
    cam = from_config(SceneCameraSettings, camera, "camera")
    rig = ResetRig(world, layout, hardware, cam.name, cam.effects, calibration, seed=seed,
                   hold_noslip_iterations=hold_noslip_iterations)
    half = np.asarray(peg_cfg.get("size", [0.04, 0.04, 0.14]), float) / 2
    try:   # the peg is taken across its narrowest side: it must fit every gripper, before anything moves
        for hand in rig.hands.values():
            hand.check_fits(2 * float(np.min(half)), "scene.objects.peg.size")
    except ConfigError:
        rig.close()
        raise
    return rig, half


@contextmanager
def reset_cell(world, scene: Mapping[str, Any], hardware: HardwareSettings,
               camera: Mapping[str, Any] | SceneCameraSettings | None, calibration, seed: int,
               metrics: dict[str, Any]) -> Iterator[tuple[ResetRig, np.ndarray]]:
    """:func:`build_rig` as a context: the rig is closed after, and ``metrics["stamp_retries"]``
    set, also when the body fails."""
    rig, half = build_rig(world, scene, hardware, camera, calibration, seed)
    try:
        yield rig, half
    finally:
        rig.close()
        metrics["stamp_retries"] = rig.stamp_retries


def drop_peg(rig: ResetRig, rng: np.random.Generator, drop: DropSettings) -> DropResult:
    """Release the peg at a random pose above the workspace and let physics settle it."""
    pose = random_drop_pose(rng, drop.x_range, drop.y_range, drop.z_range)
    with rig.sim.lock:
        return drop_body(rig.model, rig.sim.data, "peg", pose, drop.settle_s, drop.max_s)


def check_reach(world, hands, points: Mapping[str, tuple[float, float]], surface_z: float,
                height_m: float, seed: int = 0) -> None:
    """ConfigError naming the key unless some arm reaches each of ``points`` (key -> world x, y) with
    its gripper pointing down as for a top grasp of an object ``height_m`` tall lying on
    ``surface_z`` (either finger orientation): a cell placed out of the robot's reach fails before
    anything moves, not after every planning attempt."""
    rng = np.random.default_rng(seed)
    iks = {a.name: ArmIK(world.model, a.joints, a.ee_site, np.asarray(a.lower), np.asarray(a.upper),
                         world.home_qpos()) for a in world.robot.arms if a.name in hands}
    for key, (x, y) in points.items():
        if not any(_reaches_down(ik, hands[arm], world.robot.arm(arm).home, x, y, surface_z, height_m, rng)
                   for arm, ik in iks.items()):
            raise ConfigError(f"{key}=[{x:.3f}, {y:.3f}] is out of reach: no arm of robot "
                              f"{world.robot.name!r} gets its gripper down to it (table top z "
                              f"{surface_z:.3f} m); place the cell where the arms reach "
                              "(conf/cell/<robot>.yaml)")


def _reaches_down(ik: ArmIK, hand, home, x: float, y: float, surface_z: float, height_m: float,
                  rng: np.random.Generator) -> bool:
    down = np.array([0.0, 0.0, -1.0])
    for yaw in (0.0, np.pi / 2):
        closing = np.array([-np.sin(yaw), np.cos(yaw), 0.0])
        frame = np.eye(4)
        frame[:3, :3] = np.column_stack([np.cross(closing, down), closing, down])
        frame[:3, 3] = [x, y, surface_z + height_m - hand.depth_for(height_m)]
        T = site_pose(frame, hand.site_axes)
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, T[:3, :3].reshape(-1))
        try:
            ik.solve([*T[:3, 3], *quat], home, rng, max_solutions=1, restarts=30)
            return True
        except PlanningError:
            continue
    return False
