"""Guards between profiles: schedulerName claims and node-pool overlap."""

from __future__ import annotations

from typing import Any

import pytest

from corral.controller import guards


def body(name: str, created: str, sched: str | None = None, pool: Any = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if sched:
        spec["schedulerName"] = sched
    if pool is not None:
        spec["tenancy"] = {"nodeSelector": pool}
    return {"metadata": {"name": name, "creationTimestamp": created}, "spec": spec}


A = guards.claim_of(body("a", "2026-01-01T00:00:00Z", "s"))
B = guards.claim_of(body("b", "2026-01-02T00:00:00Z", "s"))
C = guards.claim_of(body("c", "2026-01-01T00:00:00Z"))


@pytest.mark.parametrize(
    ("claim", "holder"),
    [
        pytest.param(B, "a", id="later claim is refused"),
        pytest.param(A, None, id="earlier claim keeps the name"),
        pytest.param(C, None, id="default schedulerName is the profile name"),
    ],
)
def test_name_holder(claim: guards.Claim, holder: str | None) -> None:
    assert guards.name_holder(claim, [A, B, C]) == holder


def test_same_timestamp_breaks_ties_by_name() -> None:
    x = guards.claim_of(body("x", "2026-01-01T00:00:00Z", "s"))
    y = guards.claim_of(body("y", "2026-01-01T00:00:00Z", "s"))
    assert guards.name_holder(y, [x, y]) == "x"
    assert guards.name_holder(x, [x, y]) is None


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        pytest.param({"pool": "a"}, {"pool": "a"}, True, id="same pool"),
        pytest.param({"pool": "a"}, {"pool": "a", "zone": "1"}, True, id="narrower pool"),
        pytest.param({"pool": "a"}, {"zone": "1"}, True, id="disjoint keys can match one node"),
        pytest.param({"pool": "a"}, {"pool": "b"}, False, id="different values"),
        pytest.param({}, {"pool": "a"}, False, id="no selector is the ordinary case"),
    ],
)
def test_selectors_overlap(a: dict[str, str], b: dict[str, str], overlap: bool) -> None:
    assert guards.selectors_overlap(a, b) is overlap
    assert guards.selectors_overlap(b, a) is overlap


def test_related_profiles_are_requeued() -> None:
    p = guards.claim_of(body("p", "t", "s1", {"pool": "x"}))
    q = guards.claim_of(body("q", "t", "s2", {"pool": "x"}))
    r = guards.claim_of(body("r", "t", "s1"))
    s = guards.claim_of(body("s", "t", "s3", {"pool": "y"}))
    assert guards.related([p], [p, q, r, s]) == {"q", "r"}


def test_profiles_assigning_the_same_namespace_are_related() -> None:
    def assigning(name: str, *namespaces: str, assign: bool = True) -> guards.Claim:
        tenancy = {"namespaces": list(namespaces), "assignPods": assign}
        return guards.claim_of({"metadata": {"name": name}, "spec": {"tenancy": tenancy}})

    a = assigning("a", "team-a", "shared")
    b = assigning("b", "shared")
    c = assigning("c", "shared", assign=False)
    d = assigning("d", "team-d")
    assert guards.related([a], [a, b, c, d]) == {"b"}
    assert c.assigns == frozenset()
