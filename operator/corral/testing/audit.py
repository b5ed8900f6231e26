"""An audit log of the writes made by the ServiceAccounts of one namespace, for tests that must
prove an identity wrote nothing it should not (a shadow scheduler: no Binding, no pod status, no
Event).

The session cluster of :mod:`corral.testing.pytest_plugin` runs kube-apiserver with
:func:`args`: every request other than a read (get, list, watch) by a ServiceAccount of
:data:`NAMESPACE`, refused ones included, is logged once it is answered (``Metadata`` level:
who, what, the answer's code). Nobody else's request is logged, so the log costs the other
tests nothing. Run the identity under test as a ServiceAccount of :data:`NAMESPACE` and read
its writes with :func:`writes`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

NAMESPACE: Final = "corral-audited"
LOG: Final = "audit.log"
READS: Final = frozenset({"get", "list", "watch"})
WRITES: Final = ("create", "update", "patch", "delete", "deletecollection")

POLICY: Final = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {
            "level": "Metadata",
            "userGroups": [f"system:serviceaccounts:{NAMESPACE}"],
            "verbs": list(WRITES),
        },
        {"level": "None"},
    ],
}


def args(directory: Path) -> list[str]:
    """kube-apiserver's flags for :data:`POLICY`, its file written to ``directory``, logging to
    ``directory / LOG`` (JSON lines, each written before its answer is sent: blocking mode)."""
    directory.mkdir(parents=True, exist_ok=True)
    policy = directory / "audit-policy.json"
    policy.write_text(json.dumps(POLICY))
    return [
        f"--audit-policy-file={policy}",
        f"--audit-log-path={directory / LOG}",
        "--audit-log-format=json",
        "--audit-log-mode=blocking",
        "--audit-log-maxsize=0",  # no rotation: one file for the cluster's life
    ]


def username(account: str) -> str:
    """The user name of the ServiceAccount ``account`` of :data:`NAMESPACE`."""
    return f"system:serviceaccount:{NAMESPACE}:{account}"


@dataclass(frozen=True)
class Write:
    """One request that was not a read, as the API server answered it."""

    verb: str
    resource: str  # "pods", "pods/binding", "leases.coordination.k8s.io", ...
    namespace: str
    name: str
    code: int
    # When the API server received it (seconds since the epoch, its clock); not compared.
    received: float = field(default=0.0, compare=False)

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.verb} {self.resource} {where} -> {self.code}"


def writes(log: Path, user: str) -> list[Write]:
    """Every request but a read that ``user`` made, in the order the API server answered them
    (refused ones too: a 403 is logged like a 201)."""
    found: list[Write] = []
    for event in _events(log):
        if (event.get("user") or {}).get("username") != user or event.get("verb") in READS:
            continue
        if event.get("stage") != "ResponseComplete":
            continue
        ref: dict[str, Any] = event.get("objectRef") or {}
        resource = str(ref.get("resource", ""))
        if ref.get("apiGroup"):
            resource += f".{ref['apiGroup']}"
        if ref.get("subresource"):
            resource += f"/{ref['subresource']}"
        code = int((event.get("responseStatus") or {}).get("code", 0))
        received = datetime.fromisoformat(str(event["requestReceivedTimestamp"])).timestamp()
        found.append(Write(str(event["verb"]), resource, str(ref.get("namespace", "")),
                           str(ref.get("name", "")), code, received))  # fmt: skip
    return found


def _events(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        return
    with path.open("rb") as f:
        for line in f:
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError:
                    continue  # the last line of a killed server may be cut
