"""The State's indexes answer the guards exactly as a scan of every profile does (they only
narrow whom the guards look at), and follow profiles and children as they change or go."""

from __future__ import annotations

import random
from typing import Any

import pytest

from corral.controller import guards
from corral.controller.state import State, explicitly_enabled


def body(name: str, rng: random.Random, rv: int) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if rng.random() < 0.5:
        spec["schedulerName"] = f"s{rng.randrange(4)}"
    if rng.random() < 0.4:
        spec["leaderElection"] = {"resourceName": f"l{rng.randrange(3)}"}
        if rng.random() < 0.3:
            spec["leaderElection"]["leaderElect"] = False
    if rng.random() < 0.3:
        spec["namespace"] = f"ns{rng.randrange(2)}"
    if rng.random() < 0.4:
        spec["tenancy"] = {"nodeSelector": {"pool": f"p{rng.randrange(3)}"}}
    meta = {
        "name": name,
        "resourceVersion": str(rv),
        "creationTimestamp": f"2026-01-0{rv % 9 + 1}T00:00:00Z",
    }
    return {"metadata": meta, "spec": spec}


@pytest.mark.parametrize("seed", range(8), ids=lambda s: f"seed {s}")
def test_rivals_give_the_guards_what_a_full_scan_gives(seed: int) -> None:
    rng = random.Random(seed)
    state = State()
    for rv in range(1, 301):
        name = f"p{rng.randrange(40)}"
        if rng.random() < 0.15:
            state.drop_profile(name)
        else:
            state.put_profile(body(name, rng, rv))
        probe = guards.claim_of(body(f"p{rng.randrange(45)}", rng, rv))
        versions = [probe]
        everyone, some = state.claims(), state.rivals(versions)
        assert guards.related(versions, everyone) == guards.related(versions, some)
        assert guards.name_holder(probe, everyone) == guards.name_holder(probe, some)
        assert guards.lease_holder(probe, everyone, "corral-system") == guards.lease_holder(
            probe, some, "corral-system"
        )
        assert guards.overlapping(probe, everyone) == guards.overlapping(probe, some)
    assert sorted(c.profile for c in state.claims()) == state.profile_names()


def test_children_follow_their_profile() -> None:
    state = State()

    def child(name: str, profile: str, rv: str) -> dict[str, Any]:
        labels = {"corral.dev/profile": profile}
        meta = {"name": name, "namespace": "ns", "resourceVersion": rv, "labels": labels}
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}

    state.put_child(child("a", "p1", "1"))
    state.put_child(child("b", "p1", "2"))
    state.put_child(child("a", "p2", "3"))  # relabelled: now p2's
    assert state.children_of("p1") == [("v1", "ConfigMap", "ns", "b")]
    assert state.children_of("p2") == [("v1", "ConfigMap", "ns", "a")]
    state.drop_child(child("a", "p2", "4"))
    assert state.children_of("p2") == []


def test_each_profile_reads_the_stored_bodies_and_hands_out_copies() -> None:
    state = State()
    for i in range(3):
        state.put_profile(body(f"p{i}", random.Random(i), 1))
    selectors = state.each_profile(lambda b: b["metadata"])
    assert sorted(m["name"] for m in selectors) == ["p0", "p1", "p2"]
    for meta in selectors:
        meta["name"] = "changed"  # a copy: the stored bodies keep their names
    assert sorted(state.each_profile(lambda b: b["metadata"]["name"])) == ["p0", "p1", "p2"]


ENABLES = [
    {"multiPoint": {"enabled": [{"name": "Coscheduling"}]}},
    {"permit": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}},
    {"multiPoint": {"disabled": [{"name": "Coscheduling"}]}},
    {"score": {"enabled": [{"name": "NodeMetadata", "weight": 2}]}},
    {"score": None},
    {},
]


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed {s}")
def test_the_plugins_profiles_enable_are_indexed(seed: int) -> None:
    """``any_enables`` (the PodGroup status loop's question, asked every second) answers as a
    scan of every profile does, as profiles are added, changed, refused as older, dropped."""
    rng = random.Random(seed)
    state = State()
    for rv in range(1, 201):
        name = f"p{rng.randrange(6)}"
        if rng.random() < 0.2:
            state.drop_profile(name)
        else:
            made = body(name, rng, rv if rng.random() < 0.9 else 0)  # rv 0: an older version
            made["spec"]["plugins"] = rng.choice(ENABLES)
            state.put_profile(made)
        for plugin in ("Coscheduling", "NodeMetadata", "CapacityScheduling"):
            scan = any(state.each_profile(lambda b, p=plugin: p in explicitly_enabled(b)))
            assert state.any_enables(plugin) is scan
