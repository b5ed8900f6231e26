"""The fault tests' verdict (tests/support/bindings.py) from an audit log: a pod bound by a
Binding whose answer did not say so (cut, 5xx, etcd unreachable) is taken once; a pod bound
with no Binding of its own that could have done it is a failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.bindings import verdict

NS = "f-1"
UNAVAILABLE = 'Operation cannot be fulfilled on pods/binding "p": rpc error: code = Unavailable'
ASSIGNED = (
    'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n"'
)


class Kube:
    def __init__(self, node: str) -> None:
        self.node = node

    def list_items(self, api_version: str, kind: str, namespace: str | None = None) -> Any:
        if kind == "Node":
            return [{"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1"}}}]
        pod = {"metadata": {"name": "p", "uid": "u"}, "spec": {"nodeName": self.node,
               "containers": [{"name": "c"}]}}  # fmt: skip
        return [pod]


def answered(audit: int, code: int, message: str = "", node: str = "n") -> list[dict[str, Any]]:
    ref = {"resource": "pods", "subresource": "binding", "namespace": NS, "name": "p"}
    at = f"2026-12-02T14:41:{audit:02d}.000000Z"
    received = {"stage": "RequestReceived", "auditID": str(audit), "objectRef": ref,
                "requestReceivedTimestamp": at}  # fmt: skip
    done = {**received, "stage": "ResponseComplete", "responseStatus": {"code": code,
            "message": message}, "requestObject": {"metadata": {"uid": "u"},
            "target": {"name": node}}}  # fmt: skip
    return [received, done]


@pytest.mark.parametrize(
    ("records", "failures", "committed"),
    [
        pytest.param(answered(1, 201), [], 0, id="one 201"),
        pytest.param(answered(1, 409, UNAVAILABLE), [], 1, id="a 409 with etcd unreachable"),
        pytest.param(answered(1, 500, "etcdserver: request timed out"), [], 1, id="a 5xx"),
        pytest.param(
            answered(1, 409, ASSIGNED),
            ["p: bound to n with no Binding in the audit log"],
            0,
            id="only a 409 for a pod already bound",
        ),
        pytest.param(
            answered(1, 409, UNAVAILABLE, node="other"),
            ["p: bound to n with no Binding in the audit log"],
            0,
            id="etcd unreachable, another node",
        ),
        pytest.param(
            answered(1, 201) + answered(2, 201), ["p: 2 Bindings accepted"], 0, id="two 201s"
        ),
    ],
)
def test_verdict(
    tmp_path: Path, records: list[dict[str, Any]], failures: list[str], committed: int
) -> None:
    log = tmp_path / "audit.log"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = verdict(Kube("n"), NS, {"p": "u"}, log)  # type: ignore[arg-type]
    assert result.failures == failures
    assert result.committed_cut == committed
