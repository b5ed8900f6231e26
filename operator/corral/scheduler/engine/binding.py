"""Posting Bindings (the ``PodBinder`` DefaultBinder calls) and announcing them (the pod's
``status.nominatedNodeName``), run on the binding threads.

Upstream's DefaultBinder creates ``pods/<name>/binding`` with the pod's UID (so a pod deleted
and recreated under the same name is never bound by mistake) and ``target`` the Node. Every
call takes a token from the engine's shared bucket (``clientConnection.qps``/``burst``).

Since 1.37 (``util.BindPod``) a Binding the API server could not take for a transient reason is
posted again: up to 4 attempts, 10 ms, 50 ms and 250 ms apart (client-go's ``DefaultBackoff``,
each wait up to 10% longer at random), when the answer is an InternalError or ServiceUnavailable
(by reason, or by status 500/503 with a reason the API does not define) or the connection was
refused. Any other error, or the last attempt's, fails the binding as before.

A Binding whose outcome is unknown — an attempt the server may have taken without its answer
arriving (a connection cut after sending, a 5xx), or a 409 (the pod already has a node) — is
not taken for a failure until the pod says so: the binder reads it back (:data:`VERIFY_SECONDS`
at most, retried while the server is unreachable) and a pod bound to this node is a success.
Upstream fails the binding there: the scheduler forgets the pod it had assumed on the node
while the server holds it bound, places another pod in its room, and the node ends
overcommitted once the watch reports the first (a kube-apiserver crash mid-burst did that to 3
of 10 nodes in tests/e2e/faults/test_control_plane_restarts.py).

Nor is a Binding posted to a node the engine has seen deleted since the pod was placed (a
binding cycle queued behind others, or waiting in Permit or PreBind, outlives the cycle that
chose the node): the API server would take it, the pod would be bound to no node, and
kube-controller-manager's pod garbage collector would delete it. The binding fails instead and
the pod is placed again. Upstream posts it. In one run of tests/e2e/faults/test_node_deleted.py
the check held back 22 Bindings; the 9 posted before the engine's watch reported the deletion
still went to the deleted node (13 before the check).

With leader election, a Binding is posted only while the engine's :class:`WriteFence` is
open, checked after the rate limiter's wait, right before each attempt: an engine that lost its
Lease (or is shutting down) sends no more, even from a binding thread that was waiting then.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Final

from corral.k8s import CONTENT_JSON, CONTENT_STRATEGIC_MERGE_PATCH, Client
from corral.k8s.client import ApiError
from corral.k8s.ratelimit import TokenBucket
from corral.scheduler.engine.leaderelection import WriteFence
from corral.scheduler.engine.timing import Tally
from corral.scheduler.framework.types import PodInfo

log = logging.getLogger("corral.scheduler")

# client-go retry.DefaultBackoff: Steps 4, Duration 10ms, Factor 5, Jitter 0.1.
BIND_ATTEMPTS: Final = 4
BIND_FIRST_WAIT_SECONDS: Final = 0.010
BIND_WAIT_FACTOR: Final = 5.0
BIND_WAIT_JITTER: Final = 0.1
# Reading a pod back after a Binding of unknown outcome: this long at most (an API server
# restart takes seconds), the reads this far apart at first, doubling to the last.
VERIFY_SECONDS: Final = 30.0
VERIFY_WAITS: Final = (0.1, 2.0)

# apimachinery's StatusReasons: a 500/503 carrying one of these is not an Internal/Unavailable one.
_KNOWN_REASONS: Final = frozenset(
    {
        "Unauthorized", "Forbidden", "NotFound", "AlreadyExists", "Conflict", "Gone", "Invalid",
        "ServerTimeout", "StoreReadError", "Timeout", "TooManyRequests", "BadRequest",
        "MethodNotAllowed", "NotAcceptable", "RequestEntityTooLarge", "UnsupportedMediaType",
        "InternalError", "Expired", "ServiceUnavailable",
    }
)  # fmt: skip


def _by_reason(err: ApiError, reason: str, status: int) -> bool:
    return err.reason == reason or (err.status == status and err.reason not in _KNOWN_REASONS)


def _connection_refused(err: BaseException) -> bool:
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, ConnectionRefusedError):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def retriable(err: ApiError) -> bool:
    """Upstream ``util.Retriable``: IsInternalError, IsServiceUnavailable or connection refused."""
    if err.status == 0:
        return _connection_refused(err)
    return _by_reason(err, "InternalError", 500) or _by_reason(err, "ServiceUnavailable", 503)


def outcome_unknown(err: ApiError) -> bool:
    """Whether the server may have taken the request this error answers: a transport failure
    other than a refused connection (nothing was sent then), or a 5xx."""
    if err.status == 0:
        return not _connection_refused(err)
    return err.status >= 500


def retriable_with_conflict(err: ApiError) -> bool:
    """Upstream ``util.RetriableWithConflict``: ``retriable`` or a conflict."""
    return err.conflict or retriable(err)


def on_error(
    call: Callable[[], object],
    retry_if: Callable[[ApiError], bool],
    *,
    sleep: Callable[[float], None],
    rng: random.Random,
) -> None:
    """client-go ``retry.OnError`` with ``DefaultBackoff``: ``call`` up to ``BIND_ATTEMPTS``
    times while it raises an ``ApiError`` that ``retry_if`` accepts; the last error raises."""
    wait = BIND_FIRST_WAIT_SECONDS
    for attempt in range(1, BIND_ATTEMPTS + 1):
        try:
            call()
        except ApiError as err:
            if attempt == BIND_ATTEMPTS or not retry_if(err):
                raise
            sleep(wait * (1 + rng.random() * BIND_WAIT_JITTER))
            wait *= BIND_WAIT_FACTOR
        else:
            return


class NodeGoneError(RuntimeError):
    """The chosen node was deleted before the Binding was posted (the pod is placed again)."""


class ApiBinder:
    def __init__(
        self,
        client: Client,
        bucket: TokenBucket,
        tally: Tally | None = None,
        *,
        content_type: str = CONTENT_JSON,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        fence: WriteFence | None = None,
        clock: Callable[[], float] = time.monotonic,
        node_exists: Callable[[str], bool] = lambda _name: True,
    ) -> None:
        self.client = client
        self.bucket = bucket
        self.fence = fence or WriteFence()
        self._clock = clock
        self._node_exists = node_exists  # the engine's cache: the node was not deleted
        self.content_type = content_type  # clientConnection.contentType: protobuf upstream
        self.tally = tally or Tally()  # the calls' wall and CPU time, rate-limiter wait included
        self._sleep = sleep
        self._rng = rng or random.Random()

    def __call__(self, pod: PodInfo, node_name: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"

        unknown = False

        def post() -> None:
            nonlocal unknown
            with self.tally.span():
                self.bucket.wait("POST")
                self.fence.check(f"the Binding of {pod.key} to {node_name}")
                if not self._node_exists(node_name):
                    raise NodeGoneError(f"node {node_name} was deleted: {pod.key} not bound")
                log.debug('Attempting to bind pod to node pod="%s" node="%s"', pod.key, node_name)
                try:
                    self.client.send(path, body, content_type=self.content_type)
                except ApiError as err:
                    unknown = unknown or outcome_unknown(err)
                    raise

        try:
            on_error(post, retriable, sleep=self._sleep, rng=self._rng)
        except ApiError as err:
            if (unknown or err.conflict) and self._bound_to(pod, node_name):
                return  # one of the attempts was taken: the pod is bound here
            raise

    def _bound_to(self, pod: PodInfo, node_name: str) -> bool:
        """Read the pod back (retried while the server cannot answer, for
        :data:`VERIFY_SECONDS`): True when this very pod is bound to ``node_name``."""
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        wait, deadline = VERIFY_WAITS[0], self._clock() + VERIFY_SECONDS
        while True:
            try:
                self.bucket.wait("GET")
                found = self.client.request("GET", path)
            except ApiError as err:
                if err.not_found or not (err.status == 0 or err.status >= 500):
                    return False
                if self._clock() + wait > deadline:
                    return False
                self._sleep(wait)
                wait = min(2 * wait, VERIFY_WAITS[1])
                continue
            meta, spec = found.get("metadata") or {}, found.get("spec") or {}
            return bool(meta.get("uid") == pod.uid and spec.get("nodeName") == node_name)


class ApiNominatedNodeWriter:
    """The binding cycle's ``announce``: sets ``status.nominatedNodeName`` of a pod about to be
    bound, as upstream's ``util.PatchPodStatus`` does (a strategic-merge patch of the status
    subresource, retried on transient errors and conflicts). Raises on failure."""

    def __init__(
        self,
        client: Client,
        bucket: TokenBucket,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.bucket = bucket
        self._sleep = sleep
        self._rng = rng or random.Random()

    def __call__(self, pod: PodInfo, node_name: str) -> None:
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"
        body = {"status": {"nominatedNodeName": node_name}}

        def patch() -> None:
            self.bucket.wait("PATCH")
            self.client.request("PATCH", path, body=body,
                                content_type=CONTENT_STRATEGIC_MERGE_PATCH)  # fmt: skip

        on_error(patch, retriable_with_conflict, sleep=self._sleep, rng=self._rng)
