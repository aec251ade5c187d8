"""The compiled kernels without a wait: compiled once per machine in a background process, used once
they are on disk.

numba compiles :mod:`~stages.arms.planning.kernels` in ~10 s on a 2-core machine and caches the result
next to the module (``cache=True``); loading it from there takes a fraction of a second. So the first
check in a fresh environment does not wait: :func:`kernels_ready` starts ``python -m
stages.arms.planning.warm_up`` (it compiles every kernel on a tiny model, then writes a marker keyed by
the kernels' source, numba's version and the interpreter) and answers False until that process is done;
checkers made meanwhile check with MuJoCo alone (the same answers, more time). With the marker present,
every checker uses the kernels and numba loads them from its cache. ``CHOREOGRAPH_KERNELS=wait`` makes
the first check compile in the process instead (the tests that need the kernels from the start).
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numba

from stages.arms.planning import kernels

log = logging.getLogger("choreograph.planning")
_lock = threading.Lock()
_state: dict = {"ready": False, "process": None}


def _marker() -> Path | None:
    """The marker file beside numba's cache of the kernels (None when numba has no cache dir)."""
    cache_dir = getattr(getattr(kernels.decide, "_cache", None), "_cache_path", None)
    if cache_dir is None:
        return None
    source = Path(kernels.__file__).read_bytes() + Path(__file__).read_bytes()
    key = hashlib.sha256(source + numba.__version__.encode() + sys.version.encode()).hexdigest()[:16]
    return Path(cache_dir) / f"kernels.{key}.ready"


def preload() -> None:
    """Loads the cached kernels in a daemon thread (~0.2 s, mostly numba's own start), so the first plan
    does not pay it; a no-op until the marker says they are compiled."""
    marker = _marker()
    if marker is not None and marker.exists():
        threading.Thread(target=_exercise, name="kernels-preload", daemon=True).start()


def kernels_ready() -> bool:
    """True when the kernels are compiled and cached (they load in a fraction of a second); else starts
    compiling them in a background process (once) and answers False until it is done."""
    if _state["ready"]:
        return True
    with _lock:
        marker = _marker()
        if marker is not None and marker.exists():
            _state["ready"] = True
        elif os.environ.get("CHOREOGRAPH_KERNELS") == "wait":
            compile_now()
            _state["ready"] = True
        elif marker is not None:
            proc = _state["process"]
            if proc is None:
                _state["process"] = _start(marker)
            elif proc and proc.poll() is not None:
                _state["ready"] = marker.exists()
                if not _state["ready"]:       # it failed: MuJoCo alone from now on, no retry per check
                    _state["process"] = False
        return _state["ready"]


def _start(marker: Path):
    """The background compile, unless another process started one in the last 5 minutes (a sweep's
    jobs share one); False when none is started here (the marker is watched all the same)."""
    lock = marker.with_suffix(".compiling")
    try:
        if lock.exists() and time.time() - lock.stat().st_mtime > 300:
            lock.unlink(missing_ok=True)      # a compile that died
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL))
    except OSError:
        return False
    log.info("compiling the collision checker's kernels in the background (once per machine, ~10 s); "
             "checking with MuJoCo alone until they are ready")
    return subprocess.Popen([sys.executable, "-m", "stages.arms.planning.warm_up", str(lock)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _exercise(all_kernels: bool = False):
    """Runs the kernels the planner uses (and with ``all_kernels`` every one) once on a tiny model: a
    hinge turning a capsule and a box near a wall and over a floor. Returns the bounds built."""
    import mujoco
    import numpy as np

    from stages.arms.planning.bounding_volumes import bounding_box, bounding_capsules
    from stages.arms.planning.bounds import GeomBounds
    from stages.arms.planning.geom_kinematics import GeomKinematics

    model = mujoco.MjModel.from_xml_string("""<mujoco><worldbody>
      <geom type="plane" size="1 1 0.1"/><geom type="box" pos="0.5 0 0.3" size="0.05 0.3 0.3"/>
      <body pos="0 0 0.3"><joint axis="0 0 1"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <geom type="box" pos="0.33 0 0" size="0.02 0.04 0.02"/></body></worldbody></mujoco>""")
    geoms = np.arange(model.ngeom)
    kin = GeomKinematics(model, [0], model.qpos0, geoms)
    pairs = np.array([[0, 2], [0, 3], [1, 2], [1, 3]])
    bounds = GeomBounds(kin, pairs, [bounding_capsules(model, g) for g in geoms],
                        [bounding_box(model, g) for g in geoms], [False, True, True, True])
    q = np.zeros(1)
    bounds.decide(q, 0.005)
    bounds.classify(q[None], 0.005)
    bounds.edge_walk(q, q + 0.5, 8, 0.005, np.ones((len(pairs), 1)))
    if all_kernels:
        bounds.pair_lower_bounds(q[None])
    return bounds


def compile_now() -> None:
    """Compiles (or loads) every kernel by running each once on a tiny model, then writes the marker."""
    _exercise(all_kernels=True)
    marker = _marker()
    if marker is not None:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(f"numba {numba.__version__}\n")


if __name__ == "__main__":
    try:
        compile_now()
    finally:
        for lock in sys.argv[1:]:
            Path(lock).unlink(missing_ok=True)
