"""Stage drop_peg: drop the tagged peg on the table in physics and record where it rests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.artifacts import JsonFile
from core.errors import ConfigError
from stages.api import Stage, StageContext, StageResult
from stages.arms.perception.scene_state import SimState, resting_face, scene_object, table_height


# ---------------------------------------------------------------------- drop
class DropPeg(Stage):
    """Release the peg at a seeded random pose (or ``start_pose``) and let physics settle it.

    ``region``: ``x``, ``y`` ranges (world, m) and ``height_m`` above the table top of the
    release point; the orientation is uniformly random. The arms hold their home pose.
    """

    outputs = ("state",)

    def __init__(self, scene: dict, peg: str = "peg", region: dict | None = None,
                 start_pose: Sequence[float] | None = None, settle_s: float = 0.3,
                 max_s: float = 4.0):
        self.peg = peg
        scene_object(scene, peg, "the tagged peg", (":add_tagged_peg",))
        self.table_z = table_height(scene)
        region = dict(region or {})
        unknown = sorted(set(region) - {"x", "y", "height_m"})
        if unknown:
            raise ConfigError(f"drop.region: unknown key(s) {unknown}; allowed: x, y, height_m")
        self.x = tuple(float(v) for v in region.get("x", (0.45, 0.75)))
        self.y = tuple(float(v) for v in region.get("y", (-0.05, 0.4)))
        self.h = tuple(float(v) for v in region.get("height_m", (0.08, 0.18)))
        for key, r in (("x", self.x), ("y", self.y), ("height_m", self.h)):
            if len(r) != 2 or r[0] > r[1]:
                raise ConfigError(f"drop.region.{key} must be [low, high], got {list(r)}")
        if self.h[0] < 0.05:
            raise ConfigError("drop.region.height_m: release at least 0.05 m above the table "
                              "(the peg must not start inside it)")
        self.start_pose = None if start_pose is None else np.asarray(start_pose, float)
        if self.start_pose is not None and self.start_pose.shape != (7,):
            raise ConfigError(f"drop.start_pose must be [x, y, z, qw, qx, qy, qz], got {start_pose}")
        self.settle_s, self.max_s = float(settle_s), float(max_s)

    def run(self, ctx: StageContext, world) -> StageResult:
        import mujoco

        from stages.arms.perception.sim import drop_body, hold_actuators_at_qpos, random_drop_pose

        model = world.model
        data = mujoco.MjData(model)
        data.qpos[:] = world.home_qpos()
        mujoco.mj_forward(model, data)
        hold_actuators_at_qpos(model, data)
        pose = self.start_pose
        if pose is None:
            pose = random_drop_pose(ctx.rng, self.x, self.y,
                                    (self.table_z + self.h[0], self.table_z + self.h[1]))
        r = drop_body(model, data, self.peg, pose, self.settle_s, self.max_s)
        if not r.settled:
            ctx.log.warning("the peg was still moving after %.1f s of simulation", self.max_s)
        T = r.T_world_body
        face = resting_face(T[:3, :3])
        truth = {"T_world_peg": T.tolist(), "pose": r.rest_pose.tolist(),
                 "start_pose": r.start_pose.tolist(), "resting_face": face,
                 "settled": r.settled, "sim_time_s": r.sim_time_s}
        ctx.log.info("peg released at %s, rests at %s on face %s after %.2f s", np.round(pose[:3], 3),
                     np.round(T[:3, 3], 3), face, r.sim_time_s)
        state = SimState(data.qpos.copy(), data.qvel.copy(), data.ctrl.copy(), float(data.time), truth)
        return StageResult(
            outputs={"state": state},
            metrics={"settled": r.settled, "settle_time_s": r.sim_time_s,
                     "release_height_m": float(pose[2] - self.table_z), "resting_face": face,
                     "x_m": float(T[0, 3]), "y_m": float(T[1, 3])},
            files={"drop.json": JsonFile(truth)})
