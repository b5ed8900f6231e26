"""Hostile input at every entry point: no traceback, no hang, no blow-up, one clear line.

Each entry point gets a fixed, seeded set of cases (``CORRAL_FUZZ_SCALE`` multiplies it: ``make
fuzz``); every case must be accepted or rejected with clear lines (see :mod:`.harness`), and an
accepted profile or configuration must build its engine offline. Set ``CORRAL_FUZZ_REPORT`` to
a file to collect the counts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import strategies as st

from . import cases, entries, plausible
from .harness import budget, draw, run_cases

PROFILES = cases.load_seeds(
    *(f"config/samples/{n}.yaml" for n in ("minimal", "bin-packing", "tenant", "extender"))
)
CONFIGS = cases.load_seeds(
    "examples/simulate/scheduler-config.yaml", "examples/extender-example/scheduler-config.yaml"
)
CLUSTER = cases.load_seeds("examples/simulate/cluster.yaml")
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
    )
]
# What comes down the informers' watches: (path, event type, object).
WATCHED = [
    ("/api/v1/nodes", CLUSTER[0]),
    ("/api/v1/nodes", CLUSTER[2]),
    ("/api/v1/pods", CLUSTER[3]),
    ("/api/v1/pods", CLUSTER[5]),
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


def _json(seeds: list[Any]) -> st.SearchStrategy[bytes]:
    return cases.mutated(seeds, cases.JSON_VALUES).map(lambda v: json.dumps(v).encode())


_verbs = st.sampled_from(("filter", "prioritize", "bind", "preempt"))
profile_texts = cases.texts(PROFILES) | plausible.profiles().map(cases.dump)
config_texts = cases.texts(CONFIGS) | plausible.configs().map(cases.dump)
cluster_texts = cases.mutated(CLUSTER).map(lambda doc: cases.dump([*CLUSTER, doc])).flatmap(
    cases.attacked
) | cases.mutated([CLUSTER]).map(cases.dump)
profile_objects = cases.mutated(PROFILES, cases.JSON_VALUES) | plausible.profiles()
watch_events = st.sampled_from(WATCHED).flatmap(
    lambda w: st.tuples(
        st.just(w[0]),
        st.sampled_from(("ADDED", "MODIFIED", "DELETED")),
        cases.mutated([w[1]], cases.JSON_VALUES),
    )
)
extender_replies = st.tuples(
    _verbs,
    st.booleans(),
    st.sampled_from((200, 200, 200, 500, 404)),
    _json(EXTENDER_REPLIES)
    | cases.JSON_VALUES.map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=40),
)
extender_requests = st.tuples(_verbs, _json(EXTENDER_REQUESTS) | st.binary(max_size=30))

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
    assert (tally.crashed, tally.hung) == (0, 0), tally.summary()
