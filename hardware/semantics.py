"""What a robot config's SRDFs say, in the compiled model's names.

A URDF arm part of ``robot.build`` (``build.arms.<arm>: {urdf: ..., srdf: ...}``) is attached with
the prefix ``<arm>/``, so its SRDF's links and joints are ``<arm>/<name>`` in the model:

* :func:`srdf_pairs`: each SRDF's ``disable_collisions`` as body pairs, for the collision matrix;
* :func:`named_states`: each ``group_state`` as a joint goal per arm (``goal.named=<state>``): the
  state's values of the arm's joints (``robot.arms.<arm>.joints``); an arm whose joints the state
  does not all set has no goal in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.settings import from_config
from hardware.assembly import BuildSettings
from hardware.collision_matrix import SrdfPairs
from hardware.resources import plain_config, resolve_resource
from hardware.robot_settings import RobotSettings, robot_settings
from hardware.srdf import Srdf, read_srdf
from hardware.urdf import read_urdf


def part_srdfs(robot: Mapping[str, Any] | RobotSettings) -> dict[str, Srdf]:
    """``{arm: Srdf}`` for every arm part of ``robot.build`` that has an ``srdf``."""
    cfg = robot_settings(robot)
    if not cfg.build:
        return {}
    build = from_config(BuildSettings, plain_config(cfg.build), "robot.build")
    out = {}
    for arm, part in build.arms.items():
        if part.urdf is not None and part.srdf is not None:
            key = f"robot.build.arms.{arm}"
            urdf = read_urdf(resolve_resource(part.urdf, f"{key}.urdf"), f"{key}.urdf")
            out[arm] = read_srdf(resolve_resource(part.srdf, f"{key}.srdf"), urdf, f"{key}.srdf")
    return out


def srdf_pairs(robot: Mapping[str, Any] | RobotSettings) -> tuple[SrdfPairs, ...]:
    """Each arm's SRDF pairs as body names of the model (``<arm>/<link>``)."""
    return tuple(SrdfPairs(f"robot.build.arms.{arm}.srdf",
                           tuple((f"{arm}/{p.link1}", f"{arm}/{p.link2}", p.reason) for p in s.disabled),
                           tuple(f"{arm}/{link}" for link in s.urdf.links))
                 for arm, s in part_srdfs(robot).items())


def named_states(robot: Mapping[str, Any] | RobotSettings) -> dict[str, dict[str, tuple[float, ...]]]:
    """``{state: {arm: joint values}}`` over every arm's SRDF ``group_state``s."""
    cfg = robot_settings(robot)
    out: dict[str, dict[str, tuple[float, ...]]] = {}
    for arm, s in part_srdfs(cfg).items():
        if arm not in cfg.arms:
            continue
        joints = [j.removeprefix(f"{arm}/") for j in cfg.arms[arm].joints]
        for state in s.states:
            if all(j in state.values for j in joints):
                out.setdefault(state.name, {})[arm] = tuple(state.values[j] for j in joints)
    return out
