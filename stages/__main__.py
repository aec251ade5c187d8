"""The choreograph command: compose the config, check the graph, run it.

``choreograph`` and ``python -m stages`` are the same entry point.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import warnings
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from core.artifacts import atomic_write_text
from core.errors import ChoreographError
from core.targets import check_targets
from stages.config import register
from stages.graph import RunRecord, build_graph, run_graph, write_run_files

register()
log = logging.getLogger("choreograph")
# conf/hydra/launcher/{ray,submitit_local}.yaml shadow the plugins' configs of the same name with the
# same keys (and choreograph's launcher classes); Hydra 1.3 merges them and warns on every compose.
warnings.filterwarnings("ignore", message=r"\s*'hydra/launcher/\w+' is validated against ConfigStore schema")


def run_config(cfg: DictConfig, run_dir: Path) -> RunRecord:
    """Resolve the config once (``${now:}`` included), build the graph and run it.

    A config that cannot be resolved or a graph that does not check is a failed run
    like any other: status.json says why, and no stage runs.
    """
    t0 = time.perf_counter()
    try:
        plain = OmegaConf.to_container(cfg, resolve=True)
        check_targets(plain)
        graph = build_graph(plain["pipeline"]["stages"])
    except Exception as exc:  # noqa: BLE001 - recorded in status.json
        kind = type(exc).__name__ if isinstance(exc, ChoreographError) else "ConfigError"
        error = f"{kind}: {exc}"
        log.error("config failed: %s", error)
        run_dir.mkdir(parents=True, exist_ok=True)
        seconds = round(time.perf_counter() - t0, 3)
        write_run_files(run_dir, {}, None, error, seconds)
        return RunRecord("failed", None, error, seconds, {}, {})
    name = f"{plain['pipeline'].get('name', 'run')} {run_dir.name}"
    return run_graph(graph, run_dir, int(plain["seed"]), record=bool(plain.get("record", True)), name=name)


CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="choreograph")
def _hydra_main(cfg: DictConfig) -> str:
    hc = HydraConfig.get()
    run_dir = Path(hc.runtime.output_dir)
    _set_console_level(str(cfg.runner.log_level.value))
    _make_replayable(run_dir / hc.output_subdir / "config.yaml")
    try:
        record = run_config(cfg, run_dir)
    except KeyboardInterrupt:
        print(f"choreograph: interrupted; every arm was cancelled (status in {run_dir / 'status.json'})",
              file=sys.stderr)
        sys.exit(130)
    if record.ok:
        print(f"choreograph: ok — {run_dir}", file=sys.stderr)
        return "ok"
    print(f"choreograph: failed at {record.failed_stage or 'config'}: {record.error} "
          f"(details in {run_dir / 'run.log'})", file=sys.stderr)
    if hc.mode != RunMode.MULTIRUN:
        sys.exit(1)
    return "failed"


REPLAY_HEADER = """\
# Re-run this exact config: choreograph --config-dir <this folder> --config-name config
defaults:
  - choreograph_schema
  - _self_
  - override hydra/job_logging: choreograph
  - override hydra/hydra_logging: none
hydra:
  run:
    dir: runs/${pipeline.name}/${now:%Y-%m-%d_%H-%M-%S}
  job:
    chdir: false
"""


def _make_replayable(saved: Path) -> None:
    """Give the saved config the defaults Hydra consumed, so it re-runs on its own."""
    text = saved.read_text()
    if not text.startswith(REPLAY_HEADER):
        atomic_write_text(saved, REPLAY_HEADER + text)


def _set_console_level(level: str) -> None:
    for handler in logging.getLogger().handlers:
        if type(handler) is logging.StreamHandler:
            handler.setLevel(level)


def pp_file_arguments(argv: list[str]) -> list[str]:
    """``path=<file>.pp`` (Pedro Pathing files on disk, a comma list sweeps them) becomes
    ``path=pp path.file=<absolute file>``: to Hydra ``path=`` names a config group option, and the
    run's saved config must find the file again from anywhere."""
    out = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        files = value.split(",")
        if sep and key == "path" and all(f.endswith(".pp") for f in files):
            out += ["path=pp", "path.file=" + ",".join(str(Path(f).expanduser().resolve()) for f in files)]
        else:
            out.append(arg)
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "view":   # `choreograph view RUN_DIR`: not a Hydra run
        from stages.view import main as view_main

        sys.exit(view_main(sys.argv[2:]))
    os.environ.setdefault("HYDRA_FULL_ERROR", "0")
    sys.argv[1:] = pp_file_arguments(sys.argv[1:])
    _hydra_main()


if __name__ == "__main__":
    main()
