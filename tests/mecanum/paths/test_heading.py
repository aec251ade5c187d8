"""Per-segment headings (Pedro Pathing's linear, constant, tangential) along a path, as both
followers sample them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.errors import ConfigError
from core.settings import from_config
from hardware.mecanum.params import DriveParams
from stages.mecanum.control.roadrunner import ArcLengthPath, build_profile
from stages.mecanum.control.scheduler import segment_heading
from stages.mecanum.control.settings import RoadRunnerParams
from stages.mecanum.paths.build import build_path
from stages.mecanum.paths.heading import SegmentHeading, headings_at, short_turn
from stages.mecanum.paths.settings import PathSettings

# east 48 in, then a quarter turn north (radius 12), then north 36 in
SEGMENTS = [[[0, 0], [16, 0], [32, 0], [48, 0]],
            [[48, 0], [54.6274, 0], [60, 5.3726], [60, 12]],
            [[60, 12], [60, 24], [60, 36], [60, 48]]]
HEADINGS = [{"mode": "linear", "start_rad": 0.0, "end_rad": math.pi / 2},
            {"mode": "constant", "start_rad": math.pi / 2},
            {"mode": "tangential", "reverse": True}]


def test_short_turn_goes_the_short_way_round():
    assert short_turn(0.1, -0.1) == pytest.approx(-0.2)
    assert short_turn(math.radians(170), math.radians(-170)) == pytest.approx(math.radians(20))
    assert short_turn(0.0, math.pi) == pytest.approx(math.pi)


def test_each_mode_at_chain_parameters():
    hs = [from_config(SegmentHeading, h, "h") for h in HEADINGS]
    u = np.array([0.0, 0.5, 1.0, 1.5, 2.25, 3.0])
    tangent = np.array([0.0, 0.0, 0.0, 0.8, math.pi / 2, math.pi / 2])
    h = headings_at(hs, u, tangent)
    assert h[:2] == pytest.approx([0.0, math.pi / 4])          # linear by the segment's parameter
    assert h[2:4] == pytest.approx([math.pi / 2, math.pi / 2])  # u = 1 starts segment 1: constant
    assert math.remainder(h[4] - 3 * math.pi / 2, math.tau) == pytest.approx(0.0)   # reversed tangent
    assert np.all(np.abs(np.diff(h)) <= math.pi)                # unwrapped


def test_a_bad_heading_names_its_key():
    with pytest.raises(ConfigError, match=r"path.headings\[0\].mode"):
        from_config(PathSettings, {"segments": SEGMENTS, "headings": [{"mode": "spline"}] * 3}, "path")
    with pytest.raises(ConfigError, match="one per segment"):
        from_config(PathSettings, {"segments": SEGMENTS, "headings": HEADINGS[:2]}, "path")


def test_both_followers_turn_the_same_way_on_the_same_path():
    settings = from_config(PathSettings, {"segments": SEGMENTS, "headings": HEADINGS, "relax": False}, "path")
    bundle = build_path(settings, DriveParams())
    table = bundle.entry_speeds()
    skid = segment_heading(table, bundle.flat.source_u, bundle.headings)
    profile = build_profile(ArcLengthPath(bundle.chain), DriveParams(), RoadRunnerParams(),
                            headings=bundle.headings)
    for s in (0.0, 24.0, 47.0, 60.0, 80.0, 90.0):
        s_rr = s * profile.s[-1] / table.cum_length_in[-1]
        h_rr = float(np.interp(s_rr, profile.s, profile.heading))
        assert math.remainder(skid(s)[0] - h_rr, math.tau) == pytest.approx(0.0, abs=0.03), s
    assert skid(24.0)[1] == pytest.approx((math.pi / 2) / 48.0, rel=0.01)   # linear: a constant rate
    assert skid(80.0)[1] == 0.0
