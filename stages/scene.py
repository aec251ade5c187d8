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

    def home_qpos(self) -> np.ndarray:
        return self.robot.home_qpos(self.model)


def build_world(robot: dict, scene: dict, asset_dir=None) -> World:
    from hardware.models.scene import build_scene
    from hardware.robot import RobotSpec

    compiled = build_scene(robot, scene, asset_dir=asset_dir)
    spec = RobotSpec.from_config(robot, compiled.model)
    return World(compiled.model, spec, compiled, spec.clearance_m)


def home_proximity(world: World):
    """The smallest true distance between geometry that may not touch, at home."""
    from stages.planning.checker import ClearanceChecker

    joints = world.robot.joint_names()
    checker = ClearanceChecker(world.model, joints, world.clearance_m, base_qpos=world.home_qpos())
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
        files: dict[str, Any] = {"robot.json": JsonFile({
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
                     "home_clear": bool(prox.distance_m >= world.clearance_m)},
            files=files,
            run_files={"scene.xml": TextFile(world.scene.xml, ".xml")},
        )
