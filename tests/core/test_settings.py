"""core.settings: one converter and one schema for every settings dataclass."""

from dataclasses import dataclass, field
from typing import Literal

import pytest
from omegaconf import OmegaConf

from core.errors import ConfigError
from core.settings import from_config, require, schema


@dataclass(frozen=True)
class FaultSettings:
    send_latency_s: float = 0.0
    fail_at_s: float | None = None


@dataclass(frozen=True)
class RigSettings:
    speed: float = 1.0
    steps: int = 3
    driver: Literal["mujoco", "ros2"] = "mujoco"
    offsets_deg: tuple[float, ...] = (0.0, 1.0)
    position_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    faults: dict[str, FaultSettings] = field(default_factory=dict)
    home: dict[str, tuple[float, ...]] | None = None

    def __post_init__(self):
        require(self.speed > 0, "speed", self.speed, "> 0")


def test_a_mapping_with_ints_and_lists_becomes_the_typed_settings():
    s = from_config(RigSettings, {"speed": 2, "offsets_deg": [1, 2], "position_m": [0, 1, 2],
                                  "faults": {"left": {"send_latency_s": 1}}, "home": {"left": [0, 1]}},
                    "hardware")
    assert s.speed == 2.0 and isinstance(s.speed, float)
    assert s.offsets_deg == (1.0, 2.0) and s.position_m == (0.0, 1.0, 2.0)
    assert s.faults["left"] == FaultSettings(send_latency_s=1.0)
    assert s.home == {"left": (0.0, 1.0)}
    assert from_config(RigSettings, None, "hardware") == RigSettings()
    assert from_config(RigSettings, s, "hardware") is s


@pytest.mark.parametrize("data, named", [
    ({"sped": 1}, "hardware.sped: not a rig setting; allowed: ['speed'"),
    ({"speed": "fast"}, "hardware.speed='fast': expected a number"),
    ({"speed": True}, "hardware.speed=True: expected a number"),
    ({"steps": 1.5}, "hardware.steps=1.5: expected an integer"),
    ({"driver": "ros"}, "hardware.driver='ros': allowed: ['mujoco', 'ros2']"),
    ({"position_m": [0, 1]}, "hardware.position_m: expected 3 values"),
    ({"offsets_deg": [0, "x"]}, "hardware.offsets_deg[1]='x': expected a number"),
    ({"faults": {"left": {"latency": 1}}}, "hardware.faults.left.latency: not a fault setting"),
    ({"faults": {"left": {"fail_at_s": "soon"}}}, "hardware.faults.left.fail_at_s='soon'"),
    ({"speed": 0}, "hardware.speed=0.0: allowed: > 0"),
    ({"home": 3}, "hardware.home: expected a mapping, got 3"),
])
def test_a_wrong_key_type_or_value_names_the_full_key_and_what_is_allowed(data, named):
    with pytest.raises(ConfigError) as info:
        from_config(RigSettings, data, "hardware")
    assert named in str(info.value)


def test_the_schema_lets_hydra_check_keys_and_types_and_keeps_yaml_ints():
    node = OmegaConf.structured(schema(RigSettings))
    merged = OmegaConf.merge(node, OmegaConf.create({"speed": 2, "home": {"left": [0, 1]},
                                                     "faults": {"left": {"send_latency_s": 1}}}))
    assert from_config(RigSettings, merged, "hardware").home == {"left": (0.0, 1.0)}
    with pytest.raises(Exception, match="sped"):
        OmegaConf.merge(node, OmegaConf.from_dotlist(["sped=1"]))
    with pytest.raises(Exception, match="speed"):
        OmegaConf.merge(node, OmegaConf.from_dotlist(["speed=fast"]))
    with pytest.raises(Exception, match="latency"):
        OmegaConf.merge(node, OmegaConf.from_dotlist(["faults.left.latency=1"]))


def test_a_schema_instance_pickles_for_the_sweep_launchers():
    import pickle

    made = schema(RigSettings)(speed=3.0)
    back = pickle.loads(pickle.dumps(made))
    assert back == made and type(back).__name__ == "RigSettings"


@dataclass(frozen=True)
class GainSettings:
    kS: float = 0.0


@dataclass(frozen=True)
class LoopSettings:
    feedforward: GainSettings | Literal["model"] = "model"


def test_a_mapping_for_a_dataclass_or_a_choice_reports_the_dataclass_error():
    assert from_config(LoopSettings, {"feedforward": {"kS": 1}}, "f").feedforward == GainSettings(1.0)
    assert from_config(LoopSettings, {"feedforward": "model"}, "f").feedforward == "model"
    with pytest.raises(ConfigError, match=r"f\.feedforward\.kV: not a gain setting; allowed: \['kS'\]"):
        from_config(LoopSettings, {"feedforward": {"kV": 1}}, "f")
    with pytest.raises(ConfigError, match=r"f\.feedforward='modle': allowed: \['model'\]"):
        from_config(LoopSettings, {"feedforward": "modle"}, "f")
