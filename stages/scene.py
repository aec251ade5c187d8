"""The scene stage: compile robot + scene, validate the robot config, save and render it.

Its output ``world`` (model, robot spec, compiled scene) is what every manipulation
stage after it plans, checks and runs on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from stages.artifacts import JsonFile, PngImage, TextFile
from stages.graph import Stage, StageContext, StageResult


@dataclass(frozen=True)
class World:
    """The compiled scene and the robot in it (in memory; ``scene.xml`` is its saved form)."""

    model: Any  # mujoco.MjModel
    robot: Any  # hardware.robot.RobotSpec
    scene: Any  # hardware.models.scene.Scene
    clearance_m: float
    collision_matrix: Any = None  # hardware.collision_matrix.CollisionMatrix

    @property
    def allowed_pairs(self) -> tuple[tuple[int, int], ...]:
        """Geom pairs the collision matrix lets touch (every checker of this world skips them)."""
        return () if self.collision_matrix is None else tuple(self.collision_matrix.disabled)

    def home_qpos(self) -> np.ndarray:
        return self.robot.home_qpos(self.model)


def free_bodies(model) -> list[str]:
    """Bodies on a free joint (the scene's loose objects)."""
    import mujoco

    free = int(mujoco.mjtJoint.mjJNT_FREE)
    return [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, int(model.jnt_bodyid[j]))
            for j in range(model.njnt) if int(model.jnt_type[j]) == free]


def build_world(robot: dict, scene: dict, asset_dir=None) -> World:
    """Compile robot + scene, validate the robot config, and compute (or load) its collision matrix."""
    from hardware.collision_matrix import compute_collision_matrix, default_cache_dir
    from hardware.models.scene import build_scene
    from hardware.robot import RobotSpec, _plain

    compiled = build_scene(robot, scene, asset_dir=asset_dir)
    spec = RobotSpec.from_config(robot, compiled.model)
    cfg = _plain(robot)
    acm = cfg.get("collision_matrix") or {}
    matrix = compute_collision_matrix(
        compiled.model, spec.joint_names(), spec.home_qpos(compiled.model), spec.clearance_m,
        samples=int(acm.get("samples", 200)), never=bool(acm.get("never", False)),
        allowed=cfg.get("allowed_pairs") or (),
        cache_dir=default_cache_dir() if acm.get("cache", True) else None,
        held_bodies=free_bodies(compiled.model))   # objects a gripper may carry: never rigid with the table
    return World(compiled.model, spec, compiled, spec.clearance_m, matrix)


def home_proximity(world: World):
    """The smallest true distance between geometry that may not touch, at home."""
    from stages.planning.checker import ClearanceChecker

    joints = world.robot.joint_names()
    checker = ClearanceChecker.for_world(world, joints, world.clearance_m)
    return checker.proximity(world.robot.home())


class SceneStage(Stage):
    """Compiles the scene; writes scene.xml, scene/robot.json and camera renders."""

    outputs = ("world",)

    def __init__(self, robot: dict, scene: dict, render: bool = True,
                 cameras: tuple[str, ...] = ("scene_camera", "overview")):
        self.robot_cfg, self.scene_cfg = robot, scene
        self.render, self.cameras = render, tuple(cameras)

    def run(self, ctx: StageContext) -> StageResult:
        world = build_world(self.robot_cfg, self.scene_cfg, asset_dir=ctx.out_dir / "assets")
        model = world.model
        prox = home_proximity(world)
        ctx.log.info("home: closest pair %s – %s at %.1f mm", prox.geom1, prox.geom2,
                     prox.distance_m * 1000)
        for old, new in world.scene.renamed.items():
            ctx.log.warning("the robot file's %s is renamed %r: the scene has one of that name", old, new)
        acm = world.collision_matrix.to_json(model)
        ctx.log.info("collision matrix: %d pairs checked; disabled %s (%d samples)", acm["checked_pairs"],
                     acm["counts"], acm["samples"])
        files: dict[str, Any] = {"collision_matrix.json": JsonFile(acm), "robot.json": JsonFile({
            **world.robot.summary(), "geoms": int(model.ngeom),
            "home_min_clearance": {"distance_m": prox.distance_m, "pair": [prox.geom1, prox.geom2]},
        })}
        if self.render:
            import mujoco

            from hardware.render import render_rgb

            data = mujoco.MjData(model)
            data.qpos[:] = world.home_qpos()
            mujoco.mj_forward(model, data)
            for cam in self.cameras:
                if cam in world.scene.cameras:
                    files[f"{cam}.png"] = PngImage(render_rgb(model, data, cam))
        return StageResult(
            outputs={"world": world},
            metrics={"arms": len(world.robot.arms), "dof": len(world.robot.joint_names()),
                     "geoms": int(model.ngeom), "home_min_clearance_m": prox.distance_m,
                     "checked_pairs": acm["checked_pairs"],
                     **{f"disabled_pairs_{reason}": n for reason, n in acm["counts"].items()},
                     "home_clear": bool(prox.distance_m >= world.clearance_m)},
            files=files,
            run_files={"scene.xml": TextFile(world.scene.xml, ".xml")},
        )
