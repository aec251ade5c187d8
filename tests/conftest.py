"""Shared fixtures: compose configs the way the CLI does, with outputs in tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("MUJOCO_GL", "egl")
# the compiled checker from the first check on (compiled in the process where the cache is cold), so a
# test's checks and their counts never depend on a background compile's timing (warm_up.py)
os.environ.setdefault("CHOREOGRAPH_KERNELS", "wait")
# this session's own cache (collision matrices): the suite neither reads nor fills the user's
os.environ["CHOREOGRAPH_CACHE_DIR"] = tempfile.mkdtemp(prefix="choreograph_test_cache_")

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"


def scene_yaml(name: str) -> dict:
    """``conf/scene/<name>.yaml`` with its defaults list merged in order (as Hydra composes the group)."""
    from omegaconf import OmegaConf

    raw = OmegaConf.load(CONF / "scene" / f"{name}.yaml")
    parts = []
    for entry in raw.get("defaults", ["_self_"]):
        if entry == "_self_":
            parts.append(OmegaConf.create({k: v for k, v in raw.items() if k != "defaults"}))
        else:
            parts.append(OmegaConf.create(scene_yaml(str(entry))))
    if "_self_" not in raw.get("defaults", ["_self_"]):
        parts.append(OmegaConf.create({k: v for k, v in raw.items() if k != "defaults"}))
    # under `scene`, as composed: its interpolations (``${scene.cell.board_pos}``) resolve
    return OmegaConf.to_container(OmegaConf.create({"scene": OmegaConf.merge(*parts)}), resolve=True)["scene"]


def compose_config(overrides, run_dir: Path):
    """The job's config for ``overrides`` as the CLI composes it, HydraConfig set, outputs in ``run_dir``."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import open_dict, read_write

    from stages.config import register

    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = hydra_compose("choreograph", overrides=[*overrides, f"hydra.run.dir={run_dir}"],
                            return_hydra_config=True)
    with read_write(cfg.hydra.runtime):
        cfg.hydra.runtime.output_dir = str(run_dir)
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        del cfg["hydra"]   # the job's config, as the task function sees it
    return cfg


@pytest.fixture
def compose(tmp_path):
    """compose(overrides) -> DictConfig with HydraConfig set and the run dir in tmp_path."""
    from hydra.core.global_hydra import GlobalHydra

    def _compose(overrides=(), run_dir: Path | None = None):
        return compose_config(overrides, run_dir or tmp_path / "run")

    yield _compose
    GlobalHydra.instance().clear()


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the real CLI (python -m stages) and capture its output."""
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    return subprocess.run([sys.executable, "-m", "stages", *args], cwd=cwd or REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


END_TO_END = {"run_cli", "run_config", "Popen"}   # a whole pipeline through the CLI or the runner


def pytest_collection_modifyitems(items):
    """``slow``: every test that runs a whole pipeline (so ``pytest -m "not slow"`` is a quick loop)."""
    for item in items:
        code = getattr(getattr(item, "function", None), "__code__", None)
        if code is not None and END_TO_END & set(code.co_names):
            item.add_marker(pytest.mark.slow)
