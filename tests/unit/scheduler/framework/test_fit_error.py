"""Upstream's FailedScheduling message (FitError.Error)."""

from __future__ import annotations

import numpy as np

from corral.scheduler.framework.diagnosis import Diagnosis, FitError
from corral.scheduler.framework.interface import FilterVerdict
from corral.scheduler.framework.status import Code, Status

UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_reasons_are_counted_and_sorted_as_strings() -> None:
    d = Diagnosis()
    for slot in range(10):
        d.node_to_status.set(slot, Status.of(Code.UNSCHEDULABLE, "x"))
    for slot in range(10, 12):
        d.node_to_status.set(slot, Status.of(Code.UNSCHEDULABLE, "a", "y"))
    message = FitError("ns/p", 12, d).message()
    assert message == "0/12 nodes are available: 10 x, 2 a, 2 y."


def test_batch_verdicts_count_per_reason_code() -> None:
    d = Diagnosis()
    reasons = np.array([1, 2, 2, 0], dtype=np.int64)
    labels = {1: ("Insufficient cpu",), 2: ("Insufficient cpu", "Insufficient memory")}
    verdict = FilterVerdict(
        np.zeros(4, dtype=np.bool_), reasons, lambda c: Status(Code.UNSCHEDULABLE, labels[c])
    )
    d.node_to_status.add_batch(np.array([0, 1, 2], dtype=np.intp), verdict, "NodeResourcesFit")
    d.node_to_status.set(3, Status.of(UUR, "node(s) had untolerated taint {k: v}"))
    assert FitError("ns/p", 4, d).message() == (
        "0/4 nodes are available: 1 node(s) had untolerated taint {k: v}, "
        "2 Insufficient memory, 3 Insufficient cpu."
    )
    assert len(d.node_to_status) == 4
    assert d.node_to_status.get(1) == Status(
        Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"), "NodeResourcesFit"
    )


def test_pre_filter_message_replaces_node_reasons_and_post_filter_is_appended() -> None:
    d = Diagnosis(pre_filter_msg="pod affinity terms conflict")
    d.node_to_status.absent = Status.of(UUR, "pod affinity terms conflict")
    d.post_filter_msg = "preemption: not eligible due to preemptionPolicy=Never."
    assert FitError("ns/p", 3, d).message() == (
        "0/3 nodes are available: pod affinity terms conflict. "
        "preemption: not eligible due to preemptionPolicy=Never."
    )


def test_absent_nodes_count_with_the_absent_status() -> None:
    d = Diagnosis()
    d.node_to_status.absent = Status.of(UUR, "node(s) didn't satisfy plugin(s) [NodeAffinity]")
    d.node_to_status.set(0, Status.of(UUR, "node(s) didn't match Pod's node affinity/selector"))
    assert FitError("ns/p", 5, d).message() == (
        "0/5 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "4 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
