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

With leader election, a Binding is posted only while the engine's :class:`WriteFence` is
open, checked after the rate limiter's wait, right before each attempt: an engine that lost its
Lease (or is shutting down) sends no more, even from a binding thread that was waiting then.
"""

from __future__ import annotations

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

# client-go retry.DefaultBackoff: Steps 4, Duration 10ms, Factor 5, Jitter 0.1.
BIND_ATTEMPTS: Final = 4
BIND_FIRST_WAIT_SECONDS: Final = 0.010
BIND_WAIT_FACTOR: Final = 5.0
BIND_WAIT_JITTER: Final = 0.1

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
    ) -> None:
        self.client = client
        self.bucket = bucket
        self.fence = fence or WriteFence()
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

        def post() -> None:
            with self.tally.span():
                self.bucket.wait()
                self.fence.check(f"the Binding of {pod.key} to {node_name}")
                self.client.send(path, body, content_type=self.content_type)

        on_error(post, retriable, sleep=self._sleep, rng=self._rng)


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
            self.bucket.wait()
            self.client.request("PATCH", path, body=body,
                                content_type=CONTENT_STRATEGIC_MERGE_PATCH)  # fmt: skip

        on_error(patch, retriable_with_conflict, sleep=self._sleep, rng=self._rng)
