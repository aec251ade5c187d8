"""The online RL loop: (policy attempts the insertion → automatic success detection → reset) × N.

It runs by itself: after every attempt the camera decides whether the peg went in, and
the automatic reset puts it back at the task's start pose. A failed reset (or a driver
fault in one) is recorded with its cause, and the loop goes on with the next episode.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from core.artifacts import JsonFile, TextFile
from core.errors import ChoreographError, ConfigError, PerceptionError
from core.targets import check_targets
from stages.api import Stage, StageContext, StageResult
from stages.arms.execution.rig import hardware_settings
from stages.arms.planning.goals import planner_settings
from stages.arms.reset.plan import ResetPlanner
from stages.arms.reset.reset import run_reset
from stages.arms.reset.setup import build_rig, drop_peg, reset_settings
from stages.arms.reset.task import TaskSpec
from stages.arms.rl.policy import make_policy
from stages.arms.rl.success import check_insertion
from stages.arms.rl.summary import summarize


class RLLoop(Stage):
    outputs = ("episodes",)

    def __init__(self, scene: Mapping[str, Any], task: Mapping[str, Any], episodes: int = 5,
                 policy: Mapping[str, Any] | None = None, reset: Mapping[str, Any] | None = None,
                 planner: Mapping[str, Any] | None = None, hardware: Mapping[str, Any] | None = None,
                 drop: Mapping[str, Any] | None = None, calibration: str | None = None,
                 max_attempts: int = 3, surface_z: float = 0.75, release_gap_m: float = 0.007):
        self.scene, self.task = dict(scene), TaskSpec.from_config(task)
        self.episodes = int(episodes)
        if self.episodes < 1:
            raise ConfigError(f"rl_loop episodes must be >= 1, got {episodes}")
        self.policy_cfg = dict(policy or {"_target_": "stages.arms.rl.policy.ScriptedInsertion"})
        check_targets(self.policy_cfg, "rl.policy")
        self.settings, self.planner = reset_settings(reset), planner_settings(planner)
        self.hw, self.drop = hardware_settings(hardware), dict(drop or {})
        self.calibration, self.max_attempts = calibration, int(max_attempts)
        self.surface_z, self.release_gap_m = float(surface_z), float(release_gap_m)
        fixture = (self.scene.get("objects") or {}).get(self.task.fixture)
        if fixture is None:
            raise ConfigError(f"the RL loop needs the fixture scene.objects.{self.task.fixture} (scene=reset_cell)")
        self.fixture = fixture

    def _slot_pose(self) -> np.ndarray:
        yaw = float(self.fixture.get("yaw_rad", 0.0))
        T = np.eye(4)
        T[:3, :3] = [[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]]
        T[:3, 3] = self.fixture["pos"]
        return T

    def run(self, ctx: StageContext, world) -> StageResult:
        rng = ctx.rng
        policy = make_policy(self.policy_cfg, ctx.seed)
        rig, half = build_rig(world, self.scene, self.hw, {}, self.calibration, ctx.seed)
        planner = ResetPlanner(world, self.planner, self.settings)
        slot, slot_size = self._slot_pose(), [float(v) for v in self.fixture.get("slot_m", [0.048, 0.16])]
        slot_depth = float(self.fixture.get("depth_m", 0.03))
        records: list[dict] = []

        def detect(T):
            return check_insertion(T, slot, slot_size, slot_depth, half, self.task.long_axis,
                                   self.task.insert_depth_m, self.task.hole_tolerance_m)

        try:
            drop_peg(rig, rng, self.drop)
            with rig.sim:
                first = run_reset(rig, planner, self.task, half, self.surface_z, rng, self.max_attempts, ctx.log)
                ctx.log.info("initial reset: %s", "ok" if first.success else "failed")
                for ep in ctx.progress(range(self.episodes), total=self.episodes, desc="episodes"):
                    records.append(self._episode(ep, ctx, rig, planner, policy, detect, half, slot, slot_size,
                                                 slot_depth, rng))
                    ctx.save("episodes.jsonl", TextFile("".join(json.dumps(r) + "\n" for r in records),
                                                        ".jsonl"))
        finally:
            rig.close()
            ctx.metrics["stamp_retries"] = rig.stamp_retries
        summary = summarize(records)
        ctx.save("summary.json", JsonFile(summary))
        return StageResult(outputs={"episodes": records}, metrics=summary)

    def _episode(self, ep, ctx, rig, planner, policy, detect, half, slot, slot_size, slot_depth, rng) -> dict:
        rec: dict[str, Any] = {"episode": ep}
        t0 = time.perf_counter()
        try:
            seen, _ = rig.perceive(rng)
            action = policy.act({"peg_pose": seen.T_world_obj, "slot_pose": slot, "slot_size_m": slot_size})
            rec["action"] = {k: np.asarray(v).tolist() for k, v in action.items()}
            aim = TaskSpec(start_xy=tuple(action["place_xy"]), start_yaw_rad=float(action["yaw_rad"]),
                           long_axis=self.task.long_axis)
            plan = planner.plan(rig.believed_qpos(seen.T_world_obj), seen.T_world_obj, half, aim,
                                self.surface_z + slot_depth + self.release_gap_m, rng)
            rig.execute(plan, rng, width_m=2 * float(np.sort(half)[0]))
            rec["attempt"] = "executed"
        except ChoreographError as exc:
            rec["attempt"] = f"{type(exc).__name__}: {exc}"[:300]
        rec["attempt_time_s"] = time.perf_counter() - t0
        truth = detect(rig.true_peg_pose())
        try:
            seen, _ = rig.perceive(rng)
            detected = detect(seen.T_world_obj)
            rec.update(detected=detected.inserted, depth_m=detected.depth_m)
        except PerceptionError as exc:
            rec.update(detected=False, depth_m=None, detection_note=str(exc)[:200])
        rec.update(truth=truth.inserted, true_depth_m=truth.depth_m)
        outcome = run_reset(rig, planner, self.task, half, self.surface_z, rng, self.max_attempts, ctx.log)
        rec.update(reset_success=outcome.success, reset_attempts=outcome.attempts, reset_time_s=outcome.time_s,
                   reset_failures=[f["cause"] for f in outcome.failures],
                   landing_error_m=outcome.metrics.get("landing.true_position_error_m"))
        ctx.log.info("episode %d: inserted=%s (truth %s), reset %s in %.1f s", ep, rec["detected"], truth.inserted,
                     "ok" if outcome.success else "FAILED", outcome.time_s)
        return rec
