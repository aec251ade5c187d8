"""VAMP peer benchmark: time VAMP (OMPL + SIMD sphere collision checking) on a joint-space problem.

Runs in its own venv with the `fetch-planning` wheel (see README.md); imports nothing of choreograph.
The wheel's `_ompl_vamp` extension has VAMP's spherized Fetch compiled in; obstacles can only be
spheres or a point cloud (VAMP's CAPT), so each box is sampled on its surface as a point cloud.
"""
import argparse
import json
import math
import os
import platform
import re
import statistics
import sys
import time
from dataclasses import fields
from importlib.metadata import version

import fetch_planning
import numpy as np
from fetch_planning._ompl_vamp import KinodynamicSettings, OmplVampPlanner
from fetch_planning.fetch import (
    BASE_MAX_ACCELERATION,
    BASE_MAX_SPEED,
    BASE_MAX_YAW_ACCELERATION,
    BASE_MAX_YAW_RATE,
    BASE_REVERSE_ENABLE,
    HOME_JOINTS,
    JOINT_ACCELERATION_LIMITS,
    JOINT_VELOCITY_LIMITS,
    fetch_robot_config,
)
from fetch_planning.types import KinodynamicConfig

FULL_NAMES = fetch_robot_config.joint_names  # 11 DOF: base x, y, theta, torso, 7 arm joints


def box_points(center, half, quat_wxyz, spacing):
    """Grid points on the surface of a box (world frame)."""
    half = np.asarray(half, float)
    axes = [np.linspace(-h, h, max(2, int(math.ceil(2 * h / spacing)) + 1)) for h in half]
    pts = []
    for k in range(3):  # the two faces normal to axis k
        i, j = [a for a in range(3) if a != k]
        u, v = np.meshgrid(axes[i], axes[j], indexing="ij")
        for sign in (-1.0, 1.0):
            face = np.zeros((u.size, 3))
            face[:, i], face[:, j], face[:, k] = u.ravel(), v.ravel(), sign * half[k]
            pts.append(face)
    pts = np.unique(np.round(np.concatenate(pts), 9), axis=0)
    w, x, y, z = quat_wxyz
    rot = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    return pts @ rot.T + np.asarray(center, float)


def model_spheres():
    """Collision spheres of the bundled spherized URDF (VAMP's Fetch model is generated from it)."""
    path = os.path.join(os.path.dirname(fetch_planning.__file__),
                        "resources/robot/fetch/fetch_spherized.urdf")
    with open(path) as f:
        radii = [float(r) for r in re.findall(r'<sphere radius="([^"]+)"', f.read())]
    return sum(r > 1e-3 for r in radii)  # one 0.1 mm placeholder sphere is not a collision sphere


class Quiet:
    """Send OMPL's console log (written to fd 1 from C++) to /dev/null while planning."""

    def __enter__(self):
        sys.stdout.flush()
        self.saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)

    def __exit__(self, *exc):
        os.dup2(self.saved, 1)
        os.close(self.saved)


def cpu_name():
    try:
        return next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                    if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.machine()


def path_length(path):
    p = np.asarray(path, float)
    return float(np.linalg.norm(np.diff(p, axis=0), axis=1).sum()) if len(p) > 1 else 0.0


def stats(times_ms, ok, lengths):
    t = sorted(times_ms)
    return {"median_ms": statistics.median(t), "p10_ms": float(np.percentile(t, 10)),
            "p90_ms": float(np.percentile(t, 90)),
            "min_ms": t[0], "max_ms": t[-1], "success_rate": sum(ok) / len(ok),
            "path_length_rad_median": statistics.median(lengths) if lengths else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", required=True)
    ap.add_argument("--seeds", type=int, default=None, help="repetitions (default: the problem's, else 20)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--planner", default="rrtc", help="OMPL planner name (rrtc = RRTConnect)")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--no-simplify", action="store_true", help="skip OMPL's simplifySolution")
    ap.add_argument("--flask", action="store_true",
                    help="also time plan_kinodynamic (FLASK, VAMP-side, no OMPL)")
    args = ap.parse_args()

    prob = json.load(open(args.problem))
    n = args.seeds or prob.get("seeds", 20)
    names = prob["joint_names"]
    active = [FULL_NAMES.index(j) for j in names]
    frozen = HOME_JOINTS.copy()
    for j, v in prob.get("fixed", {}).items():
        frozen[FULL_NAMES.index(j)] = v
    start, goal = list(map(float, prob["start"])), list(map(float, prob["goal"]))

    planner = OmplVampPlanner(active, frozen.tolist(), 0, 0.2, False)  # base_dim 0: arm-only R^n space
    spacing, pr = prob.get("point_spacing_m", 0.01), prob.get("point_radius_m", 0.0075)
    cloud = np.concatenate([box_points(b["center"], b["half_sizes"], b.get("quat_wxyz", [1, 0, 0, 0]),
                                       spacing)
                            for b in prob.get("boxes", [])] or [np.zeros((0, 3))])
    if len(cloud):
        planner.add_pointcloud(cloud.astype(np.float32).tolist(), *planner.min_max_radii(), pr)
    for name, q in (("start", start), ("goal", goal)):
        if not planner.validate(q):
            raise SystemExit(f"{name} configuration is in collision in the peer's model")
    straight = planner.validate_batch(np.linspace(start, goal, 200).tolist())

    simplify = not args.no_simplify
    quiet = Quiet()
    with quiet:
        planner.plan(start, goal, args.planner, args.time_limit, simplify, False)  # warm-up, not counted
    runs = []
    for _ in range(n):
        with quiet:
            t0 = time.perf_counter()
            r = planner.plan(start, goal, args.planner, args.time_limit, simplify, False)
            wall = (time.perf_counter() - t0) * 1e3
        path = [list(q) for q in r.path]
        dense = planner.interpolate_path(path, 0, 64.0) if r.solved else []  # 1/64 rad apart, untimed
        valid = bool(r.solved and all(planner.validate_batch(dense))
                     and np.allclose(path[0], start) and np.allclose(path[-1], goal))
        runs.append({"wall_ms": wall, "solve_ms": r.planning_time_ns / 1e6, "solved": bool(r.solved),
                     "valid": valid, "length_rad": path_length(path), "waypoints": len(path), "path": path})
    ok = [x["solved"] and x["valid"] for x in runs]
    lengths = [x["length_rad"] for x in runs if x["solved"] and x["valid"]]
    result = {
        "problem": os.path.abspath(args.problem),
        "peer": f"fetch-planning {version('fetch-planning')} (_ompl_vamp: OMPL + VAMP)",
        "machine": {"python": platform.python_version(), "cpu": cpu_name(), "cores": os.cpu_count()},
        "robot_model": "VAMP FetchWholeBody (11 DOF, spherized), planned joints " + ", ".join(names),
        "frozen": dict(zip(FULL_NAMES, frozen.tolist(), strict=True)),
        "collision": {"robot_spheres": model_spheres(), "sphere_radii_min_max_m": planner.min_max_radii(),
                      "obstacles": f"{len(prob.get('boxes', []))} box(es) as {len(cloud)} surface points "
                                   f"(spacing {spacing} m, point radius {pr} m, VAMP CAPT)",
                      "straight_line_valid": bool(all(straight))},
        "planner": {"name": args.planner, "simplify": simplify, "interpolate": False,
                    "time_limit_s": args.time_limit, "runs": n, "warmup_runs": 1},
        "joint_distance_rad": float(np.linalg.norm(np.subtract(goal, start))),
        "ompl": {"wall": stats([x["wall_ms"] for x in runs], ok, lengths),
                 "reported_solve": stats([x["solve_ms"] for x in runs], ok, lengths),
                 "runs": [{k: v for k, v in x.items() if k != "path"} for x in runs]},
        "paths": [x["path"] for x in runs],
    }
    if args.flask:
        cfg, s = KinodynamicConfig(simplify=simplify), KinodynamicSettings()  # the library's defaults
        for f in fields(cfg):
            if hasattr(s, f.name) and getattr(cfg, f.name) is not None:
                setattr(s, f.name, getattr(cfg, f.name))
        s.allow_reverse = BASE_REVERSE_ENABLE  # base limits: unused with the base frozen
        s.base_max_speed, s.base_max_acceleration = BASE_MAX_SPEED, BASE_MAX_ACCELERATION
        s.base_max_yaw_rate, s.base_max_yaw_acceleration = BASE_MAX_YAW_RATE, BASE_MAX_YAW_ACCELERATION
        s.max_velocity = [JOINT_VELOCITY_LIMITS[j] for j in names]
        s.max_acceleration = [JOINT_ACCELERATION_LIMITS[j] for j in names]
        fr = []
        for i in range(n + 1):  # the first run is a warm-up
            with quiet:
                t0 = time.perf_counter()
                k = planner.plan_kinodynamic(start, [], goal, args.time_limit, s)
                wall = (time.perf_counter() - t0) * 1e3
            pos = np.asarray(k.trajectory.sample_uniform(0.002)[1]) if k.solved else np.zeros((0, len(start)))
            good = bool(k.solved and all(planner.validate_batch(pos.tolist())))
            if i:
                fr.append((wall, k.planning_time_ns / 1e6, good, path_length(pos),
                           k.trajectory.duration if good else 0))
        fok = [x[2] for x in fr]
        lens = [x[3] for x in fr if x[2]]
        result["flask"] = {"wall": stats([x[0] for x in fr], fok, lens),
                           "reported": stats([x[1] for x in fr], fok, lens),
                           "trajectory_duration_s_median":
                               statistics.median([x[4] for x in fr if x[2]] or [0])}
    summary = {k: result[k] for k in ("robot_model", "collision", "planner", "joint_distance_rad")}
    summary["ompl_wall"] = result["ompl"]["wall"]
    summary["ompl_reported_solve"] = result["ompl"]["reported_solve"]
    if "flask" in result:
        summary["flask"] = result["flask"]
    print(json.dumps(summary, indent=1))
    if args.out:
        json.dump(result, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
