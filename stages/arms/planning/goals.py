"""Stages that adapt config to ArmGroup: the group plan and the independent baseline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from core.errors import ConfigError, PlanningError
from core.settings import from_config
from stages.arms.planning.group import ArmGroup
from stages.arms.planning.settings import GoalSettings, PlannerSettings


def planner_settings(cfg: Mapping[str, Any] | PlannerSettings | None) -> PlannerSettings:
    """PlannerSettings from the ``planner`` config group; wrong keys, types and values name the key."""
    return from_config(PlannerSettings, cfg, "planner")


def parse_goal(goal: Mapping[str, Any] | None) -> tuple[str, dict[str, list[float]]]:
    """Exactly one of goal.joints / goal.poses / goal.cartesian: (its kind, its targets per arm)."""
    settings = from_config(GoalSettings, goal, "goal")
    if len(settings.given) != 1:
        raise ConfigError(f"exactly one of goal.joints, goal.poses, goal.cartesian must be set; "
                          f"got {settings.given or 'none'}")
    kind = settings.given[0]
    return kind, {str(a): list(v) for a, v in getattr(settings, kind).items()}


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
