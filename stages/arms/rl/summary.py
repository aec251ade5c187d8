"""The RL loop's episodes summed up: success rate, reset time, episodes per hour."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np


def summarize(records: list[dict]) -> dict[str, Any]:
    n = len(records)
    resets = [r["reset_time_s"] for r in records]
    causes = Counter(c for r in records for c in r["reset_failures"])
    out = {
        "episodes": n,
        "policy_success_rate": sum(r["truth"] for r in records) / n,
        "detected_success_rate": sum(r["detected"] for r in records) / n,
        "detector_agreement": sum(r["detected"] == r["truth"] for r in records) / n,
        "detector_false_positives": sum(r["detected"] and not r["truth"] for r in records),
        "detector_false_negatives": sum(r["truth"] and not r["detected"] for r in records),
        "reset_success_rate": sum(r["reset_success"] for r in records) / n,
        "reset_time_mean_s": float(np.mean(resets)), "reset_time_max_s": float(np.max(resets)),
        "reset_failures": sum(not r["reset_success"] for r in records),
    }
    for cause, count in causes.items():
        out[f"failed_attempts_{cause}"] = count
    return out
