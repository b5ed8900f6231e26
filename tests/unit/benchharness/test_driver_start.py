"""A control plane that fails to start costs a benchmark run at most, never the whole protocol:
the harness starts it once more, then reports the run as failed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bench import driver
from bench.workloads import workloads

from corral.testing.processes import ProcessError

BUSY = ProcessError("while waiting for kube-apiserver /readyz: kube-apiserver exited; ...")


@pytest.mark.parametrize(
    ("failures", "started"),
    [
        pytest.param(0, True, id="first start"),
        pytest.param(1, True, id="started again once"),
        pytest.param(2, False, id="two failures: no cluster"),
    ],
)
def test_start_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: int, started: bool
) -> None:
    calls: list[Path] = []

    def up(
        directory: Path, *, lean: bool, apiserver_profiling: bool, feature_gates: Any = None
    ) -> Any:
        assert not apiserver_profiling  # only --apiserver-pprof asks for it
        calls.append(directory)
        if len(calls) <= failures:
            raise BUSY
        return "cluster"

    monkeypatch.setattr(driver.LocalCluster, "up", up)
    said: list[str] = []
    got = driver._start_cluster(tmp_path, lean=True, say=said.append)
    assert got == ("cluster" if started else None)
    assert len(calls) == min(failures + 1, driver.CLUSTER_START_ATTEMPTS)
    assert len(set(calls)) == len(calls)  # each attempt in a directory of its own
    assert said == [
        f"  control plane start {i} of 2 failed: while waiting for kube-apiserver /readyz: "
        "kube-apiserver exited; ..."
        for i in range(1, min(failures, 2) + 1)
    ]


def test_a_run_whose_cluster_never_started_is_a_failed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(driver, "_start_cluster", lambda directory, **_: None)
    workload = workloads(full=False)["SchedulingBasic"]
    result = driver.run_one(
        workload, "corral", driver.SchedulerConfig(), order=0, repetition=0, say=lambda _: None
    )
    assert not result.complete
    assert result.error == "the control plane did not start (twice); see the log above"
