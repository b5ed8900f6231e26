"""InterPodAffinity's DomainCounts: upstream's topologyToMatchedTermCount map, held as arrays."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from corral.scheduler.framework.snapshot import LabelVocab
from corral.scheduler.plugins.inter_pod_affinity.common import DomainCounts

ZONE, HOST = "zone", "hostname"


def vocabs() -> dict[str, LabelVocab]:
    out = {ZONE: LabelVocab(), HOST: LabelVocab()}
    for value in ("a", "b"):
        out[ZONE].ensure(value)
    out[HOST].ensure("n1")
    return out


def on(**labels: str) -> dict[str, str]:
    return labels


Step = Callable[[DomainCounts, dict[str, LabelVocab]], None]


def add(labels: dict[str, str], key: str, delta: int) -> Step:
    return lambda counts, _: counts.add(labels, key, delta)


def grow(key: str, value: str) -> Step:
    def step(_: DomainCounts, v: dict[str, LabelVocab]) -> None:
        v[key].ensure(value)

    return step


CASES: list[tuple[str, list[Step], dict[tuple[str, str], int], bool]] = [
    ("empty", [], {}, False),
    ("one pair", [add(on(zone="a"), ZONE, 1)], {(ZONE, "a"): 1}, True),
    ("added twice", [add(on(zone="a"), ZONE, 1), add(on(zone="a"), ZONE, 1)],
     {(ZONE, "a"): 2}, True),
    # Upstream deletes a pair that drops to 0: nothing is left for the first-pod rule.
    ("back to zero", [add(on(zone="a"), ZONE, 1), add(on(zone="a"), ZONE, -1)], {}, False),
    # ... but keeps a negative one (RemovePod of a pod PreFilter did not count).
    ("negative", [add(on(zone="b"), ZONE, -1)], {(ZONE, "b"): -1}, True),
    ("node without the key", [add(on(hostname="n1"), ZONE, 1)], {}, False),
    ("value outside the vocabulary", [add(on(zone="z"), ZONE, 1)], {(ZONE, "z"): 1}, True),
    ("key outside the vocabulary", [add(on(rack="r"), "rack", 1)], {("rack", "r"): 1}, True),
    ("outside, back to zero", [add(on(zone="z"), ZONE, 1), add(on(zone="z"), ZONE, -1)], {},
     False),
    ("vocabulary grown after the array", [add(on(zone="a"), ZONE, 1), grow(ZONE, "c"),
                                          add(on(zone="c"), ZONE, 3)],
     {(ZONE, "a"): 1, (ZONE, "c"): 3}, True),
]  # fmt: skip


@pytest.mark.parametrize(("steps", "pairs", "present"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_counts_match_upstreams_map(
    steps: list[Step], pairs: dict[tuple[str, str], int], present: bool
) -> None:
    v = vocabs()
    counts = DomainCounts(v)
    for step in steps:
        step(counts, v)
    assert counts.pairs() == pairs
    assert bool(counts) is present
    for (key, value), count in pairs.items():
        assert counts.get(key, value) == count
    # The batch table agrees with the pairs for every value the vocabulary knows, and ends in
    # the 0 that nodes without the key (id -1) read.
    table = counts.table(ZONE)
    assert len(table) == len(v[ZONE]) + 1
    assert table[-1] == 0
    expected = [pairs.get((ZONE, value), 0) for value in v[ZONE].values]
    assert table[:-1].tolist() == expected
    assert counts.nonzero_keys() == [k for k in (ZONE, HOST) if np.any(counts.table(k))]


def test_a_clone_is_independent() -> None:
    counts = DomainCounts(vocabs())
    counts.add(on(zone="a"), ZONE, 1)
    counts.add(on(zone="z"), ZONE, 1)
    copy = counts.clone()
    copy.add(on(zone="a"), ZONE, 1)
    copy.add(on(zone="z"), ZONE, -1)
    assert counts.pairs() == {(ZONE, "a"): 1, (ZONE, "z"): 1}
    assert copy.pairs() == {(ZONE, "a"): 2}
