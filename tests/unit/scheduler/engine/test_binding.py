"""ApiBinder's retries (upstream 1.37 ``util.BindPod``): which answers are posted again, how many
times, and the waits between attempts; the nominated-node patch's retries (``util.PatchPodStatus``:
conflicts too). The waits go to an injected sleep: nothing is timed."""

from __future__ import annotations

import random
import socket
from typing import Any

import pytest

from corral.k8s import CONTENT_STRATEGIC_MERGE_PATCH, JSON, Client
from corral.k8s.client import ApiError
from corral.k8s.protobuf import CONTENT_PROTOBUF
from corral.k8s.ratelimit import TokenBucket
from corral.scheduler.engine.binding import (
    VERIFY_SECONDS,
    VERIFY_WAITS,
    ApiBinder,
    ApiNominatedNodeWriter,
    NodeGoneError,
    retriable,
)
from corral.scheduler.engine.leaderelection import NotLeaderError, WriteFence
from corral.testing.builders import pod_info


def transport_error(cause: BaseException) -> ApiError:
    """As ``Client`` raises it: status 0, the socket's error as the cause."""
    err = ApiError(0, "TransportError", f"POST /x: {cause}")
    err.__cause__ = cause
    return err


def bound_to(node: str, uid: str = "uid-default-p") -> JSON:
    return {"metadata": {"name": "p", "uid": uid}, "spec": {"nodeName": node}}


def unbound() -> JSON:
    return {"metadata": {"name": "p", "uid": "uid-default-p"}, "spec": {}}


INTERNAL = ApiError(500, "InternalError", "etcd is busy")
UNAVAILABLE = ApiError(503, "ServiceUnavailable", "apiserver is shutting down")
PLAIN_500 = ApiError(500, "Internal Server Error", "a proxy's page")
CONFLICT = ApiError(409, "Conflict", "pod p is already assigned to node n")
TIMEOUT_500 = ApiError(500, "Timeout", "a known reason with 500")
GATEWAY = ApiError(504, "Timeout", "timed out")
REFUSED = transport_error(ConnectionRefusedError(111, "Connection refused"))
RESET = transport_error(ConnectionResetError(104, "Connection reset by peer"))


class ScriptedClient:
    """Answers each POST or PATCH with the next scripted outcome (an ApiError is raised); a GET
    (the binder reading a pod back) with the next of ``reads`` (a pod or an ApiError), else
    the pod unbound."""

    def __init__(
        self, outcomes: list[ApiError | None], reads: list[ApiError | JSON] | None = None
    ) -> None:
        self.outcomes = list(outcomes)
        self.reads = list(reads or [])
        self.calls: list[tuple[Any, ...]] = []
        self.gets = 0
        self.content_types: list[str] = []

    def request(self, method: str, path: str, *, body: Any = None, **options: Any) -> Any:
        if method == "GET":
            self.gets += 1
            read = self.reads.pop(0) if self.reads else unbound()
            if isinstance(read, ApiError):
                raise read
            return read
        self.calls.append((method, path, body, *options.values()))
        outcome = self.outcomes.pop(0)
        if outcome is not None:
            raise outcome
        return None

    def send(self, path: str, body: Any, *, content_type: str) -> None:
        self.content_types.append(content_type)
        self.request("POST", path, body=body)


@pytest.mark.parametrize(
    ("outcomes", "attempts", "fails"),
    [
        pytest.param([None], 1, None, id="bound at once"),
        pytest.param([INTERNAL, None], 2, None, id="InternalError is retried"),
        pytest.param([UNAVAILABLE, UNAVAILABLE, UNAVAILABLE, None], 4, None, id="3 retries"),
        pytest.param([PLAIN_500, None], 2, None, id="500 with an undefined reason is retried"),
        pytest.param([REFUSED, None], 2, None, id="connection refused is retried"),
        pytest.param([INTERNAL] * 4, 4, INTERNAL, id="gives up after 4 attempts"),
        pytest.param([CONFLICT], 1, CONFLICT, id="Conflict is not retried when binding"),
        pytest.param([TIMEOUT_500], 1, TIMEOUT_500, id="500 with a defined other reason"),
        pytest.param([GATEWAY], 1, GATEWAY, id="504 Timeout is not retried"),
        pytest.param([RESET], 1, RESET, id="other transport errors are not retried"),
    ],
)
def test_bind_retries(
    outcomes: list[ApiError | None], attempts: int, fails: ApiError | None
) -> None:
    client = ScriptedClient(outcomes)
    waits: list[float] = []
    binder = ApiBinder(
        client,  # type: ignore[arg-type]
        TokenBucket(0, 1),
        content_type=CONTENT_PROTOBUF,
        sleep=waits.append,
        rng=random.Random(7),
    )
    p = pod_info("p")
    if fails is None:
        binder(p, "n1")
    else:
        with pytest.raises(ApiError) as raised:
            binder(p, "n1")
        assert raised.value is fails
    assert len(client.calls) == attempts
    assert client.content_types == [CONTENT_PROTOBUF] * attempts
    method, path, body = client.calls[0]
    assert (method, path) == ("POST", "/api/v1/namespaces/default/pods/p/binding")
    assert body["metadata"]["uid"] == "uid-default-p"
    assert body["target"] == {"apiVersion": "v1", "kind": "Node", "name": "n1"}
    # client-go DefaultBackoff: 10ms, 50ms, 250ms, each up to 10% longer.
    assert len(waits) == attempts - 1
    for wait, base in zip(waits, (0.010, 0.050, 0.250), strict=False):
        assert base <= wait <= base * 1.1


def test_a_refused_connection_to_a_real_socket_is_retriable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = Client.from_token(f"http://127.0.0.1:{port}", "token", None)
    with pytest.raises(ApiError) as raised:
        client.request("GET", "/version")
    assert raised.value.status == 0
    assert retriable(raised.value)


@pytest.mark.parametrize(
    ("outcomes", "attempts", "fails"),
    [
        pytest.param([None], 1, None, id="written at once"),
        pytest.param([CONFLICT, None], 2, None, id="a conflict is retried"),
        pytest.param([UNAVAILABLE, INTERNAL, REFUSED, None], 4, None, id="3 retries"),
        pytest.param([CONFLICT] * 4, 4, CONFLICT, id="gives up after 4 attempts"),
        pytest.param([GATEWAY], 1, GATEWAY, id="504 Timeout is not retried"),
    ],
)
def test_nominated_node_patch_retries(
    outcomes: list[ApiError | None], attempts: int, fails: ApiError | None
) -> None:
    client = ScriptedClient(outcomes)
    waits: list[float] = []
    writer = ApiNominatedNodeWriter(client, TokenBucket(0, 1), sleep=waits.append,  # type: ignore[arg-type]
                                    rng=random.Random(7))  # fmt: skip
    if fails is None:
        writer(pod_info("p"), "n1")
    else:
        with pytest.raises(ApiError) as raised:
            writer(pod_info("p"), "n1")
        assert raised.value is fails
    assert client.calls == [("PATCH", "/api/v1/namespaces/default/pods/p/status",
                             {"status": {"nominatedNodeName": "n1"}},
                             CONTENT_STRATEGIC_MERGE_PATCH)] * attempts  # fmt: skip
    assert len(waits) == attempts - 1


class ClosingBucket:
    """A rate limiter whose wait ends after the Lease was lost (the fence closes meanwhile)."""

    def __init__(self, fence: WriteFence) -> None:
        self.fence = fence

    def wait(self, verb: str) -> None:
        self.fence.close()


@pytest.mark.parametrize(
    ("holds", "closed_while_waiting", "sent"),
    [
        pytest.param(None, False, True, id="no leader election: always sent"),
        pytest.param(True, False, True, id="holding the Lease: sent"),
        pytest.param(False, False, False, id="past renewDeadline: not sent"),
        pytest.param(True, True, False, id="lost while waiting for a token: not sent"),
    ],
)
def test_bindings_pass_the_leader_fence(
    holds: bool | None, closed_while_waiting: bool, sent: bool
) -> None:
    fence = WriteFence()
    if holds is not None:
        fence.guard(lambda: holds)
    client = ScriptedClient([None])
    bucket = ClosingBucket(fence) if closed_while_waiting else TokenBucket(0, 1)
    binder = ApiBinder(client, bucket, fence=fence, sleep=lambda _: None)  # type: ignore[arg-type]
    if sent:
        binder(pod_info("p", namespace="ns"), "n1")
    else:
        with pytest.raises(NotLeaderError, match="the Binding of ns/p to n1 not sent"):
            binder(pod_info("p", namespace="ns"), "n1")
    assert len(client.calls) == (1 if sent else 0)


@pytest.mark.parametrize(
    ("outcomes", "reads", "bound", "gets"),
    [
        pytest.param([RESET], [bound_to("n1")], True, 1,
                     id="answer lost, the pod bound here: a success"),
        pytest.param([RESET], [unbound()], False, 1, id="answer lost, the pod unbound: failed"),
        pytest.param([GATEWAY], [bound_to("n1")], True, 1, id="a 504 the server had taken"),
        pytest.param([INTERNAL, CONFLICT], [bound_to("n1")], True, 1,
                     id="the retry of a taken Binding answers 409: a success"),
        pytest.param([CONFLICT], [bound_to("n2")], False, 1,
                     id="409, bound to another node: failed"),
        pytest.param([RESET], [bound_to("n1", uid="other")], False, 1,
                     id="a namesake bound there is not this pod"),
        pytest.param([RESET], [REFUSED, UNAVAILABLE, bound_to("n1")], True, 3,
                     id="read back once the server answers again"),
        pytest.param([RESET], [ApiError(404, "NotFound", "gone")], False, 1,
                     id="the pod is gone: failed"),
        pytest.param([REFUSED] * 4, [], False, 0, id="never sent (refused): not read back"),
        pytest.param([TIMEOUT_500], [bound_to("n1")], True, 1, id="any 5xx is unknown"),
    ],
)  # fmt: skip
def test_a_binding_of_unknown_outcome_is_read_back(
    outcomes: list[ApiError | None], reads: list[ApiError | JSON], bound: bool, gets: int
) -> None:
    client = ScriptedClient(outcomes, reads)
    binder = ApiBinder(client, TokenBucket(0, 1), sleep=lambda _: None)  # type: ignore[arg-type]
    if bound:
        binder(pod_info("p"), "n1")
    else:
        with pytest.raises(ApiError):
            binder(pod_info("p"), "n1")
    assert client.gets == gets


def test_reading_back_gives_up_after_its_budget() -> None:
    """The server stays down: after VERIFY_SECONDS of reads the binding fails as it was."""
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    client = ScriptedClient([RESET], [REFUSED] * 1000)
    binder = ApiBinder(client, TokenBucket(0, 1), sleep=sleep, clock=lambda: now[0])  # type: ignore[arg-type]
    with pytest.raises(ApiError) as raised:
        binder(pod_info("p"), "n1")
    assert raised.value is RESET
    assert VERIFY_SECONDS - VERIFY_WAITS[1] <= now[0] <= VERIFY_SECONDS


def test_no_binding_to_a_node_deleted_since_the_pod_was_placed() -> None:
    client = ScriptedClient([None])
    binder = ApiBinder(client, TokenBucket(0, 1), node_exists=lambda name: name != "gone")  # type: ignore[arg-type]
    with pytest.raises(NodeGoneError, match=r"^node gone was deleted: default/p not bound$"):
        binder(pod_info("p"), "gone")
    assert client.calls == []
    binder(pod_info("p"), "n1")
    assert len(client.calls) == 1
