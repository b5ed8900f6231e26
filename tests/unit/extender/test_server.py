"""The aiohttp server: routes per verb, sync and async handlers, errors, prefix, health."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from corral.extender import (
    Extender,
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderFilterResult,
    serve_in_thread,
)


def _post(url: str, doc: Any) -> tuple[int, Any]:
    req = urllib.request.Request(
        url, data=json.dumps(doc).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def _extender() -> Extender:
    ext = Extender(prioritize_verb="score")

    @ext.filter
    def _filter(args: ExtenderArgs) -> ExtenderFilterResult:
        if args.pod.get("fail"):
            raise RuntimeError("cannot decide")
        return ExtenderFilterResult.keep(args, [n for n in args.candidates if n != "bad"])

    @ext.prioritize
    async def _score(args: ExtenderArgs) -> dict[str, int]:
        if args.pod.get("fail"):
            raise RuntimeError("scoring broke")
        return {n: len(n) for n in args.candidates}

    @ext.bind
    def _bind(args: ExtenderBindingArgs) -> None:
        return None

    return ext


@pytest.fixture(scope="module")
def url() -> Any:
    with serve_in_thread(_extender(), prefix="/scheduler/") as base:
        yield base


@pytest.mark.parametrize(
    ("verb", "body", "want_status", "want"),
    [
        pytest.param(
            "filter",
            {"Pod": {}, "NodeNames": ["ok", "bad"]},
            200,
            {"Nodes": None, "NodeNames": ["ok"], "FailedNodes": {},
             "FailedAndUnresolvableNodes": {}, "Error": ""},
            id="filter (sync handler)",
        ),
        pytest.param(
            "filter",
            {"Pod": {"fail": True}, "NodeNames": ["ok"]},
            200,
            {"Nodes": None, "NodeNames": None, "FailedNodes": {},
             "FailedAndUnresolvableNodes": {}, "Error": "cannot decide"},
            id="filter handler error -> Error field",
        ),
        pytest.param(
            "score",
            {"Pod": {}, "NodeNames": ["a", "bb"]},
            200,
            [{"Host": "a", "Score": 1}, {"Host": "bb", "Score": 2}],
            id="prioritize under a custom verb (async handler, mapping reply)",
        ),
        pytest.param(
            "score", {"Pod": {"fail": True}, "NodeNames": []}, 500, "scoring broke",
            id="prioritize handler error -> 500",
        ),
        pytest.param(
            "bind",
            {"PodName": "p", "PodNamespace": "d", "PodUID": "u", "Node": "n"},
            200,
            {"Error": ""},
            id="bind returning None is success",
        ),
        pytest.param("filter", ["not", "an", "object"], 400, None, id="undecodable body"),
        pytest.param(
            "score", {"Pod": {}, "Nodes": {"items": [{"metadata": ["x"]}]}}, 400,
            "cannot decode the request: Nodes.items[0].metadata: expected dict, got list",
            id="a node the handler could not name -> 400, not the handler's 500",
        ),
        pytest.param("preempt", {}, 404, None, id="unregistered verb"),
    ],
)  # fmt: skip
def test_verbs(url: str, verb: str, body: Any, want_status: int, want: Any) -> None:
    status, reply = _post(f"{url}/{verb}", body)
    assert status == want_status
    if want is not None:
        assert reply == want


def test_healthz(url: str) -> None:
    assert url.endswith("/scheduler")
    with urllib.request.urlopen(f"{url}/healthz", timeout=5) as resp:
        assert resp.read() == b"ok"
