"""Random wrong keys and wrong types in every config group and every stage's parameters fail at
compose or construction time (before anything runs) with an error that names the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra.errors import HydraException
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from core.errors import ChoreographError
from stages.graph import build_graph, instantiate

CONF = Path(__file__).resolve().parents[2] / "conf"
PIPELINES = sorted(p.stem for p in (CONF / "pipeline").glob("*.yaml") if p.stem not in ("gather",))
# the top-level groups and a pipeline that reads each
GROUPS = {"robot": "scene", "scene": "scene", "goal": "plan", "planner": "plan", "retimer": "plan",
          "hardware": "plan", "drive": "path",
          "path": "path", "follower": "follow", "teleop": "teleop"}
WRONG_VALUES = ("abc", "[1,x]", "{a: 1}")
SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, phases=[Phase.generate],
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
key_names = st.from_regex(r"[a-z][a-z_]{2,14}", fullmatch=True).filter(lambda k: not k.endswith("_"))


def error_of(compose, overrides: list[str]) -> str | None:
    """The error composing and constructing the run's stages gives, or None when all is accepted."""
    try:
        cfg = compose(overrides)
        plain = OmegaConf.to_container(cfg, resolve=True)
        for node in build_graph(plain["pipeline"]["stages"]).nodes:
            instantiate(node)
    except (ChoreographError, HydraException, OmegaConfBaseException) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _stage_params(compose, pipeline: str) -> dict[str, dict]:
    plain = OmegaConf.to_container(compose([f"pipeline={pipeline}"]), resolve=True)
    return {name: {k: v for k, v in node.items() if k not in ("_target_", "inputs")}
            for name, node in plain["pipeline"]["stages"].items()}


def _number_leaves(tree, prefix: str) -> list[str]:
    """Dotted keys of the numbers (not booleans) in a config tree."""
    out = []
    for key, value in (tree or {}).items():
        if isinstance(value, dict):
            out += _number_leaves(value, f"{prefix}.{key}")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out.append(f"{prefix}.{key}")
    return out


@SETTINGS
@given(pipeline=st.sampled_from(PIPELINES), key=key_names, data=st.data())
def test_a_stage_parameter_that_does_not_exist_is_named(compose, pipeline, key, data):
    params = _stage_params(compose, pipeline)
    stage = data.draw(st.sampled_from(sorted(params)))
    assume(key not in params[stage])
    error = error_of(compose, [f"pipeline={pipeline}", f"+pipeline.stages.{stage}.{key}=1"])
    assert error is not None, f"pipeline.stages.{stage}.{key}=1 was accepted"
    assert key in error and "Traceback" not in error, error


@SETTINGS
@given(pipeline=st.sampled_from(PIPELINES), value=st.sampled_from(WRONG_VALUES), data=st.data())
def test_a_stage_number_given_a_wrong_type_is_named(compose, pipeline, value, data):
    params = _stage_params(compose, pipeline)
    leaves = [leaf for stage, p in params.items() for leaf in _number_leaves(p, f"pipeline.stages.{stage}")]
    assume(leaves)
    leaf = data.draw(st.sampled_from(leaves))
    error = error_of(compose, [f"pipeline={pipeline}", f"{leaf}={value}"])
    assert error is not None, f"{leaf}={value} was accepted"
    assert leaf.rsplit(".", 1)[-1] in error, error


@SETTINGS
@given(group=st.sampled_from(sorted(GROUPS)), key=key_names)
def test_a_group_key_that_does_not_exist_is_named(compose, group, key):
    cfg = OmegaConf.to_container(compose([f"pipeline={GROUPS[group]}"]), resolve=True)
    assume(key not in (cfg[group] or {}))
    error = error_of(compose, [f"pipeline={GROUPS[group]}", f"{group}.{key}=1"])
    assert error is not None and f"{group}.{key}" in error.replace("full_key: ", ""), error


@SETTINGS
@given(group=st.sampled_from(sorted(GROUPS)), value=st.sampled_from(WRONG_VALUES), data=st.data())
def test_a_group_number_given_a_wrong_type_is_named(compose, group, value, data):
    cfg = OmegaConf.to_container(compose([f"pipeline={GROUPS[group]}"]), resolve=True)
    leaves = _number_leaves(cfg[group], group)
    assume(leaves)
    leaf = data.draw(st.sampled_from(leaves))
    error = error_of(compose, [f"pipeline={GROUPS[group]}", f"{leaf}={value}"])
    assert error is not None, f"{leaf}={value} was accepted"
    assert leaf in error, error


@pytest.mark.parametrize("override, named", [
    ("hardware.sped=2", "hardware.sped"),
    ("hardware.speed=0", "hardware.speed=0.0: allowed: > 0"),
    ("hardware.clock=fast", "hardware.clock='fast': allowed: ['sim', 'wall']"),
    ("planner.backend=moveit", "planner.backend"),
    ("retimer.rate_hz=-1", "retimer.rate_hz=-1.0: allowed: > 0"),
])
def test_settings_values_out_of_range_name_the_key_and_what_is_allowed(compose, override, named):
    error = error_of(compose, ["pipeline=crossing", override])
    assert error is not None and named in error, error
