"""The allocator's memo of each node's last search (``SearchMemo``): a memoized search answers
what a fresh one does, after every change a search depends on, and answers from the memo only
when nothing it depends on changed."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, cast

import pytest

from corral.scheduler.plugins.dynamic_resources.allocator import (
    AllocationError,
    Allocator,
    SearchMemo,
)
from corral.scheduler.plugins.dynamic_resources.pools import DeviceID, SliceIndex

from .dra_builders import (
    CLAIM0,
    CLAIM1,
    CLASS_A,
    DRIVER_A,
    NODE1,
    NODE2,
    POOL1,
    POOL2,
    REQ0,
    Json,
    claim,
    device,
    device_class,
    node,
    request,
    resource_slice,
)
from .test_allocator import CASES, Case, consumes, counters


def _comparable(allocations: Sequence[Mapping[str, Any]] | None) -> Any:
    """Allocations as a value: a share's ID is drawn anew each time an allocation is built."""
    if allocations is None:
        return None
    out = copy.deepcopy([dict(a) for a in allocations])
    for a in out:
        for r in a["devices"]["results"]:
            r.pop("shareID", None)
        a["devices"]["results"].sort(key=lambda r: sorted(r.items()))
    return out


def _renamed(claims: list[Json], suffix: str) -> list[Json]:
    out = copy.deepcopy(claims)
    for c in out:
        c["metadata"]["name"] += suffix
    return out


FOUND = [p for p in CASES if not cast(Case, p.values[0]).error]


@pytest.mark.parametrize(("case", "want"), FOUND)
def test_a_claim_asking_alike_is_answered_from_the_memo(
    case: Case, want: list[Json] | None
) -> None:
    """Every allocator case: the next cycle's allocator, with other claim objects asking the
    same, answers from the memo what a fresh search answers."""
    classes = {c["metadata"]["name"]: c for c in case.classes}
    index, allocated, memo = SliceIndex(case.slices), frozenset(case.allocated), SearchMemo()
    first = Allocator(classes, index, allocated, memo=memo).allocate(case.node, case.claims)
    again = _renamed(case.claims, "-next")
    second = Allocator(classes, index, allocated, memo=memo).allocate(case.node, again)
    fresh = Allocator(classes, SliceIndex(case.slices), allocated).allocate(case.node, again)
    assert (memo.misses, memo.hits) == (1, 1)
    assert _comparable(second) == _comparable(fresh) == _comparable(first)


# A node-local pool of two devices on each node; pool-1 also reaches node-2 through a slice of
# its own there (its devices are "elsewhere" for node-1), and its devices draw on shared
# counters: device-1 and device-3 (on node-2) cannot both be in use.
POOL1_SLICES = [
    resource_slice(
        "pool-1-node-1", NODE1, POOL1, DRIVER_A,
        device("device-1", consumesCounters=[consumes("memory-set", memory="6Gi")]),
        device("device-2"),
        count=3,
    ),
    resource_slice(
        "pool-1-node-2", NODE2, POOL1, DRIVER_A,
        device("device-3", consumesCounters=[consumes("memory-set", memory="4Gi")]),
        count=3,
    ),
    resource_slice(
        "pool-1-counters", None, POOL1, DRIVER_A,
        count=3, sharedCounters=[counters("memory-set", memory="8Gi")],
    ),
]  # fmt: skip
POOL2_SLICES = [
    resource_slice("pool-2", NODE2, POOL2, DRIVER_A, device("device-1"), device("device-2"))
]


@dataclass(frozen=True)
class Scene:
    classes: dict[str, Json] = field(
        default_factory=lambda: {CLASS_A: device_class(CLASS_A, DRIVER_A)}
    )
    index: SliceIndex = field(default_factory=lambda: SliceIndex(POOL1_SLICES + POOL2_SLICES))
    allocated: frozenset[DeviceID] = frozenset()
    shared: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)
    claims: list[Json] = field(default_factory=lambda: [claim(CLAIM0, request(REQ0, CLASS_A))])

    def allocator(self, memo: SearchMemo | None) -> Allocator:
        return Allocator(self.classes, self.index, self.allocated, None, self.shared, memo=memo)


def _taken(*devices: tuple[str, str]) -> Callable[[Scene], Scene]:
    return lambda s: replace(
        s, allocated=s.allocated | {DeviceID(DRIVER_A, p, d) for p, d in devices}
    )


CHANGES = [
    pytest.param(lambda s: replace(s, claims=_renamed(s.claims, "-b")), True,
                 id="another-claim-asking-alike"),
    pytest.param(lambda s: replace(s, claims=[claim(CLAIM1, request(REQ0, CLASS_A))]), True,
                 id="another-claim-with-the-same-spec"),
    pytest.param(_taken((POOL2, "device-1")), True, id="a-device-of-another-node-taken"),
    pytest.param(_taken((POOL1, "device-1")), False, id="the-device-found-taken"),
    pytest.param(_taken((POOL1, "device-2")), False, id="another-device-of-the-node-taken"),
    pytest.param(_taken((POOL1, "device-3")), False,
                 id="the-counters-drawn-on-elsewhere-in-the-pool"),
    pytest.param(lambda s: replace(s, shared={DeviceID(DRIVER_A, POOL1, "device-2"): {}}), False,
                 id="a-device-of-the-node-shared"),
    pytest.param(lambda s: replace(s, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))]), False,
                 id="the-spec-asks-more"),
    pytest.param(lambda s: replace(s, claims=[*s.claims, claim(CLAIM1, request(REQ0, CLASS_A))]),
                 False, id="another-claim-too"),
    pytest.param(lambda s: replace(s, classes=copy.deepcopy(s.classes)), False,
                 id="the-classes-rebuilt"),
    pytest.param(lambda s: replace(s, index=SliceIndex(POOL1_SLICES + POOL2_SLICES)), False,
                 id="the-slices-rebuilt"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "hit"), CHANGES)
def test_the_memo_answers_only_while_the_inputs_are_the_same(
    change: Callable[[Scene], Scene], hit: bool
) -> None:
    base, memo = Scene(), SearchMemo()
    assert base.allocator(memo).allocate(node(NODE1), base.claims) is not None
    changed = change(base)
    got = changed.allocator(memo).allocate(node(NODE1), changed.claims)
    want = changed.allocator(None).allocate(node(NODE1), changed.claims)
    assert _comparable(got) == _comparable(want)
    assert memo.hits == int(hit)


def test_the_scene_changes_what_a_search_finds() -> None:
    """The rows above that must miss are changes a search sees (else a memo that ignored them
    would pass): each makes node-1's answer other than the base's."""
    base = Scene()
    first = _comparable(base.allocator(None).allocate(node(NODE1), base.claims))
    for change in (
        _taken((POOL1, "device-1")),
        _taken((POOL1, "device-3")),
        lambda s: replace(s, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 3))]),
    ):
        changed = change(base)
        got = _comparable(changed.allocator(None).allocate(node(NODE1), changed.claims))
        assert got != first


def test_a_search_that_raised_leaves_no_entry() -> None:
    base, memo = Scene(), SearchMemo()
    missing = [claim(CLAIM0, request(REQ0, "no-such-class"))]
    for _ in range(2):
        with pytest.raises(AllocationError, match="could not retrieve device class"):
            base.allocator(memo).allocate(node(NODE1), missing)
    assert (memo.hits, memo.misses) == (0, 2)


def test_each_node_has_its_own_entry() -> None:
    base, memo = Scene(), SearchMemo()
    for name in (NODE1, NODE2, NODE1, NODE2):
        base.allocator(memo).allocate(node(name), base.claims)
    assert (memo.misses, memo.hits) == (2, 2)
