"""Hostile input at every entry point: no traceback, no hang, no blow-up, one clear line.

The cases come from grammars (:mod:`.grammar`): the SchedulerProfile CRD's OpenAPI schema, the
configuration and plugin-args types, and the shapes of the Kubernetes objects the engine reads
(generated from the pinned Go types), each field attacked with its wrong types, its boundary
numbers and odd Unicode, written as YAML with tag, anchor and alias forms; and from the repo's
own documents mutated field by field through the same grammars, then attacked as text (alias
bombs, deep nesting, truncation, bytes that are not UTF-8, oversized documents).

Each entry point gets a fixed, seeded set of cases (``CORRAL_FUZZ_SCALE`` multiplies it: ``make
fuzz``); every case must be accepted or rejected with clear lines (see :mod:`.harness`), and an
accepted profile or configuration must build its engine offline. Set ``CORRAL_FUZZ_REPORT`` to
a file to collect the counts (accepted, rejected, crashed, hung, blew up).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import strategies as st

from corral.scheduler.backend.objects import WATCHED_KINDS
from corral.scheduler.config import types as config_types

from . import cases, entries, grammar, plausible
from .harness import budget, draw, run_cases

PROFILES = cases.load_seeds(
    *(f"config/samples/{n}.yaml" for n in ("minimal", "bin-packing", "tenant", "extender"))
)
CONFIGS = cases.load_seeds(
    "examples/simulate/scheduler-config.yaml", "examples/extender-example/scheduler-config.yaml"
)
CLUSTER = cases.load_seeds("examples/simulate/cluster.yaml")
OBJECT_SEEDS = CLUSTER + cases.load_seeds(
    "examples/simulate/storage.yaml", "examples/simulate/seed-storage.yaml"
)
_EXEC = {"apiVersion": "client.authentication.k8s.io/v1", "interactiveMode": "Never"}
KUBECONFIGS: list[Any] = [
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    for user in (
        {"token": "t"},
        {"exec": {**_EXEC, "command": "sleep", "args": ["600"]}},
        {"exec": {**_EXEC, "command": "echo", "args": ["{not json"]}},
        {"exec": {**_EXEC, "command": "false"}},
        {"tokenFile": "/dev/zero"},
        {"client-certificate": "/proc/self/maps", "client-key": "/dev/null"},
    )
]
EXTENDER_REPLIES = [
    {"nodeNames": ["n0"], "failedNodes": {"n1": "x"}, "error": ""},
    {"nodes": {"items": [{"metadata": {"name": "n0"}}]}},
    [{"host": "n0", "score": 5}],
    {"nodeNameToMetaVictims": {"n0": {"pods": [{"uid": "u"}], "numPDBViolations": 0}}},
    {"error": "no"},
]
EXTENDER_REQUESTS = [
    {"pod": {"metadata": {"name": "p"}}, "nodenames": ["n0", "n1"]},
    {"pod": {"metadata": {"name": "p"}}, "nodes": {"items": [{"metadata": {"name": "n0"}}]}},
    {"podName": "p", "podNamespace": "d", "podUID": "u", "node": "n0"},
    {"pod": {}, "nodeNameToMetaVictims": {"n0": {"pods": [{"uid": "u"}]}}},
]


def _pool(name: str) -> list[Any] | None:
    return plausible._BY_FIELD.get(name)  # what each named field plausibly holds


def _yaml(values: st.SearchStrategy[Any]) -> st.SearchStrategy[str | bytes]:
    """As YAML text with tag, anchor and style forms, then attacked as text one time in four
    (most cases stay documents that decode, and reach the checks beyond the loader)."""
    texts = values.flatmap(grammar.to_yaml)
    return grammar.sometimes(texts, texts.flatmap(cases.attacked), one_in=4)


def _json(values: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    return values.map(lambda v: json.dumps(v).encode())


def _configs() -> st.SearchStrategy[dict[str, Any]]:
    profile = st.fixed_dictionaries(
        {"schedulerName": st.sampled_from(["fuzzed", "other"])},
        optional={
            "plugins": grammar.from_type(config_types.Plugins, plausible=_pool),
            "pluginConfig": st.lists(grammar.plugin_configs(_pool), max_size=3),
            "percentageOfNodesToScore": grammar.from_type(int),
        },
    )
    top = grammar.from_type(config_types.KubeSchedulerConfiguration, plausible=_pool)
    return st.tuples(top, st.lists(profile, min_size=1, max_size=2)).map(
        lambda tp: {
            **(tp[0] if isinstance(tp[0], dict) else {}),
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": tp[1],
        }
    )


# The kinds a cluster file or a watch holds, each from its shape.
_KINDS = sorted({"Node", "Pod", *WATCHED_KINDS})
_objects = st.sampled_from(_KINDS).flatmap(grammar.objects)
_real_objects = grammar.mutated_by_shape(OBJECT_SEEDS)

profile_texts = (
    _yaml(grammar.profiles(_pool))
    | _yaml(cases.mutated(PROFILES, cases.VALUES))
    | _yaml(plausible.profiles())
)
config_texts = _yaml(_configs()) | _yaml(cases.mutated(CONFIGS, cases.VALUES))
cluster_texts = (
    st.lists(_real_objects | _objects, min_size=1, max_size=4)
    .map(lambda docs: [*CLUSTER, *docs])
    .flatmap(lambda docs: st.tuples(*(grammar.to_yaml(d) for d in docs)))
    .map("---\n".join)
)
cluster_texts = grammar.sometimes(cluster_texts, cluster_texts.flatmap(cases.attacked), one_in=4)
profile_objects = grammar.profiles(_pool) | cases.mutated(PROFILES, cases.JSON_VALUES)
watch_events = st.tuples(
    st.sampled_from(("Node", "Pod")),
    st.sampled_from(("ADDED", "MODIFIED", "DELETED")),
).flatmap(
    lambda ke: st.tuples(
        st.just("/api/v1/nodes" if ke[0] == "Node" else "/api/v1/pods"),
        st.just(ke[1]),
        grammar.mutated_by_shape([s for s in OBJECT_SEEDS if s.get("kind") == ke[0]])
        | grammar.objects(ke[0]),
    )
)
_verbs = st.sampled_from(("filter", "prioritize", "bind", "preempt"))
extender_replies = st.tuples(
    _verbs,
    st.booleans(),
    st.sampled_from((200, 200, 200, 500, 404)),
    _json(cases.mutated(EXTENDER_REPLIES, cases.JSON_VALUES))
    | _json(cases.JSON_VALUES)
    | _json(grammar.hostile_scalar())
    | st.sampled_from([b"NaN", b"[" * 5000, b'{"error": Infinity}', b"1" * 5000, b"\xff"])
    | st.binary(max_size=40),
)
extender_requests = st.tuples(
    _verbs,
    _json(cases.mutated(EXTENDER_REQUESTS, cases.JSON_VALUES))
    | st.sampled_from([b"NaN", b"[" * 5000, b'{"pod": -Infinity}', b"9" * 5000])
    | st.binary(max_size=30),
)

ENTRY_POINTS = [
    pytest.param(entries.validate, profile_texts, 300, id="corral validate"),
    pytest.param(entries.scheduler_config, config_texts, 300, id="KubeSchedulerConfiguration"),
    pytest.param(entries.simulate, cluster_texts, 100, id="corral simulate"),
    pytest.param(entries.reconcile, profile_objects, 150, id="operator reconcile"),
    pytest.param(entries.informer, watch_events, 300, id="engine informers"),
    pytest.param(entries.extender_client, extender_replies, 300, id="extender client"),
    pytest.param(entries.extender_server, extender_requests, 150, id="extender server"),
    pytest.param(entries.kubeconfig, cases.texts(KUBECONFIGS), 40, id="kubeconfig"),
]


@pytest.mark.parametrize(("entry", "strategy", "count"), ENTRY_POINTS)
def test_no_crash_no_hang(
    entry: Callable[[Any], tuple[str, str]],
    strategy: st.SearchStrategy[Any],
    count: int,
    request: pytest.FixtureRequest,
) -> None:
    tally = run_cases(request.node.callspec.id, entry, draw(strategy, budget(count)))
    assert (tally.crashed, tally.hung, tally.blew_up) == (0, 0, 0), tally.summary()
