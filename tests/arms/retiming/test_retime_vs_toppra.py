"""Near-optimality: within 2 % of TOPP-RA's duration on the same blended path.

A correctness check of the optimum (durations), not a timing test.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from core.errors import RetimingError
from stages.arms.retiming import retime_with_report
from stages.arms.retiming.toppra_compare import retime_benchmark, toppra_duration
from tests.arms.retiming.helpers import TWIN_ACC, TWIN_VEL, random_walk_path, smooth_path

pytest.importorskip("toppra")


def _cases():
    rng = np.random.default_rng(20240601)
    return [
        ("walk-10", random_walk_path(rng, 10, 14), 0.02),
        ("walk-25-wide-blends", random_walk_path(rng, 25, 14), 0.1),
        ("smooth-30", smooth_path(rng, 30, 14), 0.02),
        ("shortcut-4", random_walk_path(rng, 4, 14, step=1.5), 0.05),
    ]


@pytest.mark.parametrize(("label", "path", "deviation"), _cases(), ids=lambda c: str(c))
def test_duration_within_two_percent_of_toppra(label, path, deviation):
    result = retime_with_report(path, TWIN_VEL, TWIN_ACC, max_deviation_rad=deviation)
    reference = toppra_duration(result.geometric_path, TWIN_VEL, TWIN_ACC, max_step=0.005)
    assert result.duration_s > 1.0, label  # long enough that the 8 ms sample grid is < 1 %
    ratio = result.duration_s / reference
    # never slower than 2 %; faster than TOPP-RA only by its own grid error (ours is feasible)
    assert 0.99 <= ratio <= 1.02, (label, result.duration_s, reference)


def test_benchmark_rows_report_both_sides():
    path = random_walk_path(np.random.default_rng(7), 6, 14)
    (row,) = retime_benchmark([path], TWIN_VEL, TWIN_ACC, repeats=1)
    assert row.dof == 14 and row.waypoints == 6
    assert row.ratio == pytest.approx(row.duration_s / row.toppra_duration_s)
    assert 0.99 <= row.ratio <= 1.02
    assert row.compute_s > 0 and row.toppra_compute_s > 0
    assert row.max_acceleration_ratio <= 1.0 and row.max_velocity_ratio <= 1.0
    assert set(row.as_dict()) >= {"duration_s", "toppra_duration_s", "ratio", "compute_s",
                                  "toppra_compute_s"}


def test_missing_toppra_says_how_to_install(monkeypatch):
    result = retime_with_report(random_walk_path(np.random.default_rng(0), 3, 2), 1.0, 1.0)
    for name in [m for m in sys.modules if m == "toppra" or m.startswith("toppra.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "toppra", None)
    with pytest.raises(RetimingError, match="pip install toppra"):
        toppra_duration(result.geometric_path, 1.0, 1.0)
