"""The scheduler: which controllers run this tick, on which segment, toward which goal.

Each tick it

1. **projects** the robot onto the flattened path, searching forward from its current
   segment over a window (so a path that crosses itself, a figure eight, is followed
   in order); the corner arcs of the precompute turn the tangent smoothly and give the
   signed curvature;
2. **switches segments by braking distance**: the look-ahead ``L`` is the robot's
   braking distance at the table's braking rate, ``v²/(2b)``, held within
   ``[lookahead_min_in, lookahead_max_in]``. The goal sits one look-ahead ahead, so the
   *goal segment* (logged) moves onto the next segment exactly when the braking distance
   says the robot can no longer stop short of the current one's end; the projection's
   segment follows as the robot passes each vertex;
3. **reads the precompute**: the speed limit at the projection, read ahead by the
   distance the speed loop lags (``v·τ``), and its slope — no look-ahead search in the loop —
   held below the motors' cruise speed in the path's direction (``speed_cap``: a mecanum
   robot is √2 slower on a diagonal; cruising at full voltage would leave no headroom for
   the corrections);
4. **picks the controllers**: on the path, back-onto-path + along-path + heading; within
   ``end_zone_in`` of the end, end correction + heading; once the robot rests within
   ``end_tolerance_in`` of the end point, nothing — and when nothing is active the
   default :class:`~stages.mecanum.control.controllers.Stop` brings it to a controlled stop.
   End correction comes back if the robot drifts beyond twice the tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from stages.mecanum.control.allocator import AccelRequest
from stages.mecanum.control.controllers import ControllerSet, Guidance
from stages.mecanum.control.settings import SchedulerSettings
from stages.mecanum.paths.heading import SegmentHeading, headings_at, short_turn
from stages.mecanum.paths.precompute import EntrySpeedTable

HeadingFn = Callable[[float], tuple[float, float]]  # s → (heading, d heading / ds)


@dataclass(frozen=True, eq=False)
class Tick:
    requests: list[AccelRequest]
    active: tuple[str, ...]
    mode: str  # "path", "end", "done", "idle"
    guidance: Guidance | None
    goal_segment: int


def tangent_heading(table: EntrySpeedTable) -> HeadingFn:
    """Face along the path (the flattened segment's direction)."""
    ang = np.unwrap(np.arctan2(table.directions[:, 1], table.directions[:, 0]))

    def f(s: float) -> tuple[float, float]:
        i = int(table.segment_at(s))
        return float(ang[i]), 0.0

    return f


def constant_heading(heading_rad: float) -> HeadingFn:
    return lambda s: (float(heading_rad), 0.0)


def segment_heading(table: EntrySpeedTable, source_u: np.ndarray,
                    headings: Sequence[SegmentHeading]) -> HeadingFn:
    """The path's own headings, one per Bézier segment (:mod:`stages.mecanum.paths.heading`),
    on the flattened path: ``source_u`` is each vertex's chain parameter; tangential segments
    face along the flattened segment as :func:`tangent_heading` does, a linear one turns at a
    constant rate over its arc length."""
    ang = np.unwrap(np.arctan2(table.directions[:, 1], table.directions[:, 0]))
    cum = table.cum_length_in
    bounds_s = np.interp(np.arange(len(headings) + 1), source_u, cum)   # each segment's start and end

    def f(s: float) -> tuple[float, float]:
        i = int(table.segment_at(s))
        u = float(np.interp(s, cum, source_u))
        h = float(headings_at(headings, np.array([u]), np.array([ang[i]]))[0])
        k = min(int(u), len(headings) - 1)
        seg = headings[k]
        if seg.mode != "linear":
            return h, 0.0
        return h, short_turn(seg.start_rad, seg.end_rad) / max(float(bounds_s[k + 1] - bounds_s[k]), 1e-9)

    return f


class Scheduler:
    def __init__(self, table: EntrySpeedTable, heading: HeadingFn,
                 settings: SchedulerSettings | None = None, *,
                 controllers: ControllerSet | None = None,
                 speed_cap: Callable[[np.ndarray, float], float] | None = None):
        self.table, self.heading_fn = table, heading
        s = settings or SchedulerSettings()
        c = controllers or ControllerSet()
        self.along, self.back, self.turn, self.end, self.stop = \
            c.along, c.back, c.turn, c.end, c.stop
        self.l_min, self.l_max, self.l_gain = s.lookahead_min_in, s.lookahead_max_in, \
            s.lookahead_gain
        self.window_in, self.end_zone_in = s.window_in, s.end_zone_in
        self.end_tol, self.rest_speed = s.end_tolerance_in, s.rest_speed_in_s
        self.speed_cap = speed_cap  # (field direction, heading) → the motors' cruise speed
        self.brake = min(table.limits.brake_accel_in_s2, table.limits.max_accel_in_s2)
        t = table
        self._pts, self._dirs = np.asarray(t.points_in), np.asarray(t.directions)
        self._len, self._cum = np.asarray(t.lengths_in), np.asarray(t.cum_length_in)
        d = self._dirs
        cross = np.r_[0.0, d[:-1, 0] * d[1:, 1] - d[:-1, 1] * d[1:, 0], 0.0]
        self._turn_sign = np.sign(cross)
        self._theta = np.asarray(t.turn_angles_rad)
        self._tan = np.asarray(t.corner_tangent_in)
        self._kappa = np.asarray(t.corner_curvature_per_in)
        self.segment, self.s_in = 0, 0.0
        self.mode = "path"

    # -- geometry -----------------------------------------------------------------------
    def project(self, p: np.ndarray) -> tuple[int, float, float]:
        """(segment, distance along it, signed cross-track) of the nearest point in the
        forward window from the current segment."""
        i0 = self.segment
        j = int(np.searchsorted(self._cum, self.s_in + self.window_in, side="right"))
        j = min(max(j, i0 + 2), len(self._len))
        a, d, L = self._pts[i0:j], self._dirs[i0:j], self._len[i0:j]
        rel = p[:2] - a
        x = np.clip(np.einsum("ij,ij->i", rel, d), 0.0, L)
        gap = rel - x[:, None] * d
        dist2 = np.einsum("ij,ij->i", gap, gap)
        k = int(np.argmin(dist2))
        i = i0 + k
        dd = d[k]
        e = float(rel[k, 0] * (-dd[1]) + rel[k, 1] * dd[0])  # left normal · (p − a)
        if x[k] < L[k]:  # a point exactly on the segment: the signed distance is exact
            return i, float(x[k]), e
        return i, float(x[k]), math.copysign(math.sqrt(dist2[k]), e if e != 0 else 1.0)

    def frame(self, i: int, x: float) -> tuple[np.ndarray, float]:
        """Tangent and signed curvature at distance x along segment i (on the corner arcs
        the tangent turns linearly with distance, as on the arc itself)."""
        base = math.atan2(self._dirs[i, 1], self._dirs[i, 0])
        rest = self._len[i] - x
        off, kappa = 0.0, 0.0
        if self._tan[i] > 0 and x < self._tan[i]:
            off -= 0.5 * self._theta[i] * (1 - x / self._tan[i]) * self._turn_sign[i]
            kappa = self._kappa[i] * self._turn_sign[i]
        if self._tan[i + 1] > 0 and rest < self._tan[i + 1]:
            off += 0.5 * self._theta[i + 1] * (1 - rest / self._tan[i + 1]) \
                * self._turn_sign[i + 1]
            kappa = self._kappa[i + 1] * self._turn_sign[i + 1]
        a = base + off
        return np.array([math.cos(a), math.sin(a)]), float(kappa)

    def guidance(self, pose: np.ndarray, velocity: np.ndarray) -> Guidance:
        i, x, e = self.project(pose)
        s = float(self._cum[i] + x)
        self.segment, self.s_in = i, s
        tangent, kappa = self.frame(i, x)
        speed = math.hypot(velocity[0], velocity[1])
        brake_dist = speed * speed / (2.0 * self.brake)
        look = min(max(self.l_gain * brake_dist, self.l_min), self.l_max)
        lag = max(float(np.asarray(velocity[:2]) @ tangent), 0.0) * self.along.settings.tau_s
        ds = 0.5
        lim = self.table.speed_limit_at(np.array([s + lag, s + lag + ds]))
        v_lim = float(lim[0])
        if self.speed_cap is not None:
            v_lim = min(v_lim, self.speed_cap(tangent, float(pose[2])))
        slope = float(lim[1] - lim[0]) / ds if s + lag + ds <= self.table.length_in else 0.0
        h, dh = self.heading_fn(s)
        return Guidance(s, float(self._cum[-1] - s), self._pts[i] + x * self._dirs[i], tangent,
                        e, kappa, look, v_lim, slope, h, dh * speed, self._pts[-1], i)

    # -- the tick -----------------------------------------------------------------------
    def tick(self, pose: np.ndarray, velocity: np.ndarray) -> Tick:
        pose, velocity = np.asarray(pose, dtype=float), np.asarray(velocity, dtype=float)
        g = self.guidance(pose, velocity)
        goal_seg = int(self.table.segment_at(g.s_in + g.lookahead_in))
        d_end = math.hypot(*(g.end_point - pose[:2]))
        speed = math.hypot(velocity[0], velocity[1])
        if self.mode == "path" and g.remaining_in <= self.end_zone_in:
            self.mode = "end"
        if self.mode == "end" and d_end <= self.end_tol and speed <= self.rest_speed:
            self.mode = "done"
        elif self.mode == "done" and d_end > 2 * self.end_tol:
            self.mode = "end"
        heading_req = self.turn.request(pose[2], velocity[2], g.heading_target_rad,
                                        g.heading_rate_rad_s)
        if self.mode == "path":
            reqs = [self.back.request(velocity, g), heading_req, self.along.request(velocity, g)]
        elif self.mode == "end":
            reqs = [self.end.request(pose, velocity, g.end_point), heading_req]
        else:
            reqs = []
        if not reqs:
            reqs = [self.stop.request(velocity)]
        return Tick(reqs, tuple(r.name for r in reqs), self.mode, g, goal_seg)
