"""The ``_target_`` allowlist: a config may only name classes inside choreograph's own packages."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from core.errors import ConfigError

ALLOWED_TARGET_PREFIXES = ("stages.", "hardware.")


def check_targets(node: Any, where: str = "") -> None:
    """Refuse any ``_target_`` outside the allowlisted namespaces, anywhere in a config."""
    if isinstance(node, Mapping):
        target = node.get("_target_")
        if target is not None and not (
            isinstance(target, str) and target.startswith(ALLOWED_TARGET_PREFIXES)
        ):
            raise ConfigError(
                f"{where or '<root>'}._target_={target!r} is not allowed: targets must live in "
                f"{' or '.join(p + '*' for p in ALLOWED_TARGET_PREFIXES)}"
            )
        for key, value in node.items():
            check_targets(value, f"{where}.{key}" if where else str(key))
    elif isinstance(node, list | tuple):
        for i, value in enumerate(node):
            check_targets(value, f"{where}[{i}]")


def resolve_target(target: str, where: str) -> type:
    check_targets({"_target_": target}, where)
    module_name, _, attr = target.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"{where}._target_={target!r}: cannot import {module_name!r} ({exc})"
        ) from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        public = sorted(n for n in dir(module) if not n.startswith("_") and n[0].isupper())
        raise ConfigError(
            f"{where}._target_={target!r}: {module_name} has no {attr!r}; it has {public}"
        ) from None
