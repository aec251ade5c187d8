"""The compiled kernels without a wait (stages/arms/planning/warm_up.py): a cold environment starts one
background compile and checks with MuJoCo meanwhile; the compile leaves the marker and its lock gone."""

import subprocess
import sys

import pytest

from stages.arms.planning import warm_up


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """No marker yet, no compile in this process, the background start recorded instead of run."""
    marker = tmp_path / "kernels.test.ready"
    started = []
    monkeypatch.setattr(warm_up, "_marker", lambda: marker)
    monkeypatch.setattr(warm_up, "_state", {"ready": False, "process": None})
    monkeypatch.delenv("CHOREOGRAPH_KERNELS", raising=False)
    monkeypatch.setattr(warm_up.subprocess, "Popen", lambda *a, **k: started.append(a[0]) or _Done())
    return marker, started


class _Done:
    def poll(self):
        return 0


def test_a_cold_environment_compiles_once_in_the_background(cold):
    marker, started = cold
    assert warm_up.kernels_ready() is False          # MuJoCo alone for checkers made now
    assert len(started) == 1 and started[0][1:3] == ["-m", "stages.arms.planning.warm_up"]
    assert marker.with_suffix(".compiling").exists()  # a sweep's other jobs do not start their own
    marker.write_text("done")                         # the background process finished
    assert warm_up.kernels_ready() is True
    assert len(started) == 1


def test_another_process_compiling_is_waited_for_not_repeated(cold):
    marker, started = cold
    marker.with_suffix(".compiling").write_text("")
    assert warm_up.kernels_ready() is False and started == []
    marker.write_text("done")
    assert warm_up.kernels_ready() is True


def test_the_background_compile_writes_the_marker_and_removes_its_lock(tmp_path):
    """The real module run as the checker starts it (the kernels are cached by the suite's own checks, so
    this loads rather than compiles)."""
    lock = tmp_path / "k.compiling"
    lock.write_text("")
    subprocess.run([sys.executable, "-m", "stages.arms.planning.warm_up", str(lock)], check=True, timeout=300)
    assert not lock.exists()
    assert warm_up._marker().exists()


def test_inputs_of_any_layout_reach_the_kernels_compiled_once():
    """A read-only or strided state (a JointPath's waypoints are read-only) must not make numba compile
    another signature of a kernel (~5 s in the middle of a plan)."""
    import numpy as np

    from stages.arms.planning import kernels

    bounds = warm_up._exercise()
    names = ("decide", "classify", "edge_walk")
    signatures = {name: len(getattr(kernels, name).signatures) for name in names}
    q = np.zeros((1, 2))[:, 0]                     # strided
    frozen = np.zeros(1)
    frozen.setflags(write=False)                  # read-only
    for state in (q, frozen, [0.0]):
        bounds.decide(state, 0.005)
        bounds.classify(np.atleast_2d(state), 0.005)
        bounds.edge_walk(state, frozen, 4, 0.005, np.ones((len(bounds.pairs), 1)))
    assert {name: len(getattr(kernels, name).signatures) for name in signatures} == signatures
