"""The online RL loop: (policy attempts the insertion → automatic success detection → reset) × N.

It runs by itself: after every attempt the camera decides whether the peg went in, and
the automatic reset puts it back at the task's start pose. A failed reset (or a driver
fault in one) is recorded with its cause, and the loop goes on with the next episode.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from core.errors import ChoreographError, ConfigError, PerceptionError
from stages.arms.execution.settings import HardwareSettings
from stages.arms.planning.settings import PlannerSettings
from stages.arms.reset.plan import ResetPlanner
from stages.arms.reset.reset import ResetOutcome, run_reset
from stages.arms.reset.rig import ResetRig
from stages.arms.reset.setup import check_reach, drop_peg, reset_cell
from stages.arms.reset.task import TaskSpec
from stages.arms.rl.policy import Policy
from stages.arms.rl.settings import RLLoopSettings
from stages.arms.rl.success import InsertionCheck, check_insertion


@dataclass(frozen=True)
class Slot:
    """The fixture's slot: its pose (floor centre, x along the slot), width and length, depth (m)."""

    T_world: np.ndarray  # noqa: N815
    size_m: list[float]
    depth_m: float

    @classmethod
    def from_scene(cls, scene: Mapping[str, Any], fixture: str) -> Slot:
        cfg = (scene.get("objects") or {}).get(fixture)
        if cfg is None:
            raise ConfigError(f"the RL loop needs the fixture scene.objects.{fixture} (scene=reset_cell)")
        yaw = float(cfg.get("yaw_rad", 0.0))
        T = np.eye(4)
        T[:3, :3] = [[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]]
        T[:3, 3] = cfg["pos"]
        return cls(T, [float(v) for v in cfg.get("slot_m", [0.048, 0.16])], float(cfg.get("depth_m", 0.03)))


@dataclass
class RLRun:
    """The loop's episodes (``episodes.jsonl``'s records), the simulation's recorded states (times
    and full qpos), every reset's outcome (the first one's, then each episode's; images dropped)
    and every move the arms made (start stamp, each arm's trajectory)."""

    records: list[dict]
    times_s: np.ndarray
    qpos: np.ndarray
    resets: list[ResetOutcome]
    moves: list = field(default_factory=list)


class InsertionEpisodes:
    """Runs episodes in one reset cell: the policy's attempt, the camera's verdict, the reset."""

    def __init__(self, rig: ResetRig, planner: ResetPlanner, policy: Policy, task: TaskSpec, slot: Slot,
                 half_extents: np.ndarray, settings: RLLoopSettings, rng: np.random.Generator, log):
        self.rig, self.planner, self.policy, self.task, self.slot = rig, planner, policy, task, slot
        self.half, self.settings, self.rng, self.log = half_extents, settings, rng, log
        self.resets: list[ResetOutcome] = []

    def detect(self, T_world_peg: np.ndarray) -> InsertionCheck:  # noqa: N803
        t = self.task
        return check_insertion(T_world_peg, self.slot.T_world, self.slot.size_m, self.slot.depth_m, self.half,
                               t.long_axis, t.insert_depth_m, t.hole_tolerance_m)

    def reset(self) -> ResetOutcome:
        s = self.settings
        outcome = run_reset(self.rig, self.planner, self.task, self.half, s.surface_z, self.rng,
                            s.max_attempts, self.log)
        self.resets.append(replace(outcome, images={},   # the images stay out of memory
                                   looks=[(t, purpose, None, est) for t, purpose, _, est in outcome.looks]))
        return outcome

    def attempt(self, rec: dict[str, Any]) -> None:
        """The policy aims from what the camera sees and the peg is laid there: ``rec["action"]``,
        and ``rec["attempt"]`` = "executed" or the error."""
        rig, rng, slot = self.rig, self.rng, self.slot
        try:
            seen, _ = rig.perceive(rng)
            action = self.policy.act({"peg_pose": seen.T_world_obj, "slot_pose": slot.T_world,
                                      "slot_size_m": slot.size_m})
            rec["action"] = {k: np.asarray(v).tolist() for k, v in action.items()}
            aim = TaskSpec(start_xy=tuple(action["place_xy"]), start_yaw_rad=float(action["yaw_rad"]),
                           long_axis=self.task.long_axis)
            release_z = self.settings.surface_z + slot.depth_m + self.settings.release_gap_m
            plan = self.planner.plan(rig.believed_qpos(seen.T_world_obj), seen.T_world_obj, self.half, aim,
                                     release_z, rng)
            rig.execute(plan, rng, width_m=2 * float(np.sort(self.half)[0]))
            rec["attempt"] = "executed"
        except ChoreographError as exc:
            rec["attempt"] = f"{type(exc).__name__}: {exc}"[:300]

    def episode(self, ep: int) -> dict[str, Any]:
        rec: dict[str, Any] = {"episode": ep, "sim_start_s": self.rig.sim_time_s()}
        t0 = time.perf_counter()
        self.attempt(rec)
        rec["attempt_time_s"] = time.perf_counter() - t0
        rec["sim_verdict_s"] = self.rig.sim_time_s()
        truth = self.detect(self.rig.true_peg_pose())
        try:
            seen, _ = self.rig.perceive(self.rng)
            detected = self.detect(seen.T_world_obj)
            rec.update(detected=detected.inserted, depth_m=detected.depth_m)
        except PerceptionError as exc:
            rec.update(detected=False, depth_m=None, detection_note=str(exc)[:200])
        rec.update(truth=truth.inserted, true_depth_m=truth.depth_m)
        outcome = self.reset()
        rec.update(reset_success=outcome.success, reset_attempts=outcome.attempts,
                   reset_time_s=outcome.time_s, reset_failures=[f["cause"] for f in outcome.failures],
                   landing_error_m=outcome.metrics.get("landing.true_position_error_m"),
                   sim_end_s=self.rig.sim_time_s())
        self.log.info("episode %d: inserted=%s (truth %s), reset %s in %.1f s", ep, rec["detected"],
                      truth.inserted, "ok" if outcome.success else "FAILED", outcome.time_s)
        return rec


def run_rl_loop(world, scene: Mapping[str, Any], task: TaskSpec, slot: Slot, planner: PlannerSettings,
                hardware: HardwareSettings, settings: RLLoopSettings, policy: Policy, seed: int,
                rng: np.random.Generator, log, metrics: dict[str, Any],
                progress: Callable[..., Iterable] = lambda it, **_: it,
                on_episode: Callable[[list[dict]], None] = lambda records: None) -> RLRun:
    """Drop the peg, reset it, then run ``settings.episodes`` episodes; ``on_episode(records)``
    after each (e.g. to save them as they come)."""
    records: list[dict] = []
    with reset_cell(world, scene, hardware, None, settings.calibration, seed, metrics) as (rig, half):
        points = {"task.start_xy (scene.cell.start_xy)": task.start_xy,
                  "the drop region's centre (scene.cell.drop)": settings.drop.center_xy,
                  f"scene.objects.{task.fixture}.pos (its slot)": tuple(slot.T_world[:2, 3])}
        check_reach(world, rig.hands, points, settings.surface_z, 2 * float(np.min(half)), seed)
        reset_planner = ResetPlanner(world, planner, settings.reset, hands=rig.hands)
        episodes = InsertionEpisodes(rig, reset_planner, policy, task, slot, half, settings, rng, log)
        drop_peg(rig, rng, settings.drop)
        with rig.sim:
            first = episodes.reset()
            log.info("initial reset: %s", "ok" if first.success else "failed")
            for ep in progress(range(settings.episodes), total=settings.episodes, desc="episodes"):
                records.append(episodes.episode(ep))
                on_episode(records)
    times, qpos = rig.sim.recorded()
    return RLRun(records, times, qpos, episodes.resets, rig.moves)
