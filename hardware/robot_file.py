"""A robot's MuJoCo model from its config: one MJCF file (``robot.mjcf``) or a rig of parts (``robot.build``).

:func:`load_robot_spec` gives the uncompiled ``mujoco.MjSpec`` (the scene builder adds the world to
it); :func:`load_robot` compiles the robot alone and reads its :class:`~hardware.robot.RobotSpec`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from hardware.assembly import assemble
from hardware.resources import resolve_mjcf_path
from hardware.robot import RobotSpec
from hardware.robot_settings import RobotSettings, robot_settings


def load_robot_spec(robot: Mapping[str, Any] | RobotSettings):
    """The robot's ``MjSpec`` (one file: ``robot.mjcf``; or parts: ``robot.build``) and its source path."""
    import mujoco

    cfg = robot_settings(robot)
    if bool(cfg.build) == bool(cfg.mjcf):
        raise ConfigError("a robot is one file (robot.mjcf: a path or pkg://<package>/<file>) or built from "
                          f"parts (robot.build: base, arms); give exactly one (got mjcf={cfg.mjcf!r}, "
                          f"build={'set' if cfg.build else None})")
    if cfg.build:
        return assemble(cfg.build), Path(f"<robot.build {cfg.name}>")
    path = resolve_mjcf_path(cfg.mjcf)
    try:
        spec = mujoco.MjSpec.from_file(str(path))
    except Exception as e:  # mujoco raises ValueError/FatalError on bad XML
        raise ConfigError(f"robot.mjcf {path} does not load: {e}") from e
    _absolute_asset_dirs(spec, path)
    return spec, path


def load_robot(robot: Mapping[str, Any] | RobotSettings):
    """Compile the config's MJCF and read the config against it: ``(MjModel, RobotSpec)``."""
    import mujoco

    cfg = robot_settings(robot)
    path = resolve_mjcf_path(cfg.mjcf)
    try:
        model = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        raise ConfigError(f"robot.mjcf {path} does not compile: {e}") from e
    return model, RobotSpec.from_config(cfg, model)


def _absolute_asset_dirs(spec, mjcf: Path) -> None:
    """Make meshdir/texturedir absolute when the model reads asset files, so the written XML
    loads from any folder (a model without asset files is left as it is)."""
    uses_files = any(getattr(mesh, "file", "") for mesh in spec.meshes) or any(
        getattr(t, "file", "") or any(getattr(t, "cubefiles", []) or []) for t in spec.textures)
    if not uses_files:
        return
    base = mjcf.parent
    for attr in ("meshdir", "texturedir"):
        p = Path(getattr(spec, attr) or "")
        setattr(spec, attr, str((p if p.is_absolute() else base / p).resolve()) + "/")
