"""``HTTPExtender``: upstream's ``pkg/scheduler/extender.go`` over :mod:`corral.extender.types`.

Behaviour carried over from upstream:
- POST ``TrimRight(urlPrefix, "/") + "/" + verb`` with a JSON body; only HTTP 200 with a JSON
  body is an answer. The name of an extender is its ``urlPrefix``.
- nodeCacheCapable extenders get node names (``NodeNames``), others full Node objects
  (``Nodes``). A nodeCacheCapable filter reply naming a node that was not sent is an error; a
  reply in the other form is read from ``Nodes``; a reply with neither keeps no node.
- A verb left empty means the extender does not take part: filter keeps every node, prioritize
  scores 0 with weight 0.
- ``managedResources``: when set, the extender is consulted only for pods whose containers or
  init containers request or limit one of them.

Deviation: a non-nodeCacheCapable filter reply naming a node that was not sent is an error too
(upstream would schedule onto the node object the extender made up).
"""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from corral.extender import types as wire
from corral.scheduler.config.decode import parse_duration
from corral.scheduler.config.errors import printable, quote
from corral.scheduler.config.extender_urls import redact_url
from corral.scheduler.config.types import Extender as ExtenderConfig
from corral.scheduler.extender.nodes import node_json
from corral.scheduler.extender.transport import (
    DEFAULT_TIMEOUT_SECONDS,
    PoolTransport,
    Transport,
    tls_context,
)
from corral.scheduler.framework.extender import (
    ExtenderError,
    FilterResult,
    HostPriority,
    PodsOnNode,
    Victims,
)
from corral.scheduler.framework.types import NodeRecord, PodInfo

_T = TypeVar("_T")
# An answer may be this large whatever was sent, or twice the request: a filter reply names
# at most the nodes sent (plus a reason per failed node), and the other replies are smaller.
MIN_MAX_REPLY_BYTES: Final = 16 * 2**20
REPLY_PER_REQUEST_BYTE: Final = 2
UNVERIFIED: Final = (
    'extender "%s": tlsConfig: the server\'s certificate is not verified (insecure, or '
    "enableHTTPS without caFile or caData)"
)
logger = logging.getLogger(__name__)


def _peer_error(text: str) -> str:
    """An extender's ``Error``: any non-empty text fails the call, as upstream; shown on one
    line, and said so when it is only blanks."""
    shown = printable(text).strip()
    return shown or f"the extender answered with an error it left blank ({text!r})"


def max_reply(request_bytes: int) -> int:
    """The largest answer read for a request of ``request_bytes``."""
    return max(MIN_MAX_REPLY_BYTES, REPLY_PER_REQUEST_BYTE * request_bytes)


def _timeout(cfg: ExtenderConfig) -> float | None:
    """Upstream's: 0 (or unset) is the 5 s default; a negative one is accepted and means no
    timeout (Go's http.Client only sets a deadline for a positive Timeout)."""
    seconds = parse_duration(cfg.http_timeout) if cfg.http_timeout else 0.0
    if seconds < 0:
        return None
    return seconds or DEFAULT_TIMEOUT_SECONDS


class HTTPExtender:
    """Implements :class:`corral.scheduler.framework.extender.Extender` over HTTP(S)."""

    def __init__(self, cfg: ExtenderConfig, *, transport: Transport | None = None) -> None:
        """Raises ``ValueError`` for an unusable TLS configuration or timeout."""
        self.url_prefix = cfg.url_prefix
        self.filter_verb = cfg.filter_verb or ""
        self.prioritize_verb = cfg.prioritize_verb or ""
        self.bind_verb = cfg.bind_verb or ""
        self.preempt_verb = cfg.preempt_verb or ""
        self._weight = cfg.weight or 0
        self.node_cache_capable = bool(cfg.node_cache_capable)
        self.managed_resources = frozenset(r.name for r in cfg.managed_resources)
        self.ignorable = bool(cfg.ignorable)
        self.timeout = _timeout(cfg)
        if transport is None:
            tls = cfg.tls_config
            context = tls_context(tls, enable_https=bool(cfg.enable_https))
            if context is not None and context.verify_mode == ssl.CERT_NONE:
                # Configured so on purpose (insecure, or enableHTTPS without a CA): said once,
                # naming the extender (several may be configured).
                logger.warning(UNVERIFIED, self.name)
            transport = PoolTransport(
                timeout=self.timeout,
                ssl_context=context,
                server_name=tls.server_name if tls else None,
            )
        self._transport = transport

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name!r})"

    # --- identity and capabilities ------------------------------------------------------------

    @property
    def name(self) -> str:
        """Upstream's is the ``urlPrefix``; shown without credentials or a query."""
        return redact_url(self.url_prefix)

    @property
    def weight(self) -> int:
        return self._weight

    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def is_ignorable(self) -> bool:
        return self.ignorable

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_interested(self, pod: PodInfo) -> bool:
        if not self.managed_resources:
            return True
        spec = pod.raw.get("spec") or {}
        for containers in (spec.get("containers"), spec.get("initContainers")):
            for container in containers or ():
                resources = container.get("resources") or {}
                for kind in ("requests", "limits"):
                    if self.managed_resources.intersection(resources.get(kind) or ()):
                        return True
        return False

    # --- verbs --------------------------------------------------------------------------------

    def filter(self, pod: PodInfo, nodes: Sequence[NodeRecord]) -> FilterResult:
        if not self.filter_verb:
            return FilterResult(tuple(n.name for n in nodes))
        doc = self._send(self.filter_verb, self._args(pod, nodes).to_json())
        result = self._decode(wire.ExtenderFilterResult.from_json, doc)
        if result.error:
            raise ExtenderError(_peer_error(result.error))
        as_node_objects = False
        if self.node_cache_capable and result.node_names is not None:
            kept = list(result.node_names)
        elif result.nodes is not None:
            kept = [wire.node_name(n) for n in result.nodes]
            as_node_objects = True
        else:
            kept = []
        sent = {n.name for n in nodes}
        for name in kept:
            if name not in sent:
                raise ExtenderError(
                    f'extender "{self.name}" claims a filtered node {quote(name)} which is not '
                    "found in the input node list"
                )
        return FilterResult(
            tuple(kept),
            result.failed_nodes,
            result.failed_and_unresolvable_nodes,
            as_node_objects=as_node_objects,
        )

    def prioritize(
        self, pod: PodInfo, nodes: Sequence[NodeRecord]
    ) -> tuple[Sequence[HostPriority], int]:
        if not self.prioritize_verb:
            return [HostPriority(n.name, 0) for n in nodes], 0
        doc = self._send(self.prioritize_verb, self._args(pod, nodes).to_json())
        priorities = self._decode(wire.priorities_from_json, doc)
        return [HostPriority(p.host, p.score) for p in priorities], self._weight

    def bind(self, pod: PodInfo, node_name: str) -> None:
        if not self.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = wire.ExtenderBindingArgs(pod.name, pod.namespace, pod.uid, node_name)
        doc = self._send(self.bind_verb, args.to_json())
        result = self._decode(wire.ExtenderBindingResult.from_json, doc)
        if result.error:
            raise ExtenderError(_peer_error(result.error))

    def process_preemption(
        self,
        pod: PodInfo,
        node_to_victims: Mapping[str, Victims],
        pods_on_node: PodsOnNode,
    ) -> dict[str, Victims]:
        if not self.preempt_verb:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.name} but run into "
                "ProcessPreemption"
            )
        if self.node_cache_capable:
            meta = {
                node: wire.MetaVictims([wire.MetaPod(p.uid) for p in v.pods], v.num_pdb_violations)
                for node, v in node_to_victims.items()
            }
            args = wire.ExtenderPreemptionArgs(dict(pod.raw), node_name_to_meta_victims=meta)
        else:
            full = {
                node: wire.Victims([dict(p.raw) for p in v.pods], v.num_pdb_violations)
                for node, v in node_to_victims.items()
            }
            args = wire.ExtenderPreemptionArgs(dict(pod.raw), node_name_to_victims=full)
        doc = self._send(self.preempt_verb, args.to_json())
        result = self._decode(wire.ExtenderPreemptionResult.from_json, doc)
        # Replies always name victims by UID; resolve them against the scheduler's own pods.
        out: dict[str, Victims] = {}
        for node, meta_victims in result.node_name_to_meta_victims.items():
            try:
                by_uid = {p.uid: p for p in pods_on_node(node)}
            except KeyError:
                raise ExtenderError(f"nodeinfo not found for node name {quote(node)}") from None
            chosen = []
            for meta_pod in meta_victims.pods:
                found = by_uid.get(meta_pod.uid)
                if found is None:
                    raise ExtenderError(
                        f"extender: {self.name} claims to preempt pod (UID: "
                        f"{printable(meta_pod.uid)}) on node: {printable(node)}, but the pod is "
                        "not found on that node"
                    )
                chosen.append(found)
            out[node] = Victims(tuple(chosen), meta_victims.num_pdb_violations)
        return out

    # --- helpers ------------------------------------------------------------------------------

    def _args(self, pod: PodInfo, nodes: Sequence[NodeRecord]) -> wire.ExtenderArgs:
        if self.node_cache_capable:
            return wire.ExtenderArgs(dict(pod.raw), node_names=[n.name for n in nodes])
        return wire.ExtenderArgs(dict(pod.raw), nodes=[node_json(n) for n in nodes])

    def _send(self, verb: str, doc: Any) -> Any:
        url = self.url_prefix.rstrip("/") + "/" + verb
        request = json.dumps(doc).encode()
        limit = max_reply(len(request))
        status, body = self._transport.post(url, request, max_reply=limit)
        shown = redact_url(url)
        if len(body) > limit:  # a transport that did not hold to it
            raise ExtenderError(f'Post "{shown}": the answer is larger than {limit} bytes')
        if status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {shown}, code {status}")
        try:
            return wire.loads(body)
        except wire.WireError as exc:
            raise ExtenderError(f"decoding the {verb} reply of {shown}: {exc}") from exc

    def _decode(self, parse: Callable[[Any], _T], doc: Any) -> _T:
        try:
            return parse(doc)
        except wire.WireError as exc:
            raise ExtenderError(f"extender {self.name}: {exc}") from exc
