"""Stage plan: an ArmGroup plans one goal (joints, gripper poses or a Cartesian path)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from core.artifacts import JsonFile
from stages.api import Stage, StageContext, StageResult
from stages.arms.planning.goals import (
    make_group,
    parse_goal,
    planner_settings,
    resolve_goal,
    start_configuration,
)
from stages.arms.recording import full_qpos, record_gripper_paths


class Plan(Stage):
    """Plans the group to the configured goal; outputs the path and the goal configuration."""

    outputs = ("path", "goal_q")

    def __init__(self, goal: Mapping[str, Any] | None = None, start: Mapping[str, Any] | None = None,
                 planner: Mapping[str, Any] | None = None, arms: list[str] | None = None):
        self.kind, self.goals = parse_goal(goal)
        self.start = start
        self.settings = planner_settings(planner)
        self.arms = arms

    def run(self, ctx: StageContext, world) -> StageResult:
        group = make_group(world, self.arms, self.settings)
        start = start_configuration(group, world, self.start)
        seed = self.settings.seed
        rng = np.random.default_rng(seed) if seed is not None else ctx.rng
        kind, goals = resolve_goal(world, self.kind, self.goals)
        method = {"joints": group.plan_to_joints, "poses": group.plan_to_poses,
                  "cartesian": group.plan_cartesian}[kind]
        ctx.log.info("planning %s goal for arms %s", self.kind, list(goals))
        result = method(goals, start, rng)
        for note in result.notes:
            ctx.log.info(note)
        goal_q = result.path.waypoints[-1]
        record_gripper_paths(ctx.recorder, world, "world/plan/gripper_path",
                             full_qpos(world, result.path.joint_names, result.path.waypoints), points=True)
        return StageResult(
            outputs={"path": result.path, "goal_q": goal_q},
            metrics={"time_s": result.time_s, "checks": result.checks,
                     "checks_per_s": result.checks / max(result.time_s, 1e-9),
                     "path_length_rad": result.length_rad, "waypoints": result.raw_waypoints,
                     "goal_kind": self.kind},
            files={"plan.json": JsonFile({"goal_kind": self.kind, "goals": goals,
                                          "start": start, "goal_q": goal_q, "notes": result.notes,
                                          "planner": dataclasses.asdict(self.settings)})},
        )
