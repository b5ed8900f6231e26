"""``python -m bench protocol``'s refusals: one line naming the problem, exit 2, no cluster
started."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bench.__main__ import main


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(["--pairs", "0"], "error: --pairs must be at least 1, got 0", id="pairs"),
        pytest.param(["--workload", "Nope"], "error: unknown workload(s) ['Nope']; known: "
                     "SchedulingBasic, ", id="workload"),
        pytest.param(["--pin", "7:0"], "error: --pin: '7:0' names CPU(s) [7]", id="pin"),
    ],
)  # fmt: skip
def test_bad_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["protocol", "--out", str(tmp_path / "run"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message), err
    assert "Traceback" not in err
    assert not (tmp_path / "run" / "results.json").exists()


def test_resume_refuses_a_run_made_another_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    results = out / "results.json"
    results.write_text(json.dumps({"kind": "protocol", "mode": {"full": True}}))
    assert main(["protocol", "--pairs", "1", "--pin", "off", "--out", str(out), "--resume"]) == 2
    assert capsys.readouterr().err.startswith(
        f"error: --resume: {results} was run with {{'full': True}}, not "
    )
    assert main(["protocol", "--pairs", "1", "--pin", "off", "--out", str(out)]) == 2
    assert re.search("exists: pass --resume to continue it, or another --out",
                     capsys.readouterr().err)  # fmt: skip
    results.write_text("{not json")
    assert main(["protocol", "--pin", "off", "--out", str(out), "--resume"]) == 2
    assert capsys.readouterr().err.startswith(f"error: --resume: {results} is not a results file")
