"""What the perception stages read from the scene config: a named object of a kind, the table height.

Every perception stage reads the scene config (``scene: ${scene}``) for the objects it uses and
fails at construction, naming the key, when one is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.errors import ConfigError


def scene_object(scene: Mapping[str, Any], name: str, what: str, kinds: Sequence[str]) -> dict:
    """``scene.objects.<name>`` (``what`` it is for the message), checked to be of one of ``kinds``."""
    objects = dict((scene or {}).get("objects") or {})
    if name not in objects:
        raise ConfigError(f"scene has no object {name!r} ({what}); objects: "
                          f"{sorted(objects) or 'none'}. Use scene=peg_table, or add one of kind "
                          f"{' / '.join(kinds)}")
    obj = dict(objects[name])
    if not any(str(obj.get("kind", "")).endswith(k) for k in kinds):
        raise ConfigError(f"scene.objects.{name}.kind={obj.get('kind')!r}; {what} must be of "
                          f"kind {' / '.join(kinds)}")
    return obj


def table_height(scene: Mapping[str, Any]) -> float:
    """The table top's height (``scene.table.height``), which the resting prior needs."""
    table = (scene or {}).get("table")
    if not table:
        raise ConfigError("the resting prior needs scene.table (its height)")
    return float(table.get("height", 0.75))
