"""``choreograph view RUN_DIR | SWEEP_DIR | FILE.rrd``: open recordings in Rerun's viewer.

The native viewer where a display exists; ``--web`` (or no display) serves the web viewer on
localhost and prints its URL. A sweep folder opens its jobs side by side: one recording (written
to a temporary file) with each job's entities under ``job<n>/`` and one column per job, all on one
``time`` timeline; ``--separate`` opens every job's ``recording.rrd`` as its own recording instead.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from core.errors import RecordingError
from core.recording import RECORDING_FILE

USAGE = "choreograph view RUN_DIR|SWEEP_DIR|FILE.rrd [--web] [--port N] [--grpc-port N]"


def find_recordings(target: Path | str) -> list[Path]:
    """The recordings a path stands for: the file itself, a run folder's ``recording.rrd``, or every
    job's in a sweep folder (``<sweep>/<job>/recording.rrd``, in job order)."""
    target = Path(target)
    if not target.exists():
        raise RecordingError(f"no such file or folder: {target}")
    if target.is_file():
        if target.suffix != ".rrd":
            raise RecordingError(f"{target} is not a Rerun recording (.rrd)")
        return [_readable(target)]
    own = target / RECORDING_FILE
    if own.is_file():
        return [_readable(own)]
    jobs = sorted(target.glob(f"*/{RECORDING_FILE}"),
                  key=lambda p: (not p.parent.name.isdigit(), int(p.parent.name) if p.parent.name.isdigit()
                                 else 0, p.parent.name))
    if jobs:
        return [_readable(p) for p in jobs]
    raise RecordingError(f"no {RECORDING_FILE} in {target} nor in its job folders "
                         "(was it run with record=false, or before recordings existed?)")


def _readable(path: Path) -> Path:
    """``path`` if Rerun's reader finds a recording in it (a run killed mid-way leaves a file without
    a footer: still readable up to its last flush)."""
    import warnings

    from rerun.chunk import RrdReader

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # "no footer": a run that was killed; it still opens
            found = RrdReader(path).recordings()
    except Exception as exc:  # noqa: BLE001 - Rerun's reader errors are not typed
        raise RecordingError(f"{path} is not a readable Rerun recording: {exc}") from None
    if not found:
        raise RecordingError(f"{path} holds no recording")
    return path


def has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def web_url(web_port: int, grpc_port: int) -> str:
    return f"http://127.0.0.1:{web_port}/?url={quote(f'rerun+http://127.0.0.1:{grpc_port}/proxy', safe='')}"


def _rerun(*args: str) -> list[str]:
    return [sys.executable, "-m", "rerun", *args]


def _wait_for_port(port: int, proc: subprocess.Popen, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.1)
    return False


def serve_web(files: list[Path], web_port: int, grpc_port: int, out=None,
              timeout_s: float = 60.0) -> subprocess.Popen:
    """Start Rerun's web viewer for ``files`` on localhost; returns the server once it listens."""
    log = tempfile.TemporaryFile(mode="w+")   # the server's own log (not a pipe: it could fill)
    proc = subprocess.Popen(
        _rerun("--serve-web", "--bind", "127.0.0.1", "--web-viewer-port", str(web_port),
               "--port", str(grpc_port), *map(str, files)),
        stdout=subprocess.DEVNULL, stderr=log, text=True,
        start_new_session=True)   # its own process group: stop() ends the wrapper and the viewer binary
    if not _wait_for_port(web_port, proc, timeout_s):
        stop(proc)
        log.seek(0)
        err = [line for line in log.read().strip().splitlines() if line.strip()]
        raise RecordingError(f"the web viewer did not start on port {web_port}"
                             + (f": {err[-1]}" if err else ""))
    print(web_url(web_port, grpc_port), file=out or sys.stdout, flush=True)
    return proc


def view(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="choreograph view", usage=USAGE,
        description="Open a run's (or a sweep's) recording.rrd in Rerun's viewer.")
    parser.add_argument("path", help="a run folder, a sweep folder, or an .rrd file")
    parser.add_argument("--web", action="store_true",
                        help="serve the web viewer on localhost and print its URL")
    parser.add_argument("--port", type=int, default=None,
                        help="the web viewer's HTTP port (default: a free one)")
    parser.add_argument("--grpc-port", type=int, default=None,
                        help="the data server's port (default: a free one)")
    parser.add_argument("--separate", action="store_true",
                        help="a sweep's jobs as separate recordings, not side by side")
    args = parser.parse_args(argv)
    files = find_recordings(args.path)
    with tempfile.TemporaryDirectory(prefix="choreograph_view_") as scratch:
        if len(files) > 1 and not args.separate:
            files = [side_by_side(files, Path(scratch) / "side_by_side.rrd", Path(args.path).name)]
        return _open(files, args)


def side_by_side(files: list[Path], out: Path, sweep_name: str) -> Path:
    """A sweep's job recordings merged into one, one column per job (``job<folder>/...``)."""
    from core.recording_merge import merge_side_by_side
    from stages.arms.recording.layout import ARM_VIEWS
    from stages.mecanum.recording import MECANUM_VIEWS

    jobs = {f"job{p.parent.name}": p for p in files}
    return merge_side_by_side(jobs, out, (*ARM_VIEWS, *MECANUM_VIEWS), name=f"sweep {sweep_name}")


def _open(files: list[Path], args) -> int:
    if not args.web and not has_display():
        print("choreograph view: no display; serving the web viewer instead (--web)", file=sys.stderr)
        args.web = True
    if not args.web:
        return subprocess.call(_rerun(*map(str, files)))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # stop the server with us
    proc = serve_web(files, args.port or free_port(), args.grpc_port or free_port())
    print(f"choreograph view: {len(files)} recording(s); open the URL above in a browser, Ctrl-C to stop",
          file=sys.stderr, flush=True)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop(proc)


def stop(proc: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """End a viewer server started by :func:`serve_web` and wait until it is gone: its whole process
    group (``python -m rerun`` runs the viewer binary as a child), SIGTERM, then SIGKILL."""
    _signal_group(proc, signal.SIGTERM)
    if not _group_gone(proc, timeout_s):
        _signal_group(proc, signal.SIGKILL)
        _group_gone(proc, timeout_s)
    proc.wait()


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def _group_gone(proc: subprocess.Popen, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        proc.poll()   # reap the wrapper (our child); init reaps the binary
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def main(argv: list[str]) -> int:
    """``choreograph view ...``: one clear line on stderr and exit 1 on any error."""
    try:
        return view(argv)
    except RecordingError as exc:
        print(f"choreograph view: {exc}", file=sys.stderr)
        return 1
