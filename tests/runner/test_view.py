"""``choreograph view``: which recordings a folder stands for, the CLI's errors, the web viewer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request

import pytest

from core.errors import RecordingError
from core.recording_read import read_recording
from stages.graph import build_graph, run_graph
from stages.view import find_recordings, free_port, serve_web, stop, web_url
from tests.conftest import REPO, run_cli


def _run(folder):
    assert run_graph(build_graph({"trace": {"_target_": "stages.examples.Trace"}}), folder, seed=0).ok
    return folder


def test_a_run_folder_a_sweep_folder_and_a_file(tmp_path):
    run = _run(tmp_path / "run")
    assert find_recordings(run) == [run / "recording.rrd"]
    assert find_recordings(run / "recording.rrd") == [run / "recording.rrd"]
    sweep = tmp_path / "sweep"
    for job in ("10", "2", "0"):
        _run(sweep / job)
    (sweep / "1").mkdir()   # a job without a recording (record=false, or lost) is skipped
    assert [p.parent.name for p in find_recordings(sweep)] == ["0", "2", "10"]


def test_missing_folder_or_no_recording_is_one_clear_error(tmp_path):
    with pytest.raises(RecordingError, match="no such file or folder"):
        find_recordings(tmp_path / "nope")
    with pytest.raises(RecordingError, match="no recording.rrd in"):
        find_recordings(tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(RecordingError, match="not a Rerun recording"):
        find_recordings(tmp_path / "notes.txt")
    (tmp_path / "recording.rrd").write_text("not one")
    with pytest.raises(RecordingError, match="recording.rrd is not a readable Rerun recording"):
        find_recordings(tmp_path)


def test_a_killed_runs_recording_still_opens(tmp_path):
    """The file is streamed: a process killed mid-run leaves it readable up to its last flush."""
    script = ("import os, signal\nfrom core.rerun_recorder import RerunRecorder\n"
              f"r = RerunRecorder({str(tmp_path / 'recording.rrd')!r})\n"
              "r.series('joints/j1/position', [0.0, 0.008], [0.1, 0.2])\nr.flush()\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, timeout=120)
    assert out.returncode == -signal.SIGKILL
    assert find_recordings(tmp_path) == [tmp_path / "recording.rrd"]
    assert "/joints/j1/position" in read_recording(tmp_path / "recording.rrd").entity_paths


def test_the_cli_says_so_in_one_line_and_exits_1(tmp_path):
    out = run_cli("view", str(tmp_path / "nope"), timeout=120)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert lines == [f"choreograph view: no such file or folder: {tmp_path / 'nope'}"]
    assert "Traceback" not in out.stderr


def test_web_viewer_serves_on_localhost_and_prints_its_url(tmp_path, capsys):
    run = _run(tmp_path / "run")
    web, grpc = free_port(), free_port()
    proc = serve_web(find_recordings(run), web, grpc)
    try:
        url = capsys.readouterr().out.strip()
        assert url == web_url(web, grpc) and url.startswith(f"http://127.0.0.1:{web}/?url=rerun%2Bhttp")
        with urllib.request.urlopen(url, timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read(4096).lower()
    finally:
        stop(proc)
    with pytest.raises(ProcessLookupError):   # the wrapper and the viewer binary are both gone
        os.killpg(proc.pid, 0)
