import json
import os

import numpy as np
import pytest

from core.artifacts import atomic_write_bytes, atomic_write_json, atomic_write_npz


def test_json_converts_numpy(tmp_path):
    p = atomic_write_json(tmp_path / "a.json", {"x": np.float64(1.5), "v": np.arange(3), "t": (1, 2)})
    assert json.loads(p.read_text()) == {"x": 1.5, "v": [0, 1, 2], "t": [1, 2]}


def test_failed_write_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "f.bin"
    atomic_write_bytes(target, b"old")

    def boom(*_):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.bin"]


def test_npz_roundtrip(tmp_path):
    p = atomic_write_npz(tmp_path / "a.npz", {"w": np.eye(3)})
    assert np.array_equal(np.load(p)["w"], np.eye(3))
