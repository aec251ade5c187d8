"""Typed settings from plain config: one converter, one schema generator, for every settings dataclass.

A domain package declares its settings as a frozen dataclass, units in the field names::

    @dataclass(frozen=True)
    class HardwareSettings:
        speed: float = 1.0                       # sim seconds per wall second
        driver: Literal["mujoco"] = "mujoco"
        faults: dict[str, FaultSettings] = field(default_factory=dict)

        def __post_init__(self):
            require(self.speed > 0, "speed", self.speed, "> 0")

``from_config(HardwareSettings, cfg.hardware, "hardware")`` builds it from a mapping, checking every
key and type (ints are accepted where floats are meant; lists become tuples; nested dataclasses,
``X | None``, ``dict[str, X]`` and ``Literal`` choices are followed) and raises
:class:`~core.errors.ConfigError` naming the full key and what is allowed, e.g.
``hardware.faults.left.send_latency: not a setting; allowed: ['send_latency_s', ...]``.

``schema(HardwareSettings)`` is the same shape as a plain (mutable) dataclass that OmegaConf accepts,
registered in Hydra's ConfigStore so a wrong key or type already fails at compose time. Numbers
inside lists are typed ``Any`` there (OmegaConf refuses YAML ints in float lists) and checked here.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

from core.errors import ConfigError

S = TypeVar("S")


class InvalidSetting(ConfigError):
    """A settings value out of its range; :func:`from_config` puts the full key in front."""

    def __init__(self, name: str, value: Any, allowed: str):
        self.name, self.value, self.allowed = name, value, allowed
        super().__init__(f"{name}={value!r}: allowed: {allowed}")


def require(condition: bool, name: str, value: Any, allowed: str) -> None:
    """Raise :class:`InvalidSetting` for field ``name`` unless ``condition`` holds."""
    if not condition:
        raise InvalidSetting(name, value, allowed)


def setting_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def from_config(cls: type[S], data: Mapping[str, Any] | S | None, key: str) -> S:
    """The settings dataclass ``cls`` from ``data`` (a mapping, an instance, or None = defaults)."""
    if isinstance(data, cls):
        return data
    return _convert(cls, {} if data is None else data, key)


# ---------------------------------------------------------------------- conversion
def _dataclass(cls: type, data: Any, key: str) -> Any:
    if hasattr(data, "items") and not isinstance(data, Mapping):   # an OmegaConf node
        from omegaconf import OmegaConf

        data = OmegaConf.to_container(data, resolve=True)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{key}: expected a mapping of {cls.__name__} settings "
                          f"{setting_names(cls)}, got {data!r}")
    hints = typing.get_type_hints(cls)
    allowed = setting_names(cls)
    kwargs = {}
    for name, value in data.items():
        if name not in allowed:
            raise ConfigError(f"{key}.{name}: not {_label(cls)} setting; allowed: {allowed}")
        kwargs[name] = _convert(hints[name], value, f"{key}.{name}")
    missing = [f.name for f in dataclasses.fields(cls) if f.name not in kwargs
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ConfigError(f"{key}.{missing[0]}: required ({_label(cls)} settings: {allowed})")
    try:
        return cls(**kwargs)
    except InvalidSetting as exc:
        raise ConfigError(f"{key}.{exc}") from None


def _label(cls: type) -> str:
    """``BenchPlanSettings`` → "a bench plan", ``ImageEffects`` → "an image effects"."""
    name = cls.__name__.removesuffix("Settings") or cls.__name__
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).lower()
    return ("an " if name[0] in "aeiou" else "a ") + name


def _convert(tp: Any, value: Any, key: str) -> Any:
    if tp is Any:
        return value
    if dataclasses.is_dataclass(tp):
        return _dataclass(tp, value, key)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        errors = {}
        for option in options:
            try:
                return _convert(option, value, key)
            except ConfigError as exc:
                errors[option] = str(exc)
        fitting = [e for o, e in errors.items() if _shape_fits(o, value)]   # a mapping: its dataclass's error
        if len(errors) == 1 or len(fitting) == 1:
            raise ConfigError(fitting[0] if len(fitting) == 1 else next(iter(errors.values())))
        raise ConfigError(f"{key}={value!r}: expected one of {[_name(a) for a in args]}")
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{key}={value!r}: allowed: {list(args)}")
        return value
    if origin in (tuple, list, Sequence):
        if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__len__"):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        items = list(value)
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(items) != len(args):
                raise ConfigError(f"{key}: expected {len(args)} values, got {len(items)} ({value!r})")
            pairs = enumerate(zip(args, items, strict=True))
            return tuple(_convert(a, v, f"{key}[{i}]") for i, (a, v) in pairs)
        item_type = args[0] if args else Any
        out = [_convert(item_type, v, f"{key}[{i}]") for i, v in enumerate(items)]
        return tuple(out) if origin is tuple else out
    if origin in (dict, Mapping):
        if hasattr(value, "items") and not isinstance(value, Mapping):
            from omegaconf import OmegaConf

            value = OmegaConf.to_container(value, resolve=True)
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key}: expected a mapping, got {value!r}")
        kt, vt = args or (Any, Any)
        return {_convert(kt, k, key): _convert(vt, v, f"{key}.{k}") for k, v in value.items()}
    return _scalar(tp, value, key)


def _shape_fits(tp: Any, value: Any) -> bool:
    """Whether ``value`` has the shape of ``tp`` (a mapping for a dataclass or dict, a list for a list)."""
    origin = typing.get_origin(tp)
    if isinstance(value, Mapping):
        return dataclasses.is_dataclass(tp) or origin in (dict, Mapping)
    if isinstance(value, list | tuple):
        return origin in (tuple, list, Sequence)
    return not (dataclasses.is_dataclass(tp) or origin in (dict, Mapping, tuple, list, Sequence))


def _scalar(tp: Any, value: Any, key: str) -> Any:
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif tp is str:
        if isinstance(value, str):
            return value
    elif isinstance(tp, type) and isinstance(value, tp):
        return value
    raise ConfigError(f"{key}={value!r}: expected {_name(tp)}")


def _name(tp: Any) -> str:
    return {float: "a number", int: "an integer", bool: "true or false", str: "a string",
            type(None): "null"}.get(tp, getattr(tp, "__name__", str(tp)))


# ---------------------------------------------------------------------- Hydra schema
_SCHEMAS: dict[type, type] = {}


def schema(cls: type) -> type:
    """A mutable dataclass of ``cls``'s shape that OmegaConf takes as a structured config."""
    if cls not in _SCHEMAS:
        hints = typing.get_type_hints(cls)
        fields = []
        for f in dataclasses.fields(cls):
            spec: dict[str, Any] = {}
            if f.default is not dataclasses.MISSING:
                if isinstance(f.default, tuple | list):
                    spec["default_factory"] = (lambda v=f.default: list(v))
                else:
                    spec["default"] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                factory = f.default_factory
                spec["default_factory"] = (lambda fac=factory: _plain(fac()))
            fields.append((f.name, _schema_type(hints[f.name]), dataclasses.field(**spec)))
        made = dataclasses.make_dataclass(cls.__name__, fields)   # the name Hydra's errors show
        made.__module__, made.__qualname__ = __name__, _schema_name(cls)   # how pickle finds it again
        _SCHEMAS[cls] = made
    return _SCHEMAS[cls]


def _schema_name(cls: type) -> str:
    return f"{cls.__module__.replace('.', '__')}___{cls.__qualname__}"


def __getattr__(name: str) -> type:
    """A schema by its generated name, made on first use (how pickle finds it in a worker process)."""
    module, sep, qualname = name.rpartition("___")
    if not sep or not module:
        raise AttributeError(name)
    import importlib

    try:
        owner = importlib.import_module(module.replace("__", "."))
    except ImportError:
        raise AttributeError(name) from None
    return schema(getattr(owner, qualname))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return schema(type(value))(**{f.name: _plain(getattr(value, f.name))
                                      for f in dataclasses.fields(value)})
    if isinstance(value, tuple):
        return list(value)
    return value


def _schema_type(tp: Any, inner: bool = False) -> Any:
    if dataclasses.is_dataclass(tp):
        return schema(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (tuple, list, Sequence):
        return list[Any]
    if origin in (dict, Mapping):
        return dict[str, _schema_type(args[1], inner=True) if args else Any]
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1 and type(None) in args and typing.get_origin(options[0]) not in (
                tuple, list, Sequence, dict, Mapping):   # OmegaConf cannot merge into a None container
            return typing.Optional[_schema_type(options[0], inner)]  # noqa: UP045 (OmegaConf)
        return Any
    if origin is Literal:
        return str if all(isinstance(a, str) for a in args) else Any
    if tp in (float, int) and inner:
        return Any
    return tp if tp in (float, int, bool, str) else Any
