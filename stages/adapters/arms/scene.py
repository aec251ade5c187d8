"""Stage scene: build the world (robot + scene) and save its model, a picture and the collision matrix."""

from __future__ import annotations

from typing import Any

from core.artifacts import JsonFile, PngImage, TextFile
from hardware.gripper import gripper_report
from stages.api import Stage, StageContext, StageResult
from stages.arms.recording import record_scene
from stages.arms.world import build_world, home_proximity, render_home


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
        record_scene(ctx.recorder, world)
        prox = home_proximity(world)
        ctx.log.info("home: closest pair %s – %s at %.1f mm", prox.geom1, prox.geom2,
                     prox.distance_m * 1000)
        for old, new in world.scene.renamed.items():
            ctx.log.warning("the robot file's %s is renamed %r: the scene has one of that name", old, new)
        acm = world.collision_matrix.to_json(model)
        ctx.log.info("collision matrix: %d pairs checked; disabled %s (%d samples)", acm["checked_pairs"],
                     acm["counts"], acm["samples"])
        grippers = gripper_report(model, world.robot, world.home_qpos())
        for arm, g in grippers.items():
            said = g["reason"] if not g["parallel_jaw"] else (
                f"parallel jaw, {g['opening_closed_m'] * 1000:.1f} to "
                f"{g['opening_open_m'] * 1000:.1f} mm (measured)")
            ctx.log.info("gripper of arm %s: %s", arm, said)
        files: dict[str, Any] = {"collision_matrix.json": JsonFile(acm), "robot.json": JsonFile({
            **world.robot.summary(), "geoms": int(model.ngeom),
            "home_min_clearance": {"distance_m": prox.distance_m, "pair": [prox.geom1, prox.geom2]},
            "grippers": grippers,
        })}
        if self.render:
            renders = render_home(world, self.cameras)
            files.update({f"{cam}.png": PngImage(image) for cam, image in renders.items()})
        return StageResult(
            outputs={"world": world},
            metrics={"arms": len(world.robot.arms), "dof": len(world.robot.joint_names()),
                     "geoms": int(model.ngeom), "home_min_clearance_m": prox.distance_m,
                     "checked_pairs": acm["checked_pairs"],
                     **{f"disabled_pairs_{reason}": n for reason, n in acm["counts"].items()},
                     "home_clear": bool(prox.distance_m >= world.clearance_m),
                     **{f"{arm}_gripper_opening_m": g["opening_open_m"] for arm, g in grippers.items()
                        if g["parallel_jaw"]}},
            files=files,
            run_files={"scene.xml": TextFile(world.scene.xml, ".xml")},
        )
