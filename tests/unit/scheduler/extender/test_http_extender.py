"""HTTPExtender against a real corral.extender server on 127.0.0.1: payload forms, results,
scaling, interest, errors and timeouts, HTTPS."""

from __future__ import annotations

import base64
import re
import time
from pathlib import Path
from typing import Any

import pytest

from corral.extender import (
    ExtenderArgs,
    ExtenderFilterResult,
    ExtenderPreemptionResult,
    MetaPod,
    MetaVictims,
    serve_in_thread,
)
from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.config.types import (
    Extender as ExtenderConfig,
)
from corral.scheduler.config.types import (
    ExtenderManagedResource,
    ExtenderTLSConfig,
)
from corral.scheduler.engine.handlers import ClusterState
from corral.scheduler.extender import HTTPExtender, build_extenders, sends_node_objects
from corral.scheduler.framework.extender import ExtenderError, Victims
from corral.scheduler.framework.types import NodeRecord, Resources
from corral.scheduler.plugins.priority_sort import PrioritySort
from corral.testing.builders import container, node, pod_info

from .conftest import Pki, Script, scripted_extender

NODES = [
    NodeRecord(name=f"n{i}", labels={"zone": "a"}, allocatable=Resources(milli_cpu=4000))
    for i in range(4)
]


def _ext(url: str, **kw: Any) -> HTTPExtender:
    kw.setdefault("filter_verb", "filter")
    kw.setdefault("prioritize_verb", "prioritize")
    kw.setdefault("weight", 1)
    return HTTPExtender(ExtenderConfig(url_prefix=url, **kw))


# --- filter -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cache_capable",
    [pytest.param(True, id="nodeCacheCapable: names"), pytest.param(False, id="full nodes")],
)
def test_filter_payload_form_and_result(scripted: tuple[str, Script], cache_capable: bool) -> None:
    url, script = scripted
    script.keep = {"n1", "n3"}
    script.failed = {"n0": "busy"}
    script.unresolvable = {"n2": "wrong rack"}
    result = _ext(url, node_cache_capable=cache_capable).filter(pod_info("p"), NODES)
    assert result.node_names == ("n1", "n3")
    assert dict(result.failed) == {"n0": "busy"}
    assert dict(result.failed_and_unresolvable) == {"n2": "wrong rack"}
    _verb, args = script.seen[0]
    assert isinstance(args, ExtenderArgs)
    assert args.pod["metadata"]["name"] == "p"
    if cache_capable:
        assert (args.node_names, args.nodes) == (["n0", "n1", "n2", "n3"], None)
    else:
        assert args.node_names is None
        assert [n["metadata"]["name"] for n in args.nodes or ()] == ["n0", "n1", "n2", "n3"]
        assert args.nodes
        assert args.nodes[0]["status"]["allocatable"]["cpu"] == "4000m"


def test_filter_sends_the_raw_node_when_the_record_has_it(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    raw = node("r0", labels={"rack": "7"})
    raw["metadata"]["annotations"] = {"note": "kept"}
    record = NodeRecord(name="r0", raw=raw)
    _ext(url).filter(pod_info("p"), [record])
    assert script.seen[0][1].nodes == [raw]


def _api_node(name: str) -> dict[str, Any]:
    """A Node as the API server serves it: fields no NodeRecord column holds."""
    raw = node(name, labels={"rack": "7"})
    raw["metadata"].update(
        annotations={"node.alpha.kubernetes.io/ttl": "0"},
        managedFields=[{"manager": "kubelet", "operation": "Update"}],
        resourceVersion="41",
    )
    raw["status"].update(
        conditions=[{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        addresses=[{"type": "InternalIP", "address": "10.0.0.7"}],
        capacity={"cpu": "4", "memory": "32Gi", "pods": "110"},
    )
    return raw


@pytest.mark.parametrize(
    ("config", "verb", "sent_whole"),
    [
        pytest.param({}, "filter", True, id="filter, not nodeCacheCapable: the Node as served"),
        pytest.param({"filter_verb": None}, "prioritize", True,
                     id="prioritize only, not nodeCacheCapable: the Node as served"),
        pytest.param({"node_cache_capable": True}, "filter", False,
                     id="nodeCacheCapable: names, the record keeps no JSON"),
        pytest.param({"filter_verb": None, "prioritize_verb": None, "bind_verb": "bind"}, "", False,
                     id="bind only: no Node sent, the record keeps no JSON"),
    ],
)  # fmt: skip
def test_the_engine_sends_an_informer_node_as_the_api_server_has_it(
    scripted: tuple[str, Script], config: dict[str, Any], verb: str, sent_whole: bool
) -> None:
    # The engine's path: a node event into ClusterState, the record from the cache's snapshot.
    url, script = scripted
    ext = _ext(url, **config)
    queue = SchedulingQueue(less=PrioritySort().less, pre_enqueue=lambda _pod, _gating: None)
    state = ClusterState(Cache(), queue, {"default-scheduler"}, lambda _: True,
                         keep_node_objects=sends_node_objects([ext]))  # fmt: skip
    state.on_node("ADDED", _api_node("r0"))
    (record,) = [r for r in state.cache.snapshot().records if r is not None]
    assert bool(record.raw) == sent_whole
    if verb == "filter":
        ext.filter(pod_info("p"), [record])
    elif verb == "prioritize":
        ext.prioritize(pod_info("p"), [record])
    assert [v for v, _args in script.seen] == ([verb] if verb else [])
    if not script.seen:
        return
    args = script.seen[0][1]
    if sent_whole:
        (sent,) = args.nodes or [None]
        assert sent == _api_node("r0")
        assert sent["metadata"]["annotations"] == {"node.alpha.kubernetes.io/ttl": "0"}
        assert sent["status"]["conditions"][0]["type"] == "Ready"
    else:
        assert (args.node_names, args.nodes) == (["r0"], None)


@pytest.mark.parametrize(
    ("reply", "cache_capable", "message"),
    [
        pytest.param(
            ExtenderFilterResult(node_names=["n9"]),
            True,
            'claims a filtered node "n9" which is not found in the input node list',
            id="unknown name",
        ),
        pytest.param(
            ExtenderFilterResult(node_names=["n9\nE1202 fake log line"]),
            True,
            'claims a filtered node "n9\\nE1202 fake log line" which is not found',
            id="unknown name with a newline, escaped",
        ),
        pytest.param(
            ExtenderFilterResult(node_names=["\u2028"]),
            True,
            'claims a filtered node "\\u2028" which is not found',
            id="unknown name that is a line separator, escaped",
        ),
        pytest.param(
            ExtenderFilterResult(error="quota service down"),
            False,
            "quota service down",
            id="Error field",
        ),
    ],
)
def test_filter_errors(
    scripted: tuple[str, Script], reply: ExtenderFilterResult, cache_capable: bool, message: str
) -> None:
    url, script = scripted
    script.raw_reply = reply
    with pytest.raises(ExtenderError) as raised:
        _ext(url, node_cache_capable=cache_capable).filter(pod_info("p"), NODES)
    said = str(raised.value)
    assert message in said
    assert said.splitlines() == [said]  # a peer's text never breaks the line


def test_filter_reply_without_nodes_keeps_none(scripted: tuple[str, Script]) -> None:
    # Upstream reads NodeNames only from nodeCacheCapable extenders; otherwise Nodes, else none.
    url, script = scripted
    script.raw_reply = ExtenderFilterResult(node_names=["n0"])
    assert _ext(url).filter(pod_info("p"), NODES).node_names == ()


def test_no_filter_verb_keeps_every_node_without_a_call(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    result = _ext(url, filter_verb=None).filter(pod_info("p"), NODES)
    assert result.node_names == ("n0", "n1", "n2", "n3")
    assert script.seen == []


# --- prioritize ---------------------------------------------------------------------------------


def test_prioritize_returns_raw_scores_and_weight(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    script.scores = {"n1": 10, "n2": 3}
    priorities, weight = _ext(url, weight=4).prioritize(pod_info("p"), NODES)
    assert {p.host: p.score for p in priorities} == {"n0": 0, "n1": 10, "n2": 3, "n3": 0}
    assert weight == 4


# --- managedResources ---------------------------------------------------------------------------

GPU = "example.com/gpu"


@pytest.mark.parametrize(
    ("containers", "init", "interested"),
    [
        pytest.param([container(cpu="1")], [], False, id="no managed resource"),
        pytest.param([container(**{"example.com/gpu": "1"})], [], True, id="request"),
        pytest.param(
            [{"name": "c", "resources": {"limits": {GPU: "1"}}}], [], True, id="limit only"
        ),
        pytest.param(
            [container(cpu="1")], [container("i", **{"example.com/gpu": "1"})], True, id="init"
        ),
    ],
)
def test_is_interested(containers: list[Any], init: list[Any], interested: bool) -> None:
    managed = [ExtenderManagedResource(name=GPU, ignored_by_scheduler=True)]
    ext = _ext("http://127.0.0.1:1", managed_resources=managed)
    assert ext.is_interested(pod_info("p", containers=containers, init_containers=init)) is (
        interested
    )
    assert _ext("http://127.0.0.1:1").is_interested(pod_info("p")) is True


# --- errors and timeouts ------------------------------------------------------------------------


def test_timeout_is_an_error(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    script.delay = 0.5
    ext = _ext(url, http_timeout="100ms")
    assert ext.timeout == pytest.approx(0.1)
    start = time.monotonic()
    with pytest.raises(ExtenderError, match="Post"):
        ext.filter(pod_info("p"), NODES)
    assert time.monotonic() - start < 0.45


@pytest.mark.parametrize(
    ("timeout", "seconds"),
    [pytest.param(None, 5.0, id="unset"), pytest.param("0s", 5.0, id="zero"),
     pytest.param("2s", 2.0, id="set"),
     pytest.param("-1s", None, id="negative: no timeout, as Go's http.Client")],
)  # fmt: skip
def test_http_timeout_default(timeout: str | None, seconds: float | None) -> None:
    assert _ext("http://127.0.0.1:1", http_timeout=timeout).timeout == seconds


def test_connection_refused_and_bad_status(scripted: tuple[str, Script]) -> None:
    url, _script = scripted
    with pytest.raises(ExtenderError, match="Post"):
        _ext("http://127.0.0.1:9").filter(pod_info("p"), NODES)
    with pytest.raises(ExtenderError, match=r"failed nope with extender at URL .*/nope, code 404"):
        _ext(url, filter_verb="nope").filter(pod_info("p"), NODES)


def test_url_prefix_trailing_slash(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    _ext(url + "/").filter(pod_info("p"), NODES)
    assert script.seen[0][0] == "filter"


def test_ignorable_extenders_go_last() -> None:
    configs = [
        ExtenderConfig(url_prefix="http://a", ignorable=True),
        ExtenderConfig(url_prefix="http://b"),
        ExtenderConfig(url_prefix="http://c", ignorable=True),
        ExtenderConfig(url_prefix="http://d"),
    ]
    assert [e.name for e in build_extenders(configs)] == [
        "http://b",
        "http://d",
        "http://a",
        "http://c",
    ]


# --- bind and preempt ---------------------------------------------------------------------------


def test_bind(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    ext = _ext(url, bind_verb="bind")
    assert ext.is_binder()
    ext.bind(pod_info("p", namespace="ns"), "n2")
    args = script.seen[0][1]
    assert (args.pod_name, args.pod_namespace, args.pod_uid, args.node) == (
        "p",
        "ns",
        "uid-ns-p",
        "n2",
    )
    script.error = "node is full"
    with pytest.raises(ExtenderError, match="node is full"):
        ext.bind(pod_info("p"), "n2")


@pytest.mark.parametrize(
    "cache_capable", [pytest.param(True, id="meta"), pytest.param(False, id="full")]
)
def test_process_preemption(scripted: tuple[str, Script], cache_capable: bool) -> None:
    url, script = scripted
    v1, v2 = pod_info("v1", node_name="n0"), pod_info("v2", node_name="n0")
    on_node = {"n0": [v1, v2], "n1": []}
    ext = _ext(url, preempt_verb="preempt", node_cache_capable=cache_capable)
    # The extender keeps n0 with one of the two victims.
    script.preempt = ExtenderPreemptionResult({"n0": MetaVictims([MetaPod(v2.uid)], 1)})
    got = ext.process_preemption(pod_info("p"), {"n0": Victims((v1, v2))}, lambda n: on_node[n])
    assert got == {"n0": Victims((v2,), 1)}
    sent = script.seen[0][1]
    if cache_capable:
        assert sent.node_name_to_victims is None
        assert [m.uid for m in sent.node_name_to_meta_victims["n0"].pods] == [v1.uid, v2.uid]
    else:
        assert sent.node_name_to_meta_victims is None
        assert [p["metadata"]["name"] for p in sent.node_name_to_victims["n0"].pods] == ["v1", "v2"]
    script.preempt = ExtenderPreemptionResult({"n0": MetaVictims([MetaPod("ghost")])})
    with pytest.raises(ExtenderError, match="claims to preempt pod"):
        ext.process_preemption(pod_info("p"), {"n0": Victims((v1,))}, lambda n: on_node[n])
    script.preempt = ExtenderPreemptionResult({"n0": MetaVictims([MetaPod("g\u2028x")])})
    with pytest.raises(ExtenderError) as raised:
        ext.process_preemption(pod_info("p"), {"n0": Victims((v1,))}, lambda n: on_node[n])
    assert "(UID: g\\u2028x)" in str(raised.value)
    assert len(str(raised.value).splitlines()) == 1


# --- HTTPS --------------------------------------------------------------------------------------


def _tls_server(pki: Pki, *, require_client_cert: bool = False) -> Any:
    ctx = pki.server_context(require_client_cert=require_client_cert)
    return serve_in_thread(scripted_extender(Script), ssl_context=ctx)


@pytest.mark.parametrize(
    ("tls", "ok"),
    [
        pytest.param(lambda p: ExtenderTLSConfig(ca_data=p.b64(p.ca)), True, id="caData"),
        pytest.param(lambda p: ExtenderTLSConfig(ca_file=str(p.ca)), True, id="caFile"),
        pytest.param(lambda p: None, True, id="no CA: verification skipped"),
        pytest.param(lambda p: ExtenderTLSConfig(insecure=True), True, id="insecure"),
        pytest.param(
            lambda p: ExtenderTLSConfig(ca_file=str(p.ca), server_name="other.example"),
            False,
            id="serverName mismatch",
        ),
    ],
)
def test_https(pki: Pki, tls: Any, ok: bool) -> None:
    with _tls_server(pki) as url:
        ext = _ext(url, enable_https=True, tls_config=tls(pki))
        if ok:
            assert ext.filter(pod_info("p"), NODES[:1]).node_names == ("n0",)
        else:
            with pytest.raises(ExtenderError):
                ext.filter(pod_info("p"), NODES[:1])


@pytest.mark.parametrize(
    ("tls", "warned"),
    [
        pytest.param(lambda p: None, True, id="enableHTTPS without a CA"),
        pytest.param(lambda p: ExtenderTLSConfig(insecure=True), True, id="insecure"),
        pytest.param(lambda p: ExtenderTLSConfig(ca_data=p.b64(p.ca)), False, id="a CA: silent"),
    ],
)
def test_unverified_tls_is_said_once_naming_the_extender(
    pki: Pki, tls: Any, warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("WARNING", logger="corral.scheduler.extender.client")
    _ext("https://user:pw@ext.example:8443/x?t=1", enable_https=True, tls_config=tls(pki))
    said = [r.getMessage() for r in caplog.records]
    expected = (
        'extender "https://***@ext.example:8443/x?***": tlsConfig: the server\'s certificate '
        "is not verified (insecure, or enableHTTPS without caFile or caData)"
    )
    assert said == ([expected] if warned else [])


def test_https_untrusted_without_enable_https_fails(pki: Pki) -> None:
    # enableHTTPS false and no tlsConfig: system roots, which do not know our test CA.
    with _tls_server(pki) as url, pytest.raises(ExtenderError):
        _ext(url).filter(pod_info("p"), NODES[:1])


@pytest.mark.parametrize(
    "as_data", [pytest.param(True, id="data"), pytest.param(False, id="files")]
)
def test_https_client_certificate(pki: Pki, as_data: bool) -> None:
    if as_data:
        tls = ExtenderTLSConfig(
            ca_data=pki.b64(pki.ca),
            cert_data=pki.b64(pki.client_cert),
            key_data=pki.b64(pki.client_key),
        )
    else:
        tls = ExtenderTLSConfig(
            ca_file=str(pki.ca), cert_file=str(pki.client_cert), key_file=str(pki.client_key)
        )
    with _tls_server(pki, require_client_cert=True) as url:
        assert _ext(url, enable_https=True, tls_config=tls).filter(
            pod_info("p"), NODES[:1]
        ).node_names == ("n0",)
        no_cert = _ext(url, enable_https=True, tls_config=ExtenderTLSConfig(ca_file=str(pki.ca)))
        with pytest.raises(ExtenderError):
            no_cert.filter(pod_info("p"), NODES[:1])


def test_insecure_with_ca_is_refused(pki: Pki) -> None:
    with pytest.raises(ValueError, match="insecure flag is not allowed"):
        _ext("https://x", tls_config=ExtenderTLSConfig(insecure=True, ca_file=str(pki.ca)))


NOT_PEM = "unable to load root certificates: unable to parse bytes as PEM block"


@pytest.mark.parametrize(
    ("content", "field", "message"),
    [
        pytest.param(b"\xff\xfe", "caFile", NOT_PEM, id="ca-file-not-ascii"),
        pytest.param(b"", "caFile", NOT_PEM, id="ca-file-empty"),
        pytest.param(b"plain text", "caFile", "unable to load root certificates: no start line",
                     id="ca-file-no-pem"),
        pytest.param(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                     "caFile", "unable to load root certificates: ", id="ca-file-bad-block"),
        pytest.param(b"\xff", "caData", NOT_PEM, id="ca-data-not-ascii"),
        pytest.param(b"plain text", "certFile/keyFile",
                     "unable to load the client certificate and key: ", id="cert-not-pem"),
    ],
)  # fmt: skip
def test_unusable_tls_material_is_one_line_naming_its_field(
    tmp_path: Path, content: bytes, field: str, message: str
) -> None:
    """A CA that is not ASCII raised a TypeError out of ``ssl`` (a traceback from `corral
    validate`); the others said OpenSSL's words without the field."""
    (tmp_path / "f").write_bytes(content)
    path = str(tmp_path / "f")
    tls = {
        "caFile": ExtenderTLSConfig(ca_file=path),
        "caData": ExtenderTLSConfig(ca_data=base64.b64encode(content).decode()),
        "certFile/keyFile": ExtenderTLSConfig(cert_file=path, key_file=path, insecure=True),
    }[field]
    with pytest.raises(ValueError, match=f"^tlsConfig.{re.escape(field)}: ") as caught:
        _ext("https://x", tls_config=tls)
    assert str(caught.value).startswith(f"tlsConfig.{field}: {message}"), caught.value
    assert "\n" not in str(caught.value)
    assert "_ssl.c" not in str(caught.value)


class _Reply:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def post(self, url: str, body: bytes, *, max_reply: int) -> tuple[int, bytes]:
        return 200, self.body


@pytest.mark.parametrize(
    ("verb", "reply", "message"),
    [
        pytest.param("filter", b'{"Error": "down\\nfor maintenance"}', "down\\nfor maintenance",
                     id="filter error text kept on one line"),
        pytest.param("bind", b'{"Error": "no\\r\\nway"}', "no\\r\\nway", id="bind error text"),
        pytest.param("filter", b'{"Error": " "}', "the extender answered with an error it left "
                     "blank (' ')", id="a blank error text is an error, said so"),
        pytest.param("prioritize", b'[{"Host": "n0", "Score": 9223372036854775808}]',
                     "Score: 9223372036854775808 does not fit in a 64-bit integer",
                     id="score beyond int64"),
    ],
)  # fmt: skip
def test_a_peer_reply_becomes_one_line_extender_error(
    verb: str, reply: bytes, message: str
) -> None:
    ext = HTTPExtender(
        ExtenderConfig(url_prefix="http://x", filter_verb="filter", prioritize_verb="prioritize",
                       bind_verb="bind", weight=1),
        transport=_Reply(reply),
    )  # fmt: skip
    calls = {
        "filter": lambda: ext.filter(pod_info("p"), NODES),
        "bind": lambda: ext.bind(pod_info("p"), "n0"),
        "prioritize": lambda: ext.prioritize(pod_info("p"), NODES),
    }
    with pytest.raises(ExtenderError) as caught:
        calls[verb]()
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
