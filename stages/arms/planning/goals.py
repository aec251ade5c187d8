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


def parse_goal(goal: Mapping[str, Any] | None) -> tuple[str, dict[str, list[float]] | str]:
    """Exactly one of goal.joints / goal.poses / goal.cartesian / goal.named: (its kind, its targets
    per arm; for ``named``, the state's name: :func:`resolve_goal` reads it from the world)."""
    settings = from_config(GoalSettings, goal, "goal")
    if len(settings.given) != 1:
        raise ConfigError(f"exactly one of goal.joints, goal.poses, goal.cartesian, goal.named must be set; "
                          f"got {settings.given or 'none'}")
    kind = settings.given[0]
    if kind == "named":
        return kind, str(settings.named)
    return kind, {str(a): list(v) for a, v in getattr(settings, kind).items()}


def resolve_goal(world, kind: str, goals: dict[str, list[float]] | str) -> tuple[str, dict[str, list[float]]]:
    """A named goal as the joint goal of the world's SRDF state; any other goal as it is."""
    return ("joints", world.named_goal(goals)) if kind == "named" else (kind, goals)


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
