"""`corral explain POD`'s offline parts: the live scheduler's words, and bad input in one line
(the cycle itself over a live cluster is tests/e2e/test_simulate_live.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.cli import main
from corral.cli.explain import live_verdict


@pytest.mark.parametrize(
    ("status", "said"),
    [
        pytest.param({}, "no PodScheduled condition yet (no scheduler has tried it)", id="new"),
        pytest.param({"conditions": [{"type": "Ready", "status": "False"}]},
                     "no PodScheduled condition yet (no scheduler has tried it)", id="other-only"),
        pytest.param({"conditions": [{"type": "PodScheduled", "status": "False",
                                      "reason": "Unschedulable", "message": "0/1 nodes"}]},
                     "False Unschedulable: 0/1 nodes", id="unschedulable"),
        pytest.param({"conditions": [{"type": "PodScheduled", "status": "True"}]}, "True",
                     id="scheduled"),
    ],
)  # fmt: skip
def test_the_live_schedulers_words(status: dict[str, Any], said: str) -> None:
    assert live_verdict({"status": status}) == said


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        pytest.param(["p", "--kubeconfig", "MISSING"], 2, "corral: cannot load credentials: ",
                     id="no-credentials"),
        pytest.param(["p", "--config", "EMPTY"], 1, "EMPTY: contains no document",
                     id="empty-config"),
        pytest.param([], 2, "usage: corral explain", id="no-pod"),
    ],
)  # fmt: skip
def test_bad_explain_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int, message: str
) -> None:
    (tmp_path / "empty.yaml").write_text("")
    names = {"MISSING": str(tmp_path / "missing"), "EMPTY": str(tmp_path / "empty.yaml")}
    argv = [names.get(a, a) for a in argv]
    try:
        got = main(["explain", *argv])
    except SystemExit as exc:  # argparse's own usage error
        got = int(str(exc.code))
    out, err = capsys.readouterr()
    assert (got, out) == (code, "")
    assert err.splitlines()[0].startswith(message.replace("EMPTY", names["EMPTY"])), err
