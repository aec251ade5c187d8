"""A reset sweep read back: attempts, times and landing errors over its runs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from core.errors import ConfigError

FIGURES = ("reset.attempts", "reset.time_s", "landing.true_position_error_m",
           "landing.true_rotation_error_deg", "perception.position_error_m", "perception.rotation_error_deg",
           "grasp.travel_rad", "grasp.first_reachable_travel_rad")


def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def summarize_runs(sweep_dir: Path) -> dict:
    runs = sorted(p for p in Path(sweep_dir).iterdir() if (p / "metrics.json").exists())
    if not runs:
        raise ConfigError(f"pipeline.params.sweep_dir={str(sweep_dir)!r} holds no run folders "
                          "with metrics.json")
    rows = [(p.name, _read(p / "metrics.json"), _read(p / "status.json"),
             _read(p / "reset" / "attempts.json")) for p in runs]
    out: dict = {"runs": len(rows), "success": sum(bool(m.get("reset.success")) for _, m, _, _ in rows)}
    out["success_rate"] = out["success"] / len(rows)
    for key in FIGURES:
        values = [m[key] for _, m, _, _ in rows
                  if isinstance(m.get(key), (int, float)) and np.isfinite(m[key])]
        if values:
            out[f"{key}.median"], out[f"{key}.max"] = float(np.median(values)), float(np.max(values))
            out[f"{key}.mean"] = float(np.mean(values))
    checks = [m["landing.detector_agrees"] for _, m, _, _ in rows if "landing.detector_agrees" in m]
    out["detector_agrees"], out["detector_checks"] = sum(map(bool, checks)), len(checks)
    # the camera said "landed" (within the task's tolerance), the simulator not
    out["false_successes"] = sum(
        1 for _, m, _, _ in rows if m.get("reset.success") and not m.get("landing.detector_agrees", True))
    out["failed_attempts_by_cause"] = dict(Counter(f["cause"] for *_, att in rows
                                                   for f in att.get("failures", [])))
    out["failed_runs"] = [{"run": name, "error": st.get("error", "")[:400]}
                          for name, m, st, _ in rows if not m.get("reset.success")]
    return out
