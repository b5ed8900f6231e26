"""The second, independent pass (:mod:`.walk`): documents valid by their schema, broken in a
few places, at the entry points a user or a peer touches after the first checks, judged by the
same harness (accepted, or refused with clear lines; never a traceback, a hang or a blow-up).

- ``corral render`` (``-o yaml`` and ``-o json``): one or two profiles;
- ``corral simulate --explain``: Nodes, Pods and what they reference, with a profile among
  them (the engine's config load and every Filter and Score on the way);
- the profile webhook (:func:`corral.controller.refusals.check`) against profiles the API
  server already holds, and the pod webhook's decision with those profiles as tenants;
- ``corral validate`` and the operator's reconcile of a profile (its engine built offline);
- the engine's config load (what ``corral scheduler --config`` checks, then the engine built
  offline): KubeSchedulerConfigurations rendered from walked profiles that pass, then broken;
- the HTTP extender client decoding each verb's reply, of upstream's wire types.

Budgets are small here (``make test``); ``make fuzz`` multiplies them (``CORRAL_FUZZ_SCALE``),
and ``CORRAL_FUZZ_REPORT`` collects the counts, as for :mod:`.test_fuzz`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import strategies as st

from . import entries, walk
from .harness import budget, draw, run_cases

VERBS = ("filter", "prioritize", "bind", "preempt")


def _broken_profile(w: walk.Walk) -> dict[str, Any]:
    return w.mutate(w.profile(), w.r.choice([0, 0, 0, 1, 2]))


def render_case(seed: int) -> tuple[str, str]:
    w = walk.Walk(seed)
    docs = [_broken_profile(w) for _ in range(w.r.choice([1, 1, 2]))]
    return w.r.choice(["yaml", "json"]), walk.dump(docs)


def explain_case(seed: int) -> str:
    w = walk.Walk(seed)
    docs = w.cluster()
    if w.chance(0.5):
        i = w.r.randrange(len(docs))
        docs[i] = w.mutate(docs[i], w.r.choice([1, 2]))
    return walk.dump(docs)


def admission_case(seed: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    w = walk.Walk(seed)
    return _broken_profile(w), [w.profile() for _ in range(w.r.randint(0, 3))]


def pod_admission_case(seed: int) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    w = walk.Walk(seed)
    pod = w.mutate(w.pod("p"), w.r.choice([0, 1]))
    return pod, w.r.choice(walk.NAMESPACES), [w.profile() for _ in range(w.r.randint(0, 3))]


def validate_case(seed: int) -> str:
    return walk.dump([_broken_profile(walk.Walk(seed))])


def reconcile_case(seed: int) -> dict[str, Any]:
    return _broken_profile(walk.Walk(seed))


def config_case(seed: int) -> str:
    w = walk.Walk(seed)
    return walk.dump([w.mutate(w.config(), w.r.choice([0, 1, 1, 2, 3]))])


def extender_reply_case(seed: int) -> tuple[str, bool, int, bytes]:
    w = walk.Walk(seed)
    verb = w.r.choice(VERBS)
    reply = w.mutate(w.extender_reply(verb), w.r.choice([0, 0, 1, 2]))
    return verb, w.chance(0.5), 200, json.dumps(reply).encode()


def _seeds(build: Callable[[int], Any]) -> st.SearchStrategy[Any]:
    return st.integers(0, 2**32 - 1).map(build)


ENTRY_POINTS = [
    pytest.param(entries.render_profiles, render_case, 60, id="corral render"),
    pytest.param(entries.explain, explain_case, 40, id="corral simulate --explain"),
    pytest.param(entries.admission, admission_case, 120, id="profile webhook"),
    pytest.param(entries.pod_admission, pod_admission_case, 120, id="pod webhook"),
    pytest.param(entries.validate, validate_case, 60, id="corral validate (schema walk)"),
    pytest.param(entries.reconcile, reconcile_case, 60, id="operator reconcile (schema walk)"),
    pytest.param(entries.scheduler_config, config_case, 60, id="engine config load"),
    pytest.param(entries.extender_client, extender_reply_case, 150, id="extender replies"),
]


@pytest.mark.parametrize(("entry", "build", "count"), ENTRY_POINTS)
def test_schema_walk_no_crash_no_hang(
    entry: Callable[[Any], tuple[str, str]],
    build: Callable[[int], Any],
    count: int,
    request: pytest.FixtureRequest,
) -> None:
    cases = draw(_seeds(build), budget(count))
    tally = run_cases(request.node.callspec.id, entry, cases)
    assert (tally.crashed, tally.hung, tally.blew_up) == (0, 0, 0), tally.summary()
    assert tally.cases == len(cases)


def test_the_walk_reaches_past_the_first_checks() -> None:
    """Most profiles of the walk are valid by the schema, and some by every check: a pass that
    only ever hit the first refusal would test nothing behind it."""
    outcomes = [entries.reconcile(walk.Walk(seed).profile())[0] for seed in range(40)]
    assert outcomes.count("accepted") >= 2, outcomes


def test_the_walk_is_one_seed_one_case() -> None:
    assert explain_case(7) == explain_case(7)
    assert render_case(7) != render_case(8)
