"""The soak's verdict (growth between the run's sixth and its end, medians of a window each
side, 5% for the process, 5% plus a few entries for structures) and its churn's objects."""

from __future__ import annotations

import random
from typing import Any

import pytest
from bench import soak_report, soak_workload


def samples(key: str, values: dict[float, float]) -> list[dict[str, Any]]:
    base = {"rss_mib": 100.0, "threads": 30, "open_files": 60}
    return [{"minute": m, **base, key: v} for m, v in values.items()]


@pytest.mark.parametrize(
    ("key", "values", "flat"),
    [
        pytest.param("rss_mib", {9: 100, 10: 100, 11: 100, 59: 104, 60: 104}, True,
                     id="rss within 5%"),
        pytest.param("rss_mib", {9: 100, 10: 100, 11: 100, 59: 106, 60: 106}, False,
                     id="rss past 5%"),
        pytest.param("rss_mib", {10: 100, 58: 100, 59: 100, 60: 140}, True,
                     id="one sample's jump is not the end's median"),
        pytest.param("cache.pods.label_values", {10: 1000, 60: 1070}, True,
                     id="a structure within 5% plus slack"),
        pytest.param("cache.pods.label_values", {10: 1000, 60: 5000}, False,
                     id="a structure growing with the churn"),
        pytest.param("queue.active", {10: 0, 60: 20}, True, id="a queue moving by a few pods"),
        pytest.param("threads", {10: 30, 60: 32}, False, id="threads past 5%"),
    ],
)  # fmt: skip
def test_flat_or_not(key: str, values: dict[float, float], flat: bool) -> None:
    summary = soak_report.summarize(samples(key, values), 60, rate=50)
    assert summary["figures"][key]["flat"] is flat
    assert summary["flat"] is flat
    assert summary["window"] == [10, 60]


def test_the_table_lists_every_figure() -> None:
    summary = soak_report.summarize(samples("events.series", {10: 5, 60: 5}), 60, rate=50)
    table = soak_report.table(summary)
    assert table.splitlines()[0] == "| figure | minute 10 | minute 60 | growth | flat |"
    assert "| events.series | 5.0 | 5.0 | +0.0% | yes |" in table


def test_jobs_are_labelled_as_the_job_controller_labels_them() -> None:
    rng = random.Random(1)
    jobs = [soak_workload.job(rng, "ns", "s", 0.0) for _ in range(200)]
    assert {j.kind for j in jobs} == {k for k, _ in soak_workload.KINDS}
    for job in jobs:
        assert len(job.pods) == soak_workload.JOB_PODS
        assert soak_workload.LIFETIME[0] <= job.expires <= soak_workload.LIFETIME[1]
        uids = {p["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] for p in job.pods}
        assert len(uids) == soak_workload.JOB_PODS  # a value of its own per pod
        kinds = [o["kind"] for o in job.objects]
        if job.kind == "volume":
            assert kinds == ["PersistentVolume", "PersistentVolumeClaim", "Pod"] * 5
        else:
            assert kinds == ["Pod"] * 5
