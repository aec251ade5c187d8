import json

import pytest

from core.errors import ConfigError
from core.targets import check_targets
from stages.api import stage_seed
from stages.graph import build_graph, run_graph

C = "stages.examples.Constant"


def test_good_graph_runs_in_dependency_order(tmp_path):
    graph = build_graph({
        "total": {"_target_": "stages.examples.Sum", "inputs": {"x": "a.value", "y": "b.value"}},
        "a": {"_target_": C, "value": 2},
        "b": {"_target_": C, "value": 3},
    })
    assert graph.names == ("a", "b", "total")
    record = run_graph(graph, tmp_path, seed=0)
    assert record.ok
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["total.total"] == 5 and "total.time_s" in metrics
    assert json.loads((tmp_path / "status.json").read_text())["status"] == "ok"
    assert (tmp_path / "a" / "value.json").exists()


def test_missing_producer_names_stage_and_reference():
    with pytest.raises(ConfigError, match=r"stage 'total' input x='nope.value': no stage 'nope'"):
        build_graph({"total": {"_target_": "stages.examples.Sum", "inputs": {"x": "nope.value"}}})


def test_unknown_output_lists_the_real_ones():
    with pytest.raises(ConfigError, match=r"has no output 'valu'; its outputs are \['value', 'draw'\]"):
        build_graph({"a": {"_target_": C},
                     "t": {"_target_": "stages.examples.Sum", "inputs": {"x": "a.valu"}}})


def test_cycle_is_named():
    with pytest.raises(ConfigError, match="cycle: .*x -> y -> x|cycle: .*y -> x -> y"):
        build_graph({"x": {"_target_": "stages.examples.Sum", "inputs": {"v": "y.total"}},
                     "y": {"_target_": "stages.examples.Sum", "inputs": {"v": "x.total"}}})


def test_bad_reference_syntax():
    with pytest.raises(ConfigError, match="expected '<stage>.<output>'"):
        build_graph({"t": {"_target_": "stages.examples.Sum", "inputs": {"x": "avalue"}}})


@pytest.mark.parametrize("target", ["builtins.eval", "os.system", "subprocess.run"])
def test_targets_outside_allowlist_are_refused(target):
    with pytest.raises(ConfigError, match="is not allowed"):
        build_graph({"a": {"_target_": target}})
    with pytest.raises(ConfigError, match="is not allowed"):
        check_targets({"robot": {"nested": [{"_target_": target}]}})


def test_unknown_class_lists_module_contents():
    with pytest.raises(ConfigError, match="has no 'Constnt'"):
        build_graph({"a": {"_target_": "stages.examples.Constnt"}})


def test_bad_parameter_fails_before_any_stage_runs(tmp_path):
    graph = build_graph({"a": {"_target_": C}, "b": {"_target_": C, "valeu": 1}})
    record = run_graph(graph, tmp_path, seed=0)
    assert not record.ok and record.failed_stage == "b"
    assert "ConfigError" in record.error and "valeu" in record.error
    assert not (tmp_path / "a").exists()


def test_failing_stage_keeps_partial_metrics(tmp_path):
    graph = build_graph({"a": {"_target_": C, "value": 1}, "boom": {"_target_": "stages.examples.Fail"}})
    record = run_graph(graph, tmp_path, seed=0)
    status = json.loads((tmp_path / "status.json").read_text())
    assert status == {"status": "failed", "failed_stage": "boom",
                      "error": "ChoreographError: failed on purpose", "seconds": status["seconds"]}
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["a.value"] == 1 and metrics["boom.measured_before_failing"] == 1.0
    assert not record.ok


def test_seeds_are_per_stage_and_reproducible(tmp_path):
    graph = build_graph({"a": {"_target_": C}, "b": {"_target_": C}})
    r1 = run_graph(graph, tmp_path / "1", seed=7)
    r2 = run_graph(graph, tmp_path / "2", seed=7)
    r3 = run_graph(graph, tmp_path / "3", seed=8)
    assert r1.metrics["a.draw"] == r2.metrics["a.draw"] != r3.metrics["a.draw"]
    assert r1.metrics["a.draw"] != r1.metrics["b.draw"]
    assert stage_seed(7, "a") != stage_seed(7, "b")
