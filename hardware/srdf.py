"""An SRDF (MoveIt's semantic robot description) read against its URDF.

:func:`read_srdf` gives an :class:`Srdf`: the planning groups, each resolved to the URDF's moving
joints it holds; the named states (``<group_state>``); the link pairs it lets touch
(``<disable_collisions>``). Every name is checked against the URDF, and every named state against
the URDF's joint limits; a wrong one is a :class:`~core.errors.ConfigError` naming the SRDF file and
the element. :meth:`Srdf.chain` gives a group's joints from base to tip where the group is one
kinematic chain (else the error says why).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from core.errors import ConfigError
from hardware.urdf import UrdfRobot

LIMIT_TOLERANCE = 1e-6   # a named state this far past a limit still counts as inside it


@dataclass(frozen=True)
class SrdfGroup:
    """A planning group: every moving URDF joint it holds (in the URDF's order)."""

    name: str
    joints: tuple[str, ...]


@dataclass(frozen=True)
class GroupState:
    """A named configuration of a group: joint name -> value (rad or m)."""

    name: str
    group: str
    values: dict[str, float]


@dataclass(frozen=True)
class DisabledPair:
    """Two links the SRDF never checks against each other, with its reason (``Adjacent``, ``Never``...)."""

    link1: str
    link2: str
    reason: str


@dataclass(frozen=True)
class Srdf:
    path: Path
    urdf: UrdfRobot
    groups: tuple[SrdfGroup, ...]
    states: tuple[GroupState, ...]
    disabled: tuple[DisabledPair, ...]

    def group(self, name: str, key: str) -> SrdfGroup:
        found = next((g for g in self.groups if g.name == name), None)
        if found is None:
            raise ConfigError(f"{key}: group {name!r} is not in {self.path}; groups: "
                              f"{', '.join(g.name for g in self.groups) or '(none)'}")
        return found

    def chain(self, name: str, key: str) -> tuple[str, ...]:
        """The group's joints from base to tip, if they are one kinematic chain."""
        joints = self.group(name, key).joints
        if not joints:
            raise ConfigError(f"{key}: {self.path}: <group name={name!r}> holds no moving joint")
        by_name = {j.name: j for j in self.urdf.joints}
        depth = {j: len(self.urdf.chain(self.urdf.root, by_name[j].child) or ()) for j in joints}
        top, bottom = min(joints, key=depth.get), max(joints, key=depth.get)
        path = self.urdf.chain(by_name[top].parent, by_name[bottom].child) or ()
        ordered = tuple(j.name for j in path if j.moves)
        if set(ordered) != set(joints):
            raise ConfigError(f"{key}: {self.path}: <group name={name!r}> is not one kinematic chain: "
                              f"{sorted(set(joints) - set(ordered))} lie off the path from {top!r} to "
                              f"{bottom!r}" + (f", which also holds {sorted(set(ordered) - set(joints))}"
                                               if set(ordered) - set(joints) else ""))
        return ordered

    def state(self, name: str) -> GroupState | None:
        return next((s for s in self.states if s.name == name), None)


def read_srdf(path: Path, urdf: UrdfRobot, key: str) -> Srdf:
    """The SRDF at ``path``, every name checked against ``urdf`` (``key``: the config key)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise ConfigError(f"{key}: {path} does not parse as SRDF XML: {e}") from e
    if root.tag != "robot":
        raise ConfigError(f"{key}: {path} is not an SRDF (its root element is <{root.tag}>, not <robot>)")
    where = f"{key}: {path}"
    links, joints = set(urdf.links), {j.name: j for j in urdf.joints}

    def link(element: ET.Element, attr: str) -> str:
        name = element.get(attr, "")
        if name not in links:
            raise ConfigError(f"{where}: <{element.tag} {_attrs(element)}>: {attr} {name!r} is not a link of "
                              f"{urdf.path}; links: {', '.join(urdf.links)}")
        return name

    def joint(element: ET.Element, name: str) -> str:
        if name not in joints:
            raise ConfigError(f"{where}: <{element.tag} {_attrs(element)}>: joint {name!r} is not a joint of "
                              f"{urdf.path}; joints: {', '.join(joints)}")
        return name

    elements = {g.get("name", ""): g for g in root.findall("group")}
    groups: dict[str, SrdfGroup] = {}

    def resolve(name: str, seen: tuple[str, ...]) -> SrdfGroup:
        if name in groups:
            return groups[name]
        if name not in elements or name in seen:
            why = "is not defined" if name not in elements else "contains itself"
            owner = seen[-1] if seen else name
            raise ConfigError(f"{where}: <group name={owner!r}>: subgroup {name!r} {why}")
        found: set[str] = set()
        for e in elements[name]:
            if e.tag == "joint":
                found.add(joint(e, e.get("name", "")))
            elif e.tag == "link":   # a link's group holds the joint above it
                parent = urdf.parent_joint(link(e, "name"))
                found |= {parent.name} if parent is not None else set()
            elif e.tag == "chain":
                base, tip = link(e, "base_link"), link(e, "tip_link")
                path = urdf.chain(base, tip)
                if path is None:
                    raise ConfigError(f"{where}: <group name={name!r}> <chain {_attrs(e)}>: {tip!r} is not "
                                      f"below {base!r} in {urdf.path}")
                found |= {j.name for j in path}
            elif e.tag == "group":
                found |= set(resolve(e.get("name", ""), (*seen, name)).joints)
        groups[name] = SrdfGroup(name, tuple(j for j in joints if j in found and joints[j].moves))
        return groups[name]

    for name in elements:
        resolve(name, ())
    states = tuple(_state(e, groups, joints, where, joint) for e in root.findall("group_state"))
    disabled = tuple(DisabledPair(link(e, "link1"), link(e, "link2"), e.get("reason", ""))
                     for e in root.findall("disable_collisions"))
    return Srdf(path, urdf, tuple(groups.values()), states, disabled)


def _state(e: ET.Element, groups: dict[str, SrdfGroup], joints: dict, where: str, joint) -> GroupState:
    name, group = e.get("name", ""), e.get("group", "")
    if group not in groups:
        raise ConfigError(f"{where}: <group_state {_attrs(e)}>: group {group!r} is not defined; groups: "
                          f"{', '.join(groups) or '(none)'}")
    values = {}
    for j in e.findall("joint"):
        n = joint(j, j.get("name", ""))
        try:
            v = float((j.get("value") or "").split()[0])
        except (ValueError, IndexError):
            raise ConfigError(f"{where}: <group_state name={name!r}> <joint {_attrs(j)}>: value is not a "
                              "number") from None
        lo, hi = joints[n].lower, joints[n].upper
        if joints[n].type != "continuous" and lo is not None and hi is not None and lo < hi and not (
                lo - LIMIT_TOLERANCE <= v <= hi + LIMIT_TOLERANCE):
            raise ConfigError(f"{where}: <group_state name={name!r}> <joint {_attrs(j)}>: {v} is outside the "
                              f"joint's limits [{lo}, {hi}] in {joints[n].name!r} of the URDF")
        values[n] = v
    return GroupState(name, group, values)


def _attrs(e: ET.Element) -> str:
    return " ".join(f"{k}={v!r}" for k, v in e.attrib.items())
