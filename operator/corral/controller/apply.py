"""Applying a profile's rendered objects: server-side apply, no churn, pruning, error meaning.

Contract:
- Every object is applied with server-side apply, field manager ``corral``, ``force=true`` (the
  operator owns the fields it renders; anyone else's change to them is drift and is reverted).
- An object is skipped without a request when the operator applied the same content and the
  live object still says what the apply's answer said, status and the metadata every write
  changes aside (:func:`~corral.controller.state.content_digest`): the Deployment controller's
  status updates move the resourceVersion, not what the operator owns, so they cost no apply.
  Otherwise it is applied; the API server does not persist an apply that changes nothing, so
  the resourceVersion stays put. A write is therefore exactly "the returned resourceVersion
  differs from the live one".
- Children of the profile that are no longer rendered (the PodDisruptionBudget when replicas
  drop to 1, RoleBindings of a namespace removed from tenancy) are deleted.
- API errors are sorted into ``TransientError`` (the request may succeed as is later) and
  ``RefusedError`` (someone must act: a missing namespace, a permission the operator lacks,
  an object the API rejects), each with a message that names the object.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from corral.controller.settings import FIELD_MANAGER
from corral.controller.state import ChildKey, State, content_digest, describe, key_of
from corral.k8s import ApiError, Client

TRANSIENT_STATUSES = frozenset({0, 409, 429, 500, 502, 503, 504})


class TransientError(Exception):
    """A transient failure; reconcile again after a backoff."""


class RefusedError(Exception):
    """The API refused an object for a reason someone must fix; ``reason`` is CamelCase."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(slots=True)
class Result:
    applied: int = 0
    written: list[ChildKey] = field(default_factory=list)
    repaired: list[ChildKey] = field(default_factory=list)  # drift reverted
    pruned: list[ChildKey] = field(default_factory=list)
    skipped: int = 0


def digest(obj: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def classify(exc: ApiError, key: ChildKey, verb: str) -> Exception:
    what = describe(key)
    if exc.status in TRANSIENT_STATUSES or exc.status >= 500:
        return TransientError(f"{verb} {what}: {exc}")
    if exc.status == 404 and key[2] and "namespaces" in exc.message:
        return RefusedError(
            "NamespaceMissing",
            f"namespace {key[2]!r} does not exist; create it (the operator does not create "
            f"namespaces), needed for {what}",
        )
    if exc.forbidden:
        return RefusedError(
            "Forbidden",
            f"the operator may not {verb} {what}: {exc.message}. Grant the operator what the "
            "profile's scheduler needs (config/rbac), since Kubernetes lets it grant only "
            "permissions it holds",
        )
    return RefusedError("ApplyRejected", f"the API server rejected {what}: {exc.message}")


def apply_all(client: Client, state: State, objects: Sequence[Mapping[str, Any]]) -> Result:
    """Apply ``objects`` in order (RBAC before the Deployment that needs it)."""
    result = Result()
    for obj in objects:
        key = key_of(obj)
        want = digest(obj)
        live = state.child(key)
        applied = state.applied(key)
        if live is not None and applied == (want, live.content):
            result.skipped += 1
            continue
        try:
            answer = client.apply(obj, field_manager=FIELD_MANAGER, force=True)
        except ApiError as exc:
            raise classify(exc, key, "apply") from exc
        result.applied += 1
        rv = str(answer.get("metadata", {}).get("resourceVersion", ""))
        if live is None or rv != live.resource_version:
            result.written.append(key)
            # Same content as we last applied, yet the live object had changed and the apply
            # wrote: someone changed fields the operator owns.
            if live is not None and applied is not None and applied[0] == want:
                result.repaired.append(key)
        state.record_apply(key, want, content_digest(answer))
        state.put_child(answer)
    return result


def prune(
    client: Client, state: State, profile: str, objects: Sequence[Mapping[str, Any]]
) -> list[ChildKey]:
    """Delete the profile's children that are no longer rendered."""
    wanted = {key_of(o) for o in objects}
    gone: list[ChildKey] = []
    for key in state.children_of(profile):
        if key in wanted:
            continue
        api_version, kind, namespace, name = key
        try:
            client.delete(api_version, kind, name, namespace or None)
        except ApiError as exc:
            raise classify(exc, key, "delete") from exc
        gone.append(key)
    state.forget_applied(gone)
    return gone
