"""ElasticQuota status (scheduler-plugins' controller): transcribed from SP
``pkg/controllers/elasticquota_controller_test.go`` (TestElasticQuotaController_Run: the quotas
and pods SP's fake client holds, each reconciled once; SP's row names as ids; SP's
``MakeResourceList`` amounts are plain numbers, memory in bytes, GPU ``nvidia.com/gpu``). Rows
marked "corral:" are Corral's differences (overhead counted; the oldest of several quotas
written) and its own checks (the write, by value; pods leaving Running)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from corral.controller import elasticquota_status as es
from corral.scheduler.config import quantity

GPU = "nvidia.com/gpu"


def rl(cpu: int | None = None, mem: int | None = None, gpu: int | None = None) -> dict[str, str]:
    """SP's MakeResourceList().CPU().Mem().GPU()."""
    named = (("cpu", cpu), ("memory", mem), (GPU, gpu))
    return {name: str(v) for name, v in named if v is not None}


def quota(namespace: str, name: str, min_: dict[str, str] | None = None,
          max_: dict[str, str] | None = None, created: str = "2026-01-01T00:00:00Z",
          used: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    spec = {k: v for k, v in (("min", min_), ("max", max_)) if v is not None}
    obj: dict[str, Any] = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
                           "metadata": {"namespace": namespace, "name": name,
                                        "creationTimestamp": created}, "spec": spec}  # fmt: skip
    if used is not None:
        obj["status"] = {"used": used}
    return obj


def pod(namespace: str, name: str, phase: str, containers: list[dict[str, str]],
        init: list[dict[str, str]] | None = None,
        overhead: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    spec: dict[str, Any] = {
        "containers": [{"name": f"c{i}", "resources": {"requests": r}}
                       for i, r in enumerate(containers)],
        "initContainers": [{"name": f"i{i}", "resources": {"requests": r}}
                           for i, r in enumerate(init or ())],
    }  # fmt: skip
    if overhead is not None:
        spec["overhead"] = overhead
    return {"metadata": {"namespace": namespace, "name": name, "uid": f"uid-{namespace}-{name}"},
            "spec": spec, "status": {"phase": phase}}  # fmt: skip


def amounts(raw: dict[str, str]) -> dict[str, Fraction]:
    return {k: quantity.parse(v) for k, v in raw.items()}


def reconcile(quotas: list[dict[str, Any]], pods: list[dict[str, Any]]) -> dict[str, Any]:
    """Each quota's status.used as the controller would write it, by namespace/name (quotas not
    written are absent), after the watches delivered ``pods`` in order (a repeated uid is an
    update)."""
    state = es.ElasticQuotas()
    for q in quotas:
        state.on_quota("ADDED", q)
    seen: set[str] = set()
    for p in pods:
        uid = p["metadata"]["uid"]
        state.on_pod("MODIFIED" if uid in seen else "ADDED", p)
        seen.add(uid)
    out: dict[str, Any] = {}
    for namespace in sorted(state.quotas):
        found = state.patch(namespace)
        if found is not None:
            out[f"{namespace}/{found[0]}"] = found[1]["used"]
    return out


@pytest.mark.parametrize(
    ("quotas", "pods", "want"),
    [
        pytest.param(
            [quota("t1-ns1", "t1-eq1", rl(3, 5), rl(5, 15, 1))],
            [
                pod("t1-ns1", "pod1", "Running", [rl(1, 2, 1)]),
                pod("t1-ns1", "pod2", "Pending", [rl(1, 2, 0)]),
            ],
            {"t1-ns1/t1-eq1": rl(1, 2, 1)},
            id="no init Containers pod",
        ),
        pytest.param(
            [quota("t2-ns1", "t2-eq1", rl(3, 5), rl(5, 15))],
            [
                pod("t2-ns1", "pod1", "Running", [rl(1, 2), rl(1, 2)]),  # CPU: 2, Mem: 4
                pod(
                    "t2-ns1", "pod2", "Running", [rl(2, 1), rl(1, 1)], init=[rl(2, 1), rl(2, 3)]
                ),  # CPU: 3, Mem: 3
            ],
            {"t2-ns1/t2-eq1": rl(5, 7)},
            id="have init Containers pod",
        ),
        pytest.param(
            [
                quota("t3-ns1", "t3-eq1", rl(3, 5), rl(5, 15)),
                quota("t3-ns2", "t3-eq2", rl(3, 5), rl(5, 15)),
            ],
            # pod1 is updated (SP's fake client keeps its Running phase): the new request counts.
            [
                pod("t3-ns1", "pod1", "Running", [rl(1, 2, 1), rl(1, 2)]),
                pod("t3-ns1", "pod1", "Running", [rl(2, 1), rl(1, 1)], init=[rl(2, 1), rl(2, 3)]),
                pod("t3-ns2", "pod2", "Running", [rl(3, 1), rl(1, 1)], init=[rl(2, 1), rl(2, 3)]),
            ],
            {"t3-ns1/t3-eq1": rl(3, 3), "t3-ns2/t3-eq2": rl(4, 3)},
            id="update pods",
        ),
        pytest.param(
            [quota("t4-ns1", "t4-eq1", rl(3, 5), rl(5, 15))],
            [],
            {"t4-ns1/t4-eq1": rl(0, 0)},
            id="min and max have the same fields",
        ),
        pytest.param(
            [quota("t5-ns1", "t5-eq1", rl(3, 5, 2), rl(5, 15))],
            [],
            {"t5-ns1/t5-eq1": rl(0, 0, 0)},
            id="min and max have the different fields",
        ),
        pytest.param(
            [
                quota("t6-ns1", "t6-eq1", rl(3, 5, 2), rl(50, 15)),
                quota("t6-ns2", "t6-eq2", rl(3, 5, 2), rl(50, 15)),
            ],
            [pod("t6-ns3", "pod1", "Running", [rl(1, 2, 1), rl(1, 2)])],
            {"t6-ns1/t6-eq1": rl(0, 0, 0), "t6-ns2/t6-eq2": rl(0, 0, 0)},
            id="pod and eq in the different namespaces",
        ),
        pytest.param(
            [quota("ns", "eq", rl(3), rl(5))],
            [pod("ns", "p", "Running", [rl(1, 2)], overhead={"cpu": "250m"})],
            {"ns/eq": {"cpu": "1250m", "memory": "2"}},
            id="corral: the pod's overhead counts, and a resource the quota does not name",
        ),
        pytest.param(
            [
                quota("ns", "newer", rl(3), rl(5), created="2026-02-01T00:00:00Z"),
                quota("ns", "older", rl(3), rl(5), created="2026-01-01T00:00:00Z"),
            ],
            [pod("ns", "p", "Running", [rl(1)])],
            {"ns/older": rl(1)},
            id="corral: of several quotas, the one CapacityScheduling reads is written",
        ),
        pytest.param(
            [quota("ns", "eq", rl(3), rl(5))],
            [
                pod("ns", "p", "Running", [rl(2)]),
                pod("ns", "p", "Succeeded", [rl(2)]),
                pod("ns", "q", "Running", [rl(1)]),
            ],
            {"ns/eq": rl(1)},
            id="corral: a pod that stops running stops counting",
        ),
        pytest.param(
            [quota("ns", "eq", rl(3), rl(5), used={"cpu": "1000m"})],
            [pod("ns", "p", "Running", [rl(1)])],
            {},
            id="corral: no write when the status says the same amounts (1000m is 1)",
        ),
    ],
)
def test_elasticquota_status_used(
    quotas: list[dict[str, Any]], pods: list[dict[str, Any]], want: dict[str, Any]
) -> None:
    got = reconcile(quotas, pods)
    assert {k: amounts(v) for k, v in got.items()} == {k: amounts(v) for k, v in want.items()}
    assert got == want  # and written in that canonical form


def test_a_resource_no_longer_used_nor_named_is_removed_from_the_status() -> None:
    state = es.ElasticQuotas()
    state.on_quota("ADDED", quota("ns", "eq", rl(3), rl(5), used={"cpu": "1", GPU: "2"}))
    assert state.patch("ns") == ("eq", {"used": {"cpu": "0", GPU: None}})


def test_a_deleted_pod_and_a_deleted_quota_are_forgotten() -> None:
    changed: list[str] = []
    state = es.ElasticQuotas(changed.append)
    state.on_quota("ADDED", quota("ns", "eq", rl(3), rl(5)))
    running = pod("ns", "p", "Running", [rl(2)])
    state.on_pod("ADDED", running)
    state.on_pod("DELETED", running)  # the field-selector watch: it left Running
    assert state.requests == {}
    state.on_quota("DELETED", quota("ns", "eq"))
    assert state.quotas == {}
    assert state.patch("ns") is None
    assert changed == ["ns"] * 4


@pytest.mark.parametrize(
    ("name", "amount", "text"),
    [
        pytest.param("cpu", Fraction(3), "3", id="whole cpu"),
        pytest.param("cpu", Fraction(3, 2), "1500m", id="milli cpu"),
        pytest.param("cpu", Fraction(1, 3), "333333334n", id="below a milli: nanos rounded up"),
        pytest.param("memory", Fraction(2**31), "2Gi", id="memory in binary suffixes"),
        pytest.param("memory", Fraction(1000), "1000", id="memory not a whole Ki"),
        pytest.param("hugepages-2Mi", Fraction(2**21), "2Mi", id="hugepages in binary"),
        pytest.param(GPU, Fraction(2000), "2k", id="others in decimal suffixes"),
        pytest.param("cpu", Fraction(0), "0", id="zero"),
    ],
)
def test_canonical(name: str, amount: Fraction, text: str) -> None:
    assert es.canonical(name, amount) == text
    assert es._amounts({name: text})[name] >= amount  # it parses back (nanos round up)


@pytest.mark.parametrize(
    ("plugins", "want"),
    [
        pytest.param({"multiPoint": {"enabled": [{"name": "CapacityScheduling"}]}}, True,
                     id="multiPoint"),
        pytest.param({"preFilter": {"enabled": [{"name": "CapacityScheduling"}]}}, True,
                     id="one extension point"),
        pytest.param({"preFilter": {"disabled": [{"name": "CapacityScheduling"}]}}, False,
                     id="disabled only"),
        pytest.param({"multiPoint": {"enabled": [{"name": "Coscheduling"}]}}, False,
                     id="another plugin"),
        pytest.param("nonsense", False, id="not a map"),
    ],
)  # fmt: skip
def test_enables_capacity_scheduling(plugins: object, want: bool) -> None:
    assert es.enables_capacity_scheduling({"spec": {"plugins": plugins}}) is want
