import json
from pathlib import Path

import numpy as np
import pytest

from core.errors import ConfigError
from stages.mecanum.tuning.ramp_logs import (
    AngularRampLog,
    DriveFitError,
    ForwardRampLog,
    LateralRampLog,
    ramp_log_json,
    read_angular_ramp,
    read_forward_ramp,
    read_ramp_log,
    write_ramp_log,
)
from tests.mecanum.tuning.helpers import angular_log, quasistatic_forward_log

DATA = Path(__file__).resolve().parents[2] / "data" / "roadrunner"

# the keys Road Runner's loggers write (road-runner-ftc Tuning.kt) and its page reads (common.ts)
RR_KEYS = {
    "forward": {"type", "powers", "voltages", "forwardEncPositions", "forwardEncVels", "forwardEncFixVels"},
    "angular": {"type", "leftPowers", "rightPowers", "voltages", "angVels",
                *(f"{side}Enc{what}" for side in ("left", "right", "par", "perp")
                  for what in ("Positions", "Vels", "FixVels"))},
    "lateral": {"type", "frontLeftPower", "backLeftPower", "frontRightPower", "backRightPower", "voltages",
                "perpEncPositions", "perpEncVels", "perpEncFixVels"},
}


@pytest.mark.parametrize(("name", "cls", "keys"), [
    ("sim-drive-encoders-forward-ramp.json", ForwardRampLog, "forward"),
    ("sim-drive-encoders-angular-ramp.json", AngularRampLog, "angular"),
    ("sim-dead-encoders-angular-ramp.json", AngularRampLog, "angular"),
    ("sim-dead-encoders-lateral-ramp.json", LateralRampLog, "lateral"),
])
def test_the_stored_logs_read_and_write_back_in_road_runners_schema(name, cls, keys, tmp_path):
    log = read_ramp_log(DATA / name)
    assert isinstance(log, cls) and log.drive_type == "mecanum"
    raw = json.loads((DATA / name).read_text())
    assert set(raw) == RR_KEYS[keys] == set(ramp_log_json(log))
    again = read_ramp_log(write_ramp_log(tmp_path / name, log))
    assert ramp_log_json(again) == raw  # the same numbers, the same nesting


def test_a_jackson_style_enum_spelling_is_read_and_kept(tmp_path):
    """Road Runner serializes its DriveType enum with Jackson, which may write MECANUM."""
    data = _valid()
    data["type"] = "MECANUM"
    log = read_forward_ramp(_write(data, tmp_path / "upper.json"))
    assert log.drive_type == "MECANUM"


def _write(data, path: Path) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def _valid() -> dict:
    return ramp_log_json(quasistatic_forward_log(1.0, 0.004, n=40))


def _cut(n):
    def edit(d):
        for key in ("powers", "forwardEncPositions", "forwardEncVels"):
            for s in d[key]:
                s["times"], s["values"] = s["times"][:n], s["values"][:n]
        volts = d["voltages"]
        volts["times"], volts["values"] = volts["times"][:n], volts["values"][:n]
    return edit


def _still(d):
    for key in ("forwardEncPositions", "forwardEncVels"):
        for s in d[key]:
            s["values"] = [0.0] * len(s["values"])


BAD = {
    "not JSON": ("{\"type\": \"mecanum\", \"powers\": [", r"not JSON"),
    "not an object": ("[1, 2, 3]", r"a ramp log is a JSON object"),
    "missing voltages": (lambda d: d.pop("voltages"), r"missing field 'voltages'"),
    "missing encoder velocities": (lambda d: d.pop("forwardEncVels"), r"missing field 'forwardEncVels'"),
    "unknown drive": (lambda d: d.update(type="omni"),
                      r"field 'type' is 'omni'; allowed: \['mecanum', 'tank'\]"),
    "a signal without times": (lambda d: d["voltages"].pop("times"), r"'voltages' must be a signal"),
    "a string among the values": (lambda d: d["powers"][2]["values"].__setitem__(3, "0.1"),
                                  r"'powers\[2\]\.values' must hold finite numbers only"),
    "times and values differ": (lambda d: d["voltages"]["values"].pop(),
                                r"'voltages' has 40 times but 39 values"),
    "encoders listed unevenly": (lambda d: d["forwardEncVels"].pop(), r"must list the same encoders"),
    "too few samples": (_cut(5), r"has 5 samples; a ramp fit needs at least 10"),
    "one signal short": (lambda d: [d["voltages"][k].pop() for k in ("times", "values")],
                         r"'voltages' has 39 samples but .* has 40; every signal has one per loop"),
    "the robot never moves": (_still,
                              r"the power ramp never moves the robot: the fastest encoder reads 0 ticks/s"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_each_bad_log_says_which_file_and_field(case, tmp_path):
    edit, message = BAD[case]
    path = tmp_path / "forward-ramp-1700000000000.json"
    if isinstance(edit, str):
        _write(edit, path)
    else:
        data = _valid()
        edit(data)
        _write(data, path)
    with pytest.raises(DriveFitError, match=message) as info:
        read_forward_ramp(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, ConfigError)


def test_an_unknown_log_and_a_missing_file(tmp_path):
    with pytest.raises(DriveFitError, match="not a Road Runner ramp log"):
        read_ramp_log(_write({"type": "mecanum", "voltages": {}}, tmp_path / "x.json"))
    with pytest.raises(DriveFitError, match="cannot read the ramp log"):
        read_ramp_log(tmp_path / "absent.json")


def test_an_angular_ramp_without_encoders_must_turn_on_its_imu(tmp_path):
    turning = angular_log((np.zeros(40), np.zeros(40), np.linspace(0, 2, 40)))
    assert isinstance(read_angular_ramp(write_ramp_log(tmp_path / "a.json", turning)), AngularRampLog)
    still = angular_log((np.zeros(40), np.zeros(40), np.full(40, 0.01)))
    with pytest.raises(DriveFitError, match=r"never turns the robot: field 'angVels\[2\]'"):
        read_angular_ramp(write_ramp_log(tmp_path / "b.json", still))
    data = ramp_log_json(turning)
    data["angVels"].pop()
    with pytest.raises(DriveFitError, match="'angVels' holds 2 signals; needs 3"):
        read_angular_ramp(_write(data, tmp_path / "c.json"))


def test_missing_fix_flags_default_to_true_as_on_the_page(tmp_path):
    data = _valid()
    del data["forwardEncFixVels"]
    log = read_forward_ramp(_write(data, tmp_path / "f.json"))
    assert all(e.fix_velocities for e in log.forward_encoders)
