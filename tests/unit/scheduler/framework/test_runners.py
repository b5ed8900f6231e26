"""Each extension-point runner of the Framework on its own: which plugins run, in which order,
and what status comes back for success, Skip, Wait, a rejection and an error (upstream's
``Run*Plugins`` semantics and wording)."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.profile import ResolvedProfile
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.status import Code, Status
from corral.testing.builders import node, pod_info, snapshot_of
from support.scheduler_fakes import SKIP, FakeBind, FakePreBind, registry_of

NO = Status.of(Code.UNSCHEDULABLE, "no")
NEVER = Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "never")
PENDING = Status.of(Code.PENDING, "later")
BOOM = Status.error("boom")
WAIT = Status(Code.WAIT)
OK = Status(Code.SUCCESS)


class Scripted:
    """One plugin at every point, returning ``status`` everywhere and logging each call (the
    runners' arguments are not its concern, so every method takes and ignores them)."""

    def __init__(self, name: str, status: Status | None, log: list[str]) -> None:
        self.name = name
        self.status = status
        self.log = log

    def _call(self, point: str) -> Status | None:
        self.log.append(f"{point} {self.name}")
        return self.status

    def pre_enqueue(self, *_: Any) -> Status | None:
        return self._call("pre_enqueue")

    def pre_filter(self, *_: Any) -> tuple[None, None]:
        return None, None

    def pre_filter_extensions(self) -> Scripted:
        return self

    def add_pod(self, *_: Any) -> Status | None:
        return self._call("add_pod")

    def remove_pod(self, *_: Any) -> Status | None:
        return self._call("remove_pod")

    def pre_score(self, *_: Any) -> Status | None:
        return self._call("pre_score")

    def reserve(self, *_: Any) -> Status | None:
        return self._call("reserve")

    def unreserve(self, *_: Any) -> None:
        self._call("unreserve")

    def permit(self, *_: Any) -> tuple[Status | None, float]:
        return self._call("permit"), 5.0

    def pre_bind_pre_flight(self, *_: Any) -> Status | None:
        return self._call("pre_flight")

    def pre_bind(self, *_: Any) -> Status | None:
        return self._call("pre_bind")

    def bind(self, *_: Any) -> Status | None:
        return self._call("bind")

    def post_bind(self, *_: Any) -> None:
        self._call("post_bind")


POINTS = ("pre_enqueue", "pre_filter", "pre_score", "reserve", "permit", "pre_bind", "post_bind")


def framework(*statuses: Status | None) -> tuple[Framework, list[str]]:
    """Plugins A, B, ... with the given statuses, enabled in that order at every point."""
    log: list[str] = []
    plugins = [Scripted(chr(ord("A") + i), s, log) for i, s in enumerate(statuses)]
    names = tuple(p.name for p in plugins)
    profile = ResolvedProfile(
        scheduler_name="test",
        queue_sort=("FakeQueueSort",),
        bind=names,
        **dict.fromkeys(POINTS, names),
    )
    return Framework(profile, registry_of(*plugins)), log


def err(point: str, plugin: str, message: str = "boom") -> Status:
    return Status(Code.ERROR, (f'running {point} plugin "{plugin}": {message}',), plugin)


POD = pod_info("p")

# (statuses of A, B, ...), want, plugins called: PreEnqueue, Reserve and PreBind stop at the first
# failure; a rejection is returned as the plugin's own, anything else becomes an error.
STOP_AT_FAILURE = [
    pytest.param((None, OK), None, "AB", id="all succeed"),
    pytest.param((NO, None), Status(Code.UNSCHEDULABLE, ("no",), "A"), "A", id="rejected"),
    pytest.param((None, NEVER), NEVER.with_plugin("B"), "AB", id="unresolvable"),
    pytest.param((PENDING, None), PENDING.with_plugin("A"), "A", id="pending"),
    pytest.param((BOOM, None), "error A", "A", id="error"),
    pytest.param((WAIT, None), "error A", "A", id="wait is an error"),
]


def _want(want: Status | str | None, point: str, message: str = "boom") -> Status | None:
    if isinstance(want, str):
        plugin = want.split()[1]
        return err(point, plugin, message)
    return want


RUN_IN_ORDER = {
    "PreEnqueue": ("pre_enqueue", lambda fwk: fwk.run_pre_enqueue(POD)),
    "Reserve": ("reserve", lambda fwk: fwk.run_reserve(CycleState(), POD, "n")),
    "PreBind": ("pre_bind", lambda fwk: fwk.run_pre_bind(CycleState(), POD, "n")),
}


@pytest.mark.parametrize("point", RUN_IN_ORDER)
@pytest.mark.parametrize(("statuses", "want", "called"), STOP_AT_FAILURE)
def test_runners_that_stop_at_the_first_failure(
    point: str, statuses: tuple[Status | None, ...], want: Any, called: str
) -> None:
    method, run = RUN_IN_ORDER[point]
    fwk, log = framework(*statuses)
    message = statuses[0].message if statuses[0] is not None else ""
    assert run(fwk) == _want(want, point, message)
    assert log == [f"{method} {c}" for c in called]


@pytest.mark.parametrize(
    ("statuses", "gating", "want", "called"),
    [
        pytest.param((None, NEVER, None), "B", NEVER.with_plugin("B"), "B",
                     id="the gating plugin still gates: no other runs"),
        pytest.param((None, None, NO), "B", NO.with_plugin("C"), "BAC",
                     id="it passes now: the others run in order after it"),
        pytest.param((NO, NEVER, None), "", NO.with_plugin("A"), "A", id="not gated: in order"),
        pytest.param((None, None, None), "Z", None, "ABC", id="an unknown plugin: in order"),
    ],
)  # fmt: skip
def test_pre_enqueue_runs_the_gating_plugin_first(
    statuses: tuple[Status | None, ...], gating: str, want: Status | None, called: str
) -> None:
    # Upstream runPreEnqueuePluginsForPod: a gated pod asks the plugin that gated it first.
    fwk, log = framework(*statuses)
    assert fwk.run_pre_enqueue(POD, gating) == want
    assert log == [f"pre_enqueue {c}" for c in called]


def test_reserve_skip_is_an_error_and_unreserve_runs_in_reverse() -> None:
    fwk, log = framework(None, SKIP, None)
    assert fwk.run_reserve(CycleState(), POD, "n") == err("Reserve", "B", "")
    fwk.run_unreserve(CycleState(), POD, "n")
    assert log == ["reserve A", "reserve B", "unreserve C", "unreserve B", "unreserve A"]


def test_pre_bind_skip_runs_the_rest() -> None:
    fwk, log = framework(SKIP, NO)
    assert fwk.run_pre_bind(CycleState(), POD, "n") == NO.with_plugin("B")
    assert log == ["pre_bind A", "pre_bind B"]


UNSUPPORTED = (
    'PreBindPreFlight A returned "{}", which is unsupported. It is supposed to return Success, '
    "Skip, or Error status"
)


@pytest.mark.parametrize(
    ("statuses", "want", "called", "skipped"),
    [
        pytest.param((None, OK), None, "AB", frozenset(), id="both will act"),
        pytest.param((SKIP, None), None, "AB", frozenset("A"), id="one will act"),
        pytest.param((SKIP, SKIP), SKIP, "AB", frozenset("AB"), id="none will act: Skip"),
        pytest.param((BOOM, None), Status(Code.ERROR, ('running PreBindPreFlight "A": boom',),
                                          "A"), "A", frozenset(), id="error"),
        pytest.param((NO, None), Status(Code.ERROR, (UNSUPPORTED.format("Unschedulable"),), "A"),
                     "A", frozenset(), id="a rejection is unsupported: an error"),
        pytest.param((WAIT, None), Status(Code.ERROR, (UNSUPPORTED.format("Wait"),), "A"), "A",
                     frozenset(), id="wait is unsupported: an error"),
    ],
)  # fmt: skip
def test_run_pre_bind_pre_flights(
    statuses: tuple[Status | None, ...], want: Status | None, called: str, skipped: frozenset[str]
) -> None:
    fwk, log = framework(*statuses)
    state = CycleState()
    assert fwk.run_pre_bind_pre_flights(state, POD, "n") == want
    assert log == [f"pre_flight {c}" for c in called]
    assert state.skip_pre_bind_plugins == skipped


def test_pre_bind_passes_by_the_plugins_whose_pre_flight_skipped() -> None:
    fwk, log = framework(None, None, None)
    state = CycleState()
    state.skip_pre_bind_plugins = frozenset("B")
    assert fwk.run_pre_bind(state, POD, "n") is None
    assert log == ["pre_bind A", "pre_bind C"]
    assert state.clone().skip_pre_bind_plugins == frozenset("B")


def test_a_pre_bind_plugin_without_pre_flight_counts_as_acting() -> None:
    plain, binder = FakePreBind("Plain"), FakeBind("B", None)
    profile = ResolvedProfile(scheduler_name="test", queue_sort=("FakeQueueSort",),
                              pre_bind=("Plain",), bind=("B",))  # fmt: skip
    fwk = Framework(profile, registry_of(plain, binder))
    assert fwk.run_pre_bind_pre_flights(CycleState(), POD, "n") is None


@pytest.mark.parametrize(
    ("statuses", "want", "called", "skipped"),
    [
        pytest.param((None, OK), None, "AB", frozenset(), id="all succeed"),
        pytest.param((SKIP, None), None, "AB", frozenset("A"), id="skip is recorded"),
        pytest.param((NO, None), err("PreScore", "A", "no"), "A", None, id="rejection is error"),
        pytest.param((None, BOOM), err("PreScore", "B"), "AB", None, id="error"),
    ],
)
def test_run_pre_score(
    statuses: tuple[Status | None, ...],
    want: Status | None,
    called: str,
    skipped: frozenset[str] | None,
) -> None:
    fwk, log = framework(*statuses)
    state = CycleState()
    state.skip_score_plugins = frozenset({"untouched"})
    snapshot = snapshot_of([node("n")])
    assert fwk.run_pre_score(state, POD, snapshot, snapshot.order) == want
    assert log == [f"pre_score {c}" for c in called]
    assert state.skip_score_plugins == (frozenset({"untouched"}) if skipped is None else skipped)


@pytest.mark.parametrize(
    ("statuses", "want", "called"),
    [
        pytest.param((None, OK), None, "AB", id="all allow"),
        pytest.param((NO, WAIT), NO.with_plugin("A"), "A", id="rejected"),
        pytest.param((WAIT, BOOM), err("Permit", "B"), "AB", id="error after a wait"),
        pytest.param((SKIP,), err("Permit", "A", ""), "A", id="skip is an error"),
    ],
)
def test_run_permit(statuses: tuple[Status | None, ...], want: Status | None, called: str) -> None:
    fwk, log = framework(*statuses)
    assert fwk.run_permit(CycleState(), POD, "n") == want
    assert log == [f"permit {c}" for c in called]
    assert fwk.get_waiting_pod(POD.uid) is None


def test_run_permit_wait_parks_the_pod_for_every_waiting_plugin() -> None:
    fwk, log = framework(WAIT, None, WAIT)
    got = fwk.run_permit(CycleState(), POD, "n")
    msg = "one or more plugins asked to wait and no plugin rejected pod 'p'"
    assert got == Status.of(Code.WAIT, msg)
    assert log == ["permit A", "permit B", "permit C"]
    waiting = fwk.get_waiting_pod(POD.uid)
    assert waiting is not None
    assert waiting.pending_plugins() == ["A", "C"]


@pytest.mark.parametrize(
    ("statuses", "want", "called"),
    [
        pytest.param((SKIP, None, None), None, "AB", id="skip passes to the next binder"),
        pytest.param((OK, None), None, "A", id="first success binds"),
        pytest.param((SKIP, SKIP), SKIP, "AB", id="every binder skips"),
        pytest.param((SKIP, NO), NO.with_plugin("B"), "AB", id="rejected"),
        pytest.param((BOOM, None), err("Bind", "A"), "A", id="error"),
        pytest.param((WAIT, None), err("Bind", "A", ""), "A", id="wait is an error"),
    ],
)
def test_run_bind(statuses: tuple[Status | None, ...], want: Status | None, called: str) -> None:
    fwk, log = framework(*statuses)
    assert fwk.run_bind(CycleState(), POD, "n") == want
    assert log == [f"bind {c}" for c in called]


def test_run_post_bind_runs_every_plugin_in_order() -> None:
    fwk, log = framework(BOOM, NO)
    fwk.run_post_bind(CycleState(), POD, "n")
    assert log == ["post_bind A", "post_bind B"]


@pytest.mark.parametrize(("what", "label"), [("add_pod", "AddPod"), ("remove_pod", "RemovePod")])
@pytest.mark.parametrize(
    ("statuses", "skip", "want", "called"),
    [
        pytest.param((None, OK), "", None, "AB", id="all succeed"),
        pytest.param((NO, None), "", "A", "A", id="rejection is an error"),
        pytest.param((SKIP, None), "", "A", "A", id="skip is an error"),
        pytest.param((BOOM, BOOM), "A", "B", "B", id="skipped filter plugins do not run"),
    ],
)
def test_pre_filter_extensions(
    what: str,
    label: str,
    statuses: tuple[Status | None, ...],
    skip: str,
    want: str | None,
    called: str,
) -> None:
    fwk, log = framework(*statuses)
    state = CycleState()
    state.skip_filter_plugins = frozenset(skip)
    other = pod_info("other")
    node_info = snapshot_of([node("n")]).node_info(0)
    run = getattr(fwk, f"run_pre_filter_extension_{what}")
    got = run(state, POD, other, node_info)
    if want is None:
        assert got is None
    else:
        failed = statuses[ord(want) - ord("A")]
        message = failed.message if failed is not None else ""
        assert got == Status(
            Code.ERROR, (f'running {label} on PreFilter plugin "{want}": {message}',), want
        )
    assert log == [f"{what} {c}" for c in called]
