"""Where robot files come from: repo-relative paths, ``pkg://<package>/<path>``, plain config.

Every path in a robot config (``robot.mjcf``, a part's ``file``, a fragment) is absolute, relative
to the repo root (:data:`REPO_ROOT`), or ``pkg://<package>/<path inside it>`` for a file shipped
by an installed package (the robot packages: ``pip install -e '.[robots]'``). ``<package>`` may
also be a folder on ``sys.path`` that is no Python package, such as the ``cmeel.prefix`` folder of
cmeel wheels (``pkg://cmeel.prefix/share/example-robot-data/robots/...``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from core.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parent.parent
"""Relative paths are resolved against this (the parent of the ``hardware`` package)."""
PKG_SCHEME = "pkg://"
INSTALL_HINT = "pip install -e '.[robots]'"


def resolve_resource(path: str, key: str) -> Path:
    """``pkg://<package>/<path>`` inside an installed package; absolute as is; else repo-relative."""
    s = str(path if path is not None else "").strip()
    if not s:
        raise ConfigError(f"{key} is empty; give a path (absolute, relative to {REPO_ROOT}, "
                          f"or {PKG_SCHEME}<package>/<path>)")
    if s.startswith(PKG_SCHEME):
        package, _, inner = s[len(PKG_SCHEME):].partition("/")
        try:
            found = importlib.util.find_spec(package) if package else None
        except (ImportError, ValueError):
            found = None
        folders = [] if found is not None or not package else [
            Path(d) / package for d in sys.path if d and (Path(d) / package).is_dir()]
        if found is None and not folders:
            raise ConfigError(f"{key}: package {package!r} (for {s!r}) is not installed; install the "
                              f"robot packages with: {INSTALL_HINT}")
        dirs = folders or [Path(d) for d in found.submodule_search_locations or []] or [
            Path(found.origin or ".").parent]
        p = next((d / inner for d in dirs if (d / inner).exists()), dirs[0] / inner)
    else:
        p = Path(s).expanduser()
        p = p if p.is_absolute() else REPO_ROOT / p
    p = p.resolve()
    if not p.exists():
        raise ConfigError(f"{key}: no file at {p} (from {s!r})")
    return p


def resolve_mjcf_path(path: str | Path, *, check_exists: bool = True) -> Path:
    """An absolute ``mjcf`` path as is; a relative one against the repo root (:data:`REPO_ROOT`)."""
    if path is None or str(path).strip() == "":
        raise ConfigError("robot.mjcf is empty; give an MJCF path (absolute, or relative to "
                          f"{REPO_ROOT}, or pkg://<package>/<file>)")
    if str(path).startswith(PKG_SCHEME):
        return resolve_resource(str(path), "robot.mjcf")
    p = Path(str(path)).expanduser()
    if not p.is_absolute():
        p = REPO_ROOT / p
    p = p.resolve()
    if check_exists and not p.is_file():
        raise ConfigError(f"robot.mjcf: no file at {p} (relative paths are resolved against "
                          f"{REPO_ROOT})")
    return p


def plain_config(config: Any) -> Any:
    """OmegaConf containers become plain dicts/lists; anything else is returned as is."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf
    except ImportError:  # pragma: no cover - omegaconf is a core dependency
        return config
    if isinstance(config, DictConfig | ListConfig):
        return OmegaConf.to_container(config, resolve=True)
    return config
