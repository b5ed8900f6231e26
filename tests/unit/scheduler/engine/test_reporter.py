"""The outcome reporter books metrics on the reporting thread at once and hands the Events (and
the failed pod's status patch) to the event loop; the engine's other Events go the same way."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from corral.scheduler import metrics as m
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.engine.handoff import LoopHandoff
from corral.scheduler.engine.loop import Failure, Success
from corral.scheduler.engine.metrics import RESULT_ERROR, RESULT_SCHEDULED, RESULT_UNSCHEDULABLE
from corral.scheduler.engine.podstatus import REASON_SCHEDULER_ERROR, REASON_UNSCHEDULABLE
from corral.scheduler.engine.reporter import OutcomeReporter
from corral.testing.builders import pod, pod_info

PROFILE = "default-scheduler"


class _Events:
    """An EventRecorder's calls, as (method, pod name, rest)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, tuple[Any, ...]]] = []

    def scheduled(self, pod: Any, node: str) -> None:
        self.calls.append(("scheduled", pod.name, (node,)))

    def failed_scheduling(self, pod: Any, message: str) -> None:
        self.calls.append(("failed_scheduling", pod.name, (message,)))

    def event(self, pod: Any, *args: str) -> None:
        self.calls.append(("event", pod.name, args))


def _reporter(loop: asyncio.AbstractEventLoop | None) -> tuple[OutcomeReporter, _Events, list[Any]]:
    events = _Events()
    spawned: list[Any] = []

    def spawn(coro: Any) -> None:
        spawned.append(coro)
        coro.close()  # the status patch itself is podstatus's (tested there)

    handoff = LoopHandoff()
    if loop is not None:
        handoff.attach(loop)
    recorders: Any = {PROFILE: events}
    reporter = OutcomeReporter(m.new_recorder(), recorders, handoff, spawn, client=None)  # type: ignore[arg-type]
    return reporter, events, spawned


def _failure(reason: str) -> Failure:
    return Failure(pod_info("p"), PROFILE, reason, "0/1 nodes are available", None, 0.5)


@pytest.mark.parametrize(
    ("outcome", "result", "calls"),
    [
        pytest.param(
            Success(pod_info("p"), PROFILE, "n1", 3, 2, 0.25),
            RESULT_SCHEDULED,
            [("scheduled", "p", ("n1",))],
            id="scheduled: attempt counted, Scheduled Event",
        ),
        pytest.param(
            _failure(REASON_UNSCHEDULABLE),
            RESULT_UNSCHEDULABLE,
            [("failed_scheduling", "p", ("0/1 nodes are available",))],
            id="unschedulable: FailedScheduling Event and a status patch",
        ),
        pytest.param(
            _failure(REASON_SCHEDULER_ERROR),
            RESULT_ERROR,
            [("failed_scheduling", "p", ("0/1 nodes are available",))],
            id="scheduler error: counted as an error",
        ),
    ],
)
def test_an_outcome_counts_at_once_and_reports_on_the_loop(
    outcome: Success | Failure, result: str, calls: list[tuple[str, str, tuple[Any, ...]]]
) -> None:
    async def main() -> tuple[float, list[Any], int]:
        reporter, events, spawned = _reporter(asyncio.get_running_loop())
        if isinstance(outcome, Success):
            reporter.scheduled(outcome)
        else:
            reporter.failed(outcome)
        counted = reporter.metrics.value(m.SCHEDULE_ATTEMPTS, (result, PROFILE))
        assert events.calls == []  # not yet: the Event waits for the loop
        await asyncio.sleep(0.01)
        return counted, events.calls, len(spawned)

    counted, got, patches = asyncio.run(main())
    assert counted == 1
    assert got == calls
    assert patches == (0 if isinstance(outcome, Success) else 1)


def test_without_a_loop_only_metrics_are_booked() -> None:
    reporter, events, spawned = _reporter(None)
    reporter.failed(_failure(REASON_UNSCHEDULABLE))
    reporter.preempted(2)
    assert reporter.metrics.value(m.SCHEDULE_ATTEMPTS, (RESULT_UNSCHEDULABLE, PROFILE)) == 1
    assert reporter.metrics.value(m.PREEMPTION_ATTEMPTS) == 1
    assert (events.calls, spawned) == ([], [])


def test_victim_and_deleting_pod_events() -> None:
    async def main() -> list[Any]:
        reporter, events, _ = _reporter(asyncio.get_running_loop())
        reporter.event(pod_info("victim"), "Normal", "Preempted", "Preempting", "by x")
        reporter.skipped_deleting(pod_info("gone"))
        await asyncio.sleep(0.01)
        return events.calls

    assert asyncio.run(main()) == [
        ("event", "victim", ("Normal", "Preempted", "Preempting", "by x")),
        ("failed_scheduling", "gone", ("skip schedule deleting pod: default/gone",)),
    ]


class _SlowClient:
    """An AsyncClient whose first status patch is answered only when ``release`` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.written: list[tuple[str, str]] = []  # (pod name, message), in the order sent

    async def request(self, method: str, path: str, **kwargs: Any) -> None:
        condition = kwargs["body"]["status"]["conditions"][0]
        self.written.append((path.split("/")[-2], condition["message"]))
        if len(self.written) == 1:
            await self.release.wait()


@pytest.mark.parametrize(
    ("failures", "written"),
    [
        pytest.param(
            [("p", "first"), ("p", "second"), ("p", "third")],
            [("p", "first"), ("p", "third")],
            id="one pod: in order, the latest last, the one overtaken while waiting never sent",
        ),
        pytest.param(
            [("p", "first"), ("q", "other pod")],
            [("p", "first"), ("q", "other pod")],
            id="another pod does not wait for it",
        ),
    ],
)
def test_a_pods_status_patches_are_written_one_at_a_time_latest_last(
    failures: list[tuple[str, str]], written: list[tuple[str, str]]
) -> None:
    async def main() -> list[tuple[str, str]]:
        loop = asyncio.get_running_loop()
        handoff = LoopHandoff()
        handoff.attach(loop)
        client = _SlowClient()
        pods = {name: pod_info(name) for name, _ in failures}
        recorders: Any = {PROFILE: _Events()}
        fake: Any = client
        reporter = OutcomeReporter(m.new_recorder(), recorders, handoff, loop.create_task, fake)
        for name, message in failures:
            reporter.failed(Failure(pods[name], PROFILE, REASON_UNSCHEDULABLE, message, None, 0.1))
            await asyncio.sleep(0.01)
        client.release.set()
        await asyncio.sleep(0.05)
        return client.written

    assert asyncio.run(main()) == written


class _AnsweringClient:
    """An AsyncClient that answers each status patch with the pod at the next resourceVersion,
    starting at 10, and records each patch's message."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    async def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        self.messages.append(kwargs["body"]["status"]["conditions"][0]["message"])
        return {"metadata": {"resourceVersion": str(9 + len(self.messages))}}


def _versioned(version: str) -> Any:
    raw = pod("p")
    raw["metadata"]["resourceVersion"] = version
    return pod_from_json(raw)


@pytest.mark.parametrize(
    ("retry_version", "retry_message", "sent"),
    [
        pytest.param("5", "full", ["full"],
                     id="the same failure on a copy older than the answer: not written again"),
        pytest.param("10", "full", ["full"],
                     id="the same failure on the copy the patch produced: nothing to write"),
        pytest.param("11", "full", ["full", "full"],
                     id="a copy newer than the answer lacks it: someone changed the pod, written"),
        pytest.param("5", "fuller", ["full", "fuller"],
                     id="a different message on the older copy: written"),
        pytest.param("x", "full", ["full", "full"],
                     id="a resourceVersion that is no number: nothing is assumed, written"),
    ],
)  # fmt: skip
def test_a_retry_on_a_copy_lagging_behind_the_reporters_own_patch_is_not_written_twice(
    retry_version: str, retry_message: str, sent: list[str]
) -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        handoff = LoopHandoff()
        handoff.attach(loop)
        client = _AnsweringClient()
        recorders: Any = {PROFILE: _Events()}
        fake: Any = client
        reporter = OutcomeReporter(m.new_recorder(), recorders, handoff, loop.create_task, fake)
        first, retry = _versioned("5"), _versioned(retry_version)
        if retry_version == "10":  # the copy the watch delivers after the patch: it says it
            retry.raw["status"] = {"conditions": [{"type": "PodScheduled", "status": "False",
                                   "reason": REASON_UNSCHEDULABLE, "message": "full"}]}  # fmt: skip
        for info, message in ((first, "full"), (retry, retry_message)):
            reporter.failed(Failure(info, PROFILE, REASON_UNSCHEDULABLE, message, None, 0.1))
            await asyncio.sleep(0.02)
        return client.messages

    assert asyncio.run(main()) == sent
