"""The pod columns' vocabularies under churn: values of pods long gone (a Job's controller-uid,
its job-name, its anti-affinity spec) are dropped once the vocabulary has doubled, and every
snapshot, taken before or after a rebuild, still answers for its own pods."""

from __future__ import annotations

import numpy as np
import pytest

from corral.scheduler.backend.pod_columns import VOCABULARY_SLACK, PodColumns
from corral.scheduler.framework import labels
from corral.scheduler.framework.types import PodInfo
from corral.testing.builders import pod_info

LIVE = 50


def job_pod(i: int, *, namespace: str = "default") -> PodInfo:
    job = f"job-{i // 5}"
    term = {"topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": {"job-name": job}}}  # fmt: skip
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return pod_info(
        f"p{i}",
        namespace=namespace,
        node_name="n1",
        labels={"app": "web", "job-name": job, "controller-uid": f"uid-{i}", f"own-{i}": "x"},
        affinity=anti,
    )


def churn(columns: PodColumns, count: int, *, namespaces: int = 1) -> list[PodInfo]:
    """Add ``count`` pods, keeping the last ``LIVE`` (the older ones are removed)."""
    live: list[PodInfo] = []
    for i in range(count):
        pod = job_pod(i, namespace=f"ns-{i % namespaces}")
        columns.add(pod, 0)
        live.append(pod)
        if len(live) > LIVE:
            columns.remove(live.pop(0).uid)
    return live


@pytest.mark.parametrize(
    ("namespaces", "grows"),
    [
        pytest.param(1, ("label_values", "label_keys", "affinity_specs"), id="jobs"),
        pytest.param(6_000, ("namespaces",), id="a namespace per pod"),
    ],
)
def test_churn_keeps_vocabularies_bounded(namespaces: int, grows: tuple[str, ...]) -> None:
    columns = PodColumns()
    churn(columns, 6_000, namespaces=namespaces)
    sizes = columns.sizes()
    assert sizes["rows"] == LIVE
    assert columns.compactions > 0
    for name in grows:
        # Unbounded, each would be ~6,000 or more (one or more per pod ever seen).
        assert sizes[name] <= 3 * VOCABULARY_SLACK, (name, sizes)


def test_snapshots_keep_their_ids_across_a_rebuild() -> None:
    columns = PodColumns()
    live = churn(columns, VOCABULARY_SLACK // 2)
    before = columns.snapshot()
    compactions = columns.compactions
    churn_more(columns, live, VOCABULARY_SLACK)
    assert columns.compactions > compactions  # rebuilt since ``before`` was taken
    after = columns.snapshot()
    for table in (before, after):
        rows = np.flatnonzero(table.live()).tolist()
        assert len(rows) == LIVE
        source = table.label_source()
        for r in rows:
            info = table.infos[r]
            assert info is not None
            job = labels.from_map({"job-name": info.labels["job-name"]})
            matched = np.flatnonzero(labels.mask(job, source) & table.live()).tolist()
            assert r in matched
            assert {table.infos[m].labels["job-name"] for m in matched} == {  # type: ignore[union-attr]
                info.labels["job-name"]
            }
            assert table.affinity_specs[table.affinity_id[r]] == info.affinity
            assert table.namespace_ids[info.namespace] == table.namespace[r]


def churn_more(columns: PodColumns, live: list[PodInfo], count: int) -> None:
    """Replace the live pods, one for one, ``count`` times (new jobs)."""
    for i in range(10_000, 10_000 + count):
        pod = job_pod(i)
        columns.add(pod, 0)
        live.append(pod)
        columns.remove(live.pop(0).uid)
