"""Stages that adapt config to ArmGroup: the group plan and the independent baseline."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from stages.artifacts import JsonFile
from stages.errors import ConfigError, PlanningError
from stages.graph import Stage, StageContext, StageResult
from stages.planning.group import ArmGroup, PlannerSettings

GOAL_KINDS = ("joints", "poses", "cartesian")


def planner_settings(cfg: Mapping[str, Any] | None) -> PlannerSettings:
    """PlannerSettings from the ``planner`` config group; unknown keys name the allowed ones."""
    cfg = dict(cfg or {})
    cfg.pop("seed", None)
    if cfg.get("backend", "choreograph") == "choreograph" and cfg.get("name") in (None, "rrt_connect"):
        cfg.pop("name", None)   # the built-in back-end has one planner (name: rrt_connect)
    allowed = [f.name for f in dataclasses.fields(PlannerSettings)]
    unknown = sorted(set(cfg) - set(allowed))
    if unknown:
        raise ConfigError(f"planner.{unknown[0]} is not a planner setting; allowed: {allowed}")
    try:
        return PlannerSettings(**cfg)
    except PlanningError as exc:
        raise ConfigError(str(exc)) from exc


def parse_goal(goal: Mapping[str, Any] | None) -> tuple[str, dict[str, list[float]]]:
    """Exactly one of goal.joints / goal.poses / goal.cartesian."""
    goal = dict(goal or {})
    unknown = sorted(set(goal) - set(GOAL_KINDS))
    if unknown:
        raise ConfigError(f"goal.{unknown[0]} is not a goal kind; allowed: {list(GOAL_KINDS)}")
    given = [k for k in GOAL_KINDS if goal.get(k)]
    if len(given) != 1:
        raise ConfigError(f"exactly one of goal.joints, goal.poses, goal.cartesian must be set; "
                          f"got {given or 'none'}")
    kind = given[0]
    if not isinstance(goal[kind], Mapping):
        raise ConfigError(f"goal.{kind} must map arm names to lists of numbers")
    return kind, {str(a): list(v) for a, v in goal[kind].items()}


def make_group(world, arms=None, settings: PlannerSettings | None = None, **kw) -> ArmGroup:
    """An ArmGroup over the robot's arms (all of them by default) in the world's model."""
    names = list(arms) if arms else list(world.robot.arm_names)
    specs = {}
    for name in names:
        try:
            specs[name] = world.robot.arm(name)
        except ConfigError as exc:
            raise PlanningError("invalid_goal", str(exc)) from exc
    kw["allowed_pairs"] = (*world.allowed_pairs, *kw.get("allowed_pairs", ()))
    return ArmGroup(world.model, specs, world.clearance_m, settings, base_qpos=world.home_qpos(), **kw)


def start_configuration(group: ArmGroup, world, start: Mapping[str, Any] | None) -> np.ndarray:
    home = np.concatenate([np.asarray(world.robot.arm(a).home, float) for a in group.arms])
    return group.compose(dict(start or {}), home, "start")


class Plan(Stage):
    """Plans the group to the configured goal; outputs the path and the goal configuration."""

    outputs = ("path", "goal_q")

    def __init__(self, goal: Mapping[str, Any] | None = None, start: Mapping[str, Any] | None = None,
                 planner: Mapping[str, Any] | None = None, arms: list[str] | None = None):
        self.kind, self.goals = parse_goal(goal)
        self.start = start
        self.settings = planner_settings(planner)
        self.seed = (planner or {}).get("seed")
        self.arms = arms

    def run(self, ctx: StageContext, world) -> StageResult:
        group = make_group(world, self.arms, self.settings)
        start = start_configuration(group, world, self.start)
        rng = np.random.default_rng(self.seed) if self.seed is not None else ctx.rng
        method = {"joints": group.plan_to_joints, "poses": group.plan_to_poses,
                  "cartesian": group.plan_cartesian}[self.kind]
        ctx.log.info("planning %s goal for arms %s", self.kind, list(self.goals))
        result = method(self.goals, start, rng)
        for note in result.notes:
            ctx.log.info(note)
        goal_q = result.path.waypoints[-1]
        return StageResult(
            outputs={"path": result.path, "goal_q": goal_q},
            metrics={"time_s": result.time_s, "checks": result.checks,
                     "checks_per_s": result.checks / max(result.time_s, 1e-9),
                     "path_length_rad": result.length_rad, "waypoints": result.raw_waypoints,
                     "goal_kind": self.kind},
            files={"plan.json": JsonFile({"goal_kind": self.kind, "goals": self.goals,
                                          "start": start, "goal_q": goal_q, "notes": result.notes,
                                          "planner": dataclasses.asdict(self.settings)})},
        )
