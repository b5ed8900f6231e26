"""Prometheus counters scraped before and after a measured phase, and what their growth says.

- **API requests per pod**, both schedulers alike: ``apiserver_request_total`` grows by every
  request the API server *finished* in the phase, by verb, resource and subresource. Watches
  are long-running and counted when they end, so the informers' open watches are not in it.
  The harness's own requests (it counts them: pod creations, churn) are subtracted, and so are
  the API server's requests to itself (:data:`SELF_TRAFFIC`: non-resource paths such as
  ``/openapi/v3``, its identity Lease, LimitRanger's live lookups), which the benchmark's
  schedulers never make (they run without leader election). In a lean control plane nothing
  else talks to the API server. The
  scheduler's total is cross-checked independently with API Priority and Fairness:
  ``apiserver_flowcontrol_dispatched_requests_total`` for the ``kube-scheduler`` FlowSchema,
  which matches the scheduler's identity only.
- **Where Corral spends and waits**: the engine's ``corral_scheduler_*`` counters
  (``corral.scheduler.engine.timing``).

Parsing is prometheus_client's own text parser.
"""

from __future__ import annotations

import ssl
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, Final

from prometheus_client.parser import text_string_to_metric_families

Sample = tuple[str, tuple[tuple[str, str], ...]]  # (sample name, sorted labels)
Samples = dict[Sample, float]

APISERVER: Final = (
    "apiserver_request_total",
    "apiserver_flowcontrol_dispatched_requests_total",
)
ENGINE: Final = (
    "corral_scheduler_thread_seconds_total",
    "corral_scheduler_thread_phases_total",
    "corral_scheduler_span_seconds_total",
    "corral_scheduler_spans_total",
    "corral_gc_seconds_total",
    "corral_gc_collections_total",
    "corral_thread_cpu_seconds_total",
)
# Both schedulers' scheduling attempts (upstream's metric names, which Corral exports too).
ATTEMPTS: Final = (
    "scheduler_schedule_attempts_total",
    "scheduler_pod_scheduling_attempts_sum",
    "scheduler_pod_scheduling_attempts_count",
)
SCHEDULER_FLOW_SCHEMA: Final = "kube-scheduler"
# Resources only the API server itself requests here ("" is a non-resource path).
SELF_TRAFFIC: Final = frozenset({"", "leases", "limitranges"})


def fetch(
    url: str, token: str | None = None, ca_file: str | None = None, *, verify: bool = True
) -> str:
    """GET ``url``; HTTPS is verified against ``ca_file`` when given. ``verify=False`` only
    for kube-scheduler's self-signed serving certificate on loopback."""
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    context = ssl.create_default_context(cafile=ca_file) if url.startswith("https") else None
    if context is not None and not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    with urllib.request.urlopen(request, timeout=30, context=context) as response:
        return str(response.read().decode())


def parse(text: str, names: Iterable[str]) -> Samples:
    """The samples of ``text`` whose name is in ``names``."""
    wanted = set(names)
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name in wanted:
                samples[(s.name, tuple(sorted(s.labels.items())))] = float(s.value)
    return samples


def growth(before: Samples, after: Samples) -> Samples:
    """``after - before`` per sample (a sample new in ``after`` grew from 0); zeros dropped."""
    out = {key: value - before.get(key, 0.0) for key, value in after.items()}
    return {key: value for key, value in out.items() if value}


def requests_by_kind(grown: Samples) -> Counter[str]:
    """``apiserver_request_total`` growth as ``VERB resource[/subresource]`` -> count."""
    out: Counter[str] = Counter()
    for (name, labels), value in grown.items():
        if name != "apiserver_request_total":
            continue
        label = dict(labels)
        resource = label.get("resource", "")
        if resource in SELF_TRAFFIC:
            continue
        if label.get("subresource"):
            resource += "/" + label["subresource"]
        out[f"{label.get('verb', '?')} {resource}"] += round(value)
    return out


def flow_schema_requests(grown: Samples, flow_schema: str = SCHEDULER_FLOW_SCHEMA) -> int:
    return round(
        sum(
            value
            for (name, labels), value in grown.items()
            if name == "apiserver_flowcontrol_dispatched_requests_total"
            and dict(labels).get("flow_schema") == flow_schema
        )
    )


def scheduler_requests(grown: Samples, harness: Mapping[str, int], pods: int) -> dict[str, Any]:
    """The scheduler's API requests in the phase: by kind (the harness's subtracted), in
    total, per pod, and APF's count for the scheduler's FlowSchema beside them."""
    kinds = requests_by_kind(grown)
    kinds.subtract(Counter(dict(harness)))
    kept = {k: v for k, v in sorted(kinds.items()) if v > 0}
    total = sum(kept.values())
    return {
        "by_kind": kept,
        "total": total,
        "per_pod": total / pods if pods else 0.0,
        "flow_schema_total": flow_schema_requests(grown),
        "flow_schema_per_pod": flow_schema_requests(grown) / pods if pods else 0.0,
    }


def attempts(grown: Samples) -> dict[str, float]:
    """Scheduling attempts in the phase by result (every profile summed), and the attempts
    the pods bound in it needed (``pod_scheduling_attempts``: sum over the pods, and count)."""
    out: dict[str, float] = defaultdict(float)
    for (name, labels), value in grown.items():
        if name == "scheduler_schedule_attempts_total":
            out[dict(labels).get("result", "?")] += value
        elif name == "scheduler_pod_scheduling_attempts_sum":
            out["attempts_of_bound_pods"] += value
        elif name == "scheduler_pod_scheduling_attempts_count":
            out["bound_pods"] += value
    return dict(out)


def engine_phases(grown: Samples) -> dict[str, dict[str, float]]:
    """The engine's counters as ``{phase or span: {wall, cpu, count}}``; spans are prefixed
    ``span:``; ``gc`` is the garbage collector's, all generations, on any thread, and ``gc:N``
    generation N's alone; ``thread:ROLE`` the CPU of the engine's threads by role."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (name, labels), value in grown.items():
        label = dict(labels)
        if name == "corral_scheduler_thread_seconds_total":
            out[label["phase"]][label["clock"]] = value
        elif name == "corral_scheduler_thread_phases_total":
            out[label["phase"]]["count"] = value
        elif name == "corral_scheduler_span_seconds_total":
            out["span:" + label["span"]][label["clock"]] = value
        elif name == "corral_scheduler_spans_total":
            out["span:" + label["span"]]["count"] = value
        elif name == "corral_gc_seconds_total":  # all generations together, and each
            for key in ("gc", "gc:" + label["generation"]):
                out[key][label["clock"]] = out[key].get(label["clock"], 0.0) + value
        elif name == "corral_thread_cpu_seconds_total":
            out["thread:" + label["thread"]]["cpu"] = value
        elif name == "corral_gc_collections_total":
            for key in ("gc", "gc:" + label["generation"]):
                out[key]["count"] = out[key].get("count", 0.0) + value
    return dict(out)
