import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ConfigError
from stages.mecanum.paths.bezier import CubicBezier, PathError
from stages.mecanum.paths.pedro import (
    SegmentHeading,
    from_field,
    heading_from_field,
    heading_to_field,
    read_pp,
    to_field,
    to_segments,
    write_pp,
)
from tests.mecanum.paths.strategies import point

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "pedro"
FILES = sorted(DATA.glob("*.pp"))
YAML_PATHS = [f for f in sorted((ROOT / "conf" / "path").glob("*.yaml"))  # those with segments
              if yaml.safe_load(f.read_text()).get("segments")]
T = np.linspace(0.0, 1.0, 41)


def bezier(p, t):
    """Any-degree Bézier by De Casteljau: (len(t), 2)."""
    q = np.broadcast_to(np.asarray(p, float), (len(t), len(p), 2)).copy()
    while q.shape[1] > 1:
        q = (1 - t)[:, None, None] * q[:, :-1] + t[:, None, None] * q[:, 1:]
    return q[:, 0]


def line_points(pp, i):
    """Line i's Bézier control points in the Pedro frame, its start included."""
    prev = pp.lines[i - 1].end if i else pp.start
    return [(prev.x, prev.y), *pp.lines[i].control_points, (pp.lines[i].end.x, pp.lines[i].end.y)]


def field(points):
    return [to_field(*p) for p in points]


def write(tmp_path, data, name="trajectory.pp"):
    f = tmp_path / name
    f.write_text(data if isinstance(data, str) else json.dumps(data))
    return f


def test_fixtures_are_real_varied_and_sourced():
    assert len({"_".join(f.name.split("_")[:2]) for f in FILES}) >= 3  # three public repos
    sources = (DATA / "SOURCES.md").read_text()
    assert all(f.name in sources for f in FILES)
    counts = {len(ln.control_points) for f in FILES for ln in read_pp(f).lines}
    assert {0, 1, 2, 3} <= counts  # lines, quadratics, cubics and a quartic


def test_frame_is_pedros_moved_to_the_field_centre():
    assert to_field(72, 72) == (0.0, 0.0)
    assert to_field(0, 0) == (-72.0, -72.0) and to_field(144, 0) == (72.0, -72.0)
    rng = np.random.default_rng(0)
    for x, y in rng.uniform(0, 144, (20, 2)):
        assert np.allclose(from_field(*to_field(x, y)), (x, y), atol=1e-12)
    for deg in (0.0, 37.0, 90.0, 180.0, -135.0):  # headings turn with the positions
        d = np.subtract(to_field(50 + math.cos(math.radians(deg)), 50 + math.sin(math.radians(deg))),
                        to_field(50, 50))
        assert math.remainder(math.atan2(d[1], d[0]) - heading_to_field(deg), math.tau) == \
            pytest.approx(0, abs=1e-12)
        assert heading_from_field(heading_to_field(deg)) == pytest.approx(deg, abs=1e-12)


def test_reads_fields_and_keeps_the_rest():
    pp = read_pp(DATA / "Overture-7421_Hornet-2026-23619_FarSidePaths.pp")
    assert (pp.start.x, pp.start.y, pp.start.heading, pp.start.start_deg) == (56, 8, "linear", 90)
    assert [len(ln.control_points) for ln in pp.lines] == [0, 0, 0, 0, 2, 0, 1, 0, 0]
    assert [ln.end.heading for ln in pp.lines][:2] == ["linear", "tangential"]
    assert pp.lines[8].end.degrees == 110 and pp.lines[8].end.heading == "constant"
    assert {"sequence", "settings", "shapes", "version", "timestamp"} <= set(pp.extras)
    assert pp.lines[0].extras["name"] == "Path 1" and pp.lines[0].extras["id"] == "line-b16rtgkzp4q"
    assert pp.lines[1].end.extras["startDeg"] == 100  # a stale field of another mode is kept
    fp = to_segments(pp)
    assert fp.start_heading_rad == pytest.approx(math.pi / 2)  # 90 degrees in Pedro: +y
    assert fp.headings[8] == SegmentHeading("constant", heading_to_field(110), heading_to_field(110))


@pytest.mark.parametrize("path", FILES, ids=lambda f: f.stem)
def test_every_line_is_traced_exactly_or_within_the_stated_bound(path):
    pp = read_pp(path)
    fp = to_segments(pp)
    for k, (seg, i, (a, b)) in enumerate(zip(fp.segments, fp.line_of_segment, fp.spans, strict=True)):
        original = bezier(field(line_points(pp, i)), a + (b - a) * T)
        err = np.abs(CubicBezier(np.array(seg)).point(T) - original).max()
        assert err <= (1e-9 if i not in fp.approximated else fp.max_error_in + 1e-12), (k, i)
    assert set(fp.approximated) == {i for i, ln in enumerate(pp.lines) if len(ln.control_points) > 2}
    assert fp.max_error_in <= 1e-3


def test_a_quartic_is_refused_when_no_tolerance_is_allowed():
    with pytest.raises(PathError, match=r"bluepath\.pp: lines\[1\]: a Bézier of degree 4 "
                                        r"\(3 control points\) cannot be one cubic"):
        to_segments(read_pp(DATA / "Syosset-Syborgs-FTC_PedroPathing-Test_bluepath.pp"), 0.0)


def test_an_elevated_cubic_of_degree_four_is_one_exact_cubic(tmp_path):
    c = np.array([[10.0, 20.0], [40.0, 90.0], [90.0, 10.0], [120.0, 60.0]])
    i = np.arange(1, 4)[:, None] / 4
    quartic = np.vstack([c[:1], i * c[:-1] + (1 - i) * c[1:], c[-1:]])
    doc = {"startPoint": {"x": 10, "y": 20, "heading": "constant", "degrees": 45},
           "lines": [{"endPoint": {"x": 120, "y": 60, "heading": "tangential", "reverse": True},
                      "controlPoints": [{"x": x, "y": y} for x, y in quartic[1:4]]}]}
    fp = to_segments(read_pp(write(tmp_path, doc)), 0.0)
    assert fp.approximated == () and len(fp.segments) == 1
    assert np.allclose(fp.segments[0], field(c), atol=1e-9)
    assert fp.start_heading_rad == pytest.approx(math.radians(45))
    assert fp.headings[0].mode == "tangential" and fp.headings[0].reverse


@pytest.mark.parametrize("path", FILES, ids=lambda f: f.stem)
def test_round_trip_keeps_geometry_headings_and_fields(path, tmp_path):
    pp = read_pp(path)
    fp = to_segments(pp)
    out = write_pp(tmp_path / path.name, fp.segments, fp.segment_headings(), fp.start_heading_rad, pp)
    pp2 = read_pp(out)
    fp2 = to_segments(pp2)
    assert np.allclose(fp2.segments, fp.segments, rtol=0, atol=1e-9)
    assert fp2.start_heading_rad == pytest.approx(fp.start_heading_rad, abs=1e-12)
    assert (pp2.start.x, pp2.start.y) == pytest.approx((pp.start.x, pp.start.y), abs=1e-9)
    assert pp2.start.extras == pp.start.extras and pp2.start.end_deg == pp.start.end_deg
    if fp.approximated:  # lines split into more lines: ids change, so the sequence goes
        assert len(pp2.lines) == len(fp.segments) and "sequence" not in pp2.extras
        assert {k: v for k, v in pp.extras.items() if k != "sequence"} == pp2.extras
        return
    assert pp2.extras == pp.extras and len(pp2.lines) == len(pp.lines)
    for i, (a, b) in enumerate(zip(pp.lines, pp2.lines, strict=True)):
        assert len(b.control_points) == len(a.control_points)
        assert np.abs(bezier(line_points(pp2, i), T) - bezier(line_points(pp, i), T)).max() <= 1e-9
        assert (b.end.heading, b.end.reverse, b.extras, b.end.extras) == \
            (a.end.heading, a.end.reverse, a.extras, a.end.extras)
        for name in ("start_deg", "end_deg", "degrees"):
            x, y = getattr(a.end, name), getattr(b.end, name)
            assert (x is None and y is None) or y == pytest.approx(x, abs=1e-9)


@pytest.mark.parametrize("path", YAML_PATHS, ids=lambda f: f.stem)
def test_yaml_paths_survive_a_pp_round_trip(path, tmp_path):
    segments = yaml.safe_load(path.read_text())["segments"]
    out = write_pp(tmp_path / f"{path.stem}.pp", segments)
    pp = read_pp(out)
    fp = to_segments(pp)
    assert np.allclose(fp.segments, segments, rtol=0, atol=1e-9)
    assert all(h.mode == "tangential" and not h.reverse for h in fp.headings)
    if path.stem == "straight":
        assert pp.lines[0].control_points == ()  # an elevated line is written as a line


@settings(max_examples=40, deadline=None)
@given(st.lists(point, min_size=4, max_size=4), st.integers(1, 3))
def test_lines_quadratics_and_cubics_are_written_with_the_fewest_points(pts, degree):
    cubic = np.array(pts[:degree] + [pts[-1]], dtype=float)  # a Bézier of this degree ...
    while len(cubic) < 4:  # ... elevated to a cubic
        m = len(cubic)
        i = np.arange(1, m)[:, None] / m
        cubic = np.vstack([cubic[:1], i * cubic[:-1] + (1 - i) * cubic[1:], cubic[-1:]])
    with tempfile.TemporaryDirectory() as d:  # not tmp_path: hypothesis runs the body many times
        pp = read_pp(write_pp(Path(d) / "x.pp", [cubic.tolist()]))
    assert np.allclose(to_segments(pp).segments[0], cubic, rtol=0, atol=1e-9)
    d2 = np.abs(np.diff(cubic, 2, axis=0)).max()  # zero: a line
    d3 = np.abs(np.diff(cubic, 3, axis=0)).max()  # zero: at most a quadratic
    n = len(pp.lines[0].control_points)
    if d2 <= 1e-12:
        assert n == 0
    elif d2 >= 1e-6 and d3 <= 1e-12:
        assert n == 1
    elif d3 >= 1e-6:
        assert n == 2


def test_a_new_file_has_what_the_visualizer_needs(tmp_path):
    segs = [[[0, 0], [10, 0], [20, 10], [30, 10]], [[30, 10], [40, 10], [50, 10], [60, 10]]]
    out = write_pp(tmp_path / "new.pp", segs, start_heading_rad=0.5)
    doc = json.loads(out.read_text())
    assert set(doc) == {"startPoint", "lines", "shapes"}
    assert doc["startPoint"]["heading"] == "linear"
    assert doc["startPoint"]["startDeg"] == pytest.approx(heading_from_field(0.5))
    for i, ln in enumerate(doc["lines"]):
        assert {"id", "name", "color", "endPoint", "controlPoints"} <= set(ln)
        assert ln["endPoint"]["heading"] == "tangential" and ln["endPoint"]["reverse"] is False
        assert len(ln["controlPoints"]) == (2, 0)[i]
    assert [f.name for f in tmp_path.iterdir()] == ["new.pp"]  # atomic: no temp file left


@pytest.mark.parametrize("data, message", [
    ("{not json", r"trajectory\.pp: not a JSON \.pp file"),
    ("[1, 2]", r"trajectory\.pp: top level: expected a JSON object"),
    ({"lines": []}, r"^trajectory\.pp: startPoint: missing$"),
    ({"startPoint": {"x": 1, "y": 2, "heading": "tangential"},
      "lines": [{"endPoint": {"x": 3, "y": 4, "heading": "tangential"}}] * 2 + [{"controlPoints": []}]},
     r"^trajectory\.pp: lines\[2\]\.endPoint: missing$"),
    ({"startPoint": {"x": 1, "y": 2, "heading": "tangential"},
      "lines": [{"endPoint": {"x": 3, "y": 4, "heading": "tangential"}},
                {"endPoint": {"x": 3, "y": 4, "heading": "tangential"},
                 "controlPoints": [{"x": "a", "y": 1}]}]},
     r"^trajectory\.pp: lines\[1\]\.controlPoints\[0\]\.x: 'a' is not a finite number$"),
    ({"startPoint": {"x": True, "y": 2, "heading": "tangential"}, "lines": []},
     r"startPoint\.x: True is not a finite number"),
    ({"startPoint": {"x": 1, "y": 2, "heading": "tangential"},
      "lines": [{"endPoint": {"x": 3, "y": 4, "heading": "spline"}}]},
     r"^trajectory\.pp: lines\[0\]\.endPoint\.heading: 'spline' is not one of linear, constant, tangential$"),
    ({"startPoint": {"x": 1, "y": 2}, "lines": []},
     r"startPoint\.heading: missing; expected one of linear, constant, tangential"),
    ({"startPoint": {"x": 1, "y": 2, "heading": "linear", "startDeg": 90}, "lines": []},
     r"^trajectory\.pp: startPoint\.endDeg: missing$"),
    ({"startPoint": {"x": 1, "y": 2, "heading": "constant", "degrees": 9, "reverse": "yes"}, "lines": []},
     r"startPoint\.reverse: 'yes' is not true or false"),
])
def test_bad_files_name_the_file_and_the_field(tmp_path, data, message):
    with pytest.raises(PathError, match=message) as info:
        read_pp(write(tmp_path, data))
    assert isinstance(info.value, ConfigError)


def test_a_path_with_no_lines_and_a_missing_file_are_errors(tmp_path):
    pp = read_pp(write(tmp_path, {"startPoint": {"x": 1, "y": 2, "heading": "tangential"}}))
    with pytest.raises(PathError, match=r"trajectory\.pp: lines: empty"):
        to_segments(pp)
    with pytest.raises(PathError, match=r"absent\.pp: cannot read"):
        read_pp(tmp_path / "absent.pp")


def test_write_refuses_what_a_pp_cannot_hold(tmp_path):
    seg = [[0, 0], [1, 0], [2, 0], [3, 0]]
    with pytest.raises(PathError, match=r"out\.pp: segments\[1\] starts 1 in from where segments\[0\] ends"):
        write_pp(tmp_path / "out.pp", [seg, [[3, 1], [4, 1], [5, 1], [6, 1]]])
    with pytest.raises(PathError, match=r"four finite \[x, y\]"):
        write_pp(tmp_path / "out.pp", [[[0, 0], [1, 0], [2, 0]]])
    with pytest.raises(PathError, match=r"headings must be 1 SegmentHeading"):
        write_pp(tmp_path / "out.pp", [seg], headings=[SegmentHeading("constant")] * 2)
    with pytest.raises(ConfigError, match=r"mode='spline'"):
        SegmentHeading("spline")
    assert not (tmp_path / "out.pp").exists()
