"""Stage drop_peg: drop the tagged peg on the table in physics and record where it rests."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.artifacts import JsonFile
from core.settings import from_config
from stages.api import Stage, StageContext, StageResult
from stages.arms.perception.scene_config import scene_object, table_height
from stages.arms.perception.settings import PegDropSettings
from stages.arms.perception.sim import drop_peg_from_home, random_drop_pose
from stages.arms.recording import record_robot_motion


class DropPeg(Stage):
    """Release the peg at a seeded random pose (or ``start_pose``) and let physics settle it.

    Settings: :class:`~stages.arms.perception.settings.PegDropSettings`; ``region``: ``x``, ``y``
    ranges (world, m) and ``height_m`` above the table top of the release point; the orientation
    is uniformly random. The arms hold their home pose.
    """

    outputs = ("state",)

    def __init__(self, scene: dict, **settings: Any):
        self.settings = from_config(PegDropSettings, settings, "pipeline.stages.drop")
        scene_object(scene, self.settings.peg, "the tagged peg", (":add_tagged_peg",))
        self.table_z = table_height(scene)

    def run(self, ctx: StageContext, world) -> StageResult:
        s, z = self.settings, self.table_z
        pose = np.asarray(s.start_pose, float) if s.start_pose is not None else random_drop_pose(
            ctx.rng, s.region.x, s.region.y, (z + s.region.height_m[0], z + s.region.height_m[1]))
        r, state = drop_peg_from_home(world.model, world.home_qpos(), s.peg, pose, s.settle_s, s.max_s)
        if not r.settled:
            ctx.log.warning("the peg was still moving after %.1f s of simulation", s.max_s)
        record_robot_motion(ctx.recorder, world, "world/executed", [state.time], state.qpos[None],
                            collision=False)
        T, face = r.T_world_body, state.truth["resting_face"]
        ctx.log.info("peg released at %s, rests at %s on face %s after %.2f s", np.round(pose[:3], 3),
                     np.round(T[:3, 3], 3), face, r.sim_time_s)
        return StageResult(
            outputs={"state": state},
            metrics={"settled": r.settled, "settle_time_s": r.sim_time_s,
                     "release_height_m": float(pose[2] - z), "resting_face": face,
                     "x_m": float(T[0, 3]), "y_m": float(T[1, 3])},
            files={"drop.json": JsonFile(state.truth)})
