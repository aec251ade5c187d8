"""Stages that adapt config to ArmGroup: the group plan and the independent baseline."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from core.errors import ConfigError, PlanningError
from stages.arms.planning.group import ArmGroup, PlannerSettings

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
