"""Scenario kinds: registered, reproducible, each reaching what it is for; preemption verdicts."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from bench.conformance import groups, kinds, replay
from bench.conformance.compare import Decision, Trace
from bench.conformance.generate import Scenario
from bench.conformance.kinds.extended import GPU
from bench.conformance.kinds.preemption import compare_preemption
from bench.schedulers import SchedulerConfig

from corral.scheduler.engine.frameworks import load_engine_config

JSON = dict[str, Any]


def _requests(pod: JSON) -> list[JSON]:
    spec = pod["spec"]
    return [spec.get("resources", {}), *(c.get("resources", {}) for c in spec["containers"])]


def _priority_values(s: Scenario) -> list[int]:
    return [s.priority_classes[p["spec"]["priorityClassName"]][0] for p in s.running + s.pods]


def _reaches(kind: str, s: Scenario) -> bool:
    """What the kind exists for, present in its scenario."""
    if kind == "basic":
        return not s.profile and any("affinity" in p["spec"] for p in s.pods)
    if kind == "pod-level":
        return sum("resources" in p["spec"] for p in s.pods) >= len(s.pods) // 2
    if kind == "extended":
        return any(GPU in n["status"]["allocatable"] for n in s.nodes) and any(
            GPU in r.get("limits", {}) for p in s.pods for r in _requests(p)
        )
    if kind == "profiles":
        return bool(s.profile["pluginConfig"])
    if kind == "preemption":
        values = _priority_values(s)
        policies = {s.priority_classes[p["spec"]["priorityClassName"]][1] for p in s.pods}
        return len(set(values)) == len(values) and policies == {"PreemptLowerPriority"}
    if kind == "extenders":
        labels = [n["metadata"]["labels"] for n in s.nodes]
        return any("example.corral.dev/allowed" not in x for x in labels)
    if kind == "large":
        return len(s.nodes) >= 300
    if kind == "storage":
        claims = {v["persistentVolumeClaim"]["claimName"] for p in s.pods
                  for v in p["spec"].get("volumes", [])}  # fmt: skip
        return any(c.startswith("bound-") for c in claims) and "too-big" in claims
    if kind == "dra-capacity":
        devices = [d for o in s.objects if o["kind"] == "ResourceSlice"
                   for d in o["spec"]["devices"]]  # fmt: skip
        holders = [o for o in s.objects if o["kind"] == "ResourceClaim"]
        shares = [r for h in holders for r in h["status"]["allocation"]["devices"]["results"]
                  if "shareID" in r]  # fmt: skip
        return any(d.get("allowMultipleAllocations") for d in devices) and bool(shares)
    if kind == "dra":
        slices = [o for o in s.objects if o["kind"] == "ResourceSlice"]
        claims = {
            c["resourceClaimTemplateName"]
            for p in s.pods
            for c in p["spec"].get("resourceClaims", ())
        }
        return len(slices) >= 2 and len(claims) >= 5
    if kind == "extended-dra":
        backed = {"example.com/gpu", "deviceclass.resource.kubernetes.io/conf-ext-tpu"}
        asked = {name for p in s.pods for r in _requests(p) for name in r.get("requests", {})}
        slices = [o for o in s.objects if o["kind"] == "ResourceSlice"]
        advertising = [n for n in s.nodes if "example.com/gpu" in n["status"]["allocatable"]]
        return backed <= asked and len(slices) >= 2 and bool(advertising)
    if kind == "dra-taints":
        rules = [o for o in s.objects if o["kind"] == "DeviceTaintRule"]
        tolerant = [c for p in s.pods for c in p["spec"].get("resourceClaims", ())
                    if "-tolerant-" in c["resourceClaimTemplateName"]]  # fmt: skip
        return len(rules) >= 2 and len(tolerant) >= 3
    if kind == "gang":
        policies = {next(iter(g["spec"]["schedulingPolicy"])) for g in s.pod_groups}
        running = [o for o in s.objects if o["kind"] == "PodGroup"]
        members = [p for p in s.pods if groups.group_name(p)]
        values = [v for v, _ in s.priority_classes.values()]
        return (policies == {"gang", "basic"} and len(members) > len(s.pods) // 2
                and any("all" in g["spec"].get("disruptionMode", {}) for g in running)
                and len(set(values)) == len(values))  # fmt: skip
    raise AssertionError(f"no expectation for kind {kind!r}: add one")


ROOT = Path(__file__).resolve().parents[3]
E2E_CONFORMANCE = ROOT / "tests" / "e2e" / "test_conformance.py"


def _e2e_kinds() -> set[str]:
    """The kinds tests/e2e/test_conformance.py runs against Corral: the first argument of each
    ``pytest.param`` of ``CASES``, and any kind a test names itself (``kinds.get("gang")``,
    ``kinds.scenario("gang", ...)``, as the pod-group test does)."""
    tree = ast.parse(E2E_CONFORMANCE.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "CASES" for t in node.targets
        ):
            found |= {c.args[0].value for c in ast.walk(node.value)
                      if isinstance(c, ast.Call) and c.args
                      and isinstance(c.args[0], ast.Constant)}  # fmt: skip
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("test_corral"):
            found |= {c.args[0].value for c in ast.walk(node)
                      if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                      and isinstance(c.func.value, ast.Name) and c.func.value.id == "kinds"
                      and c.func.attr in ("get", "scenario") and c.args
                      and isinstance(c.args[0], ast.Constant)}  # fmt: skip
    return found


@pytest.mark.parametrize("kind", kinds.names())
def test_every_kind_has_a_case_in_the_e2e_conformance_test(kind: str) -> None:
    """A new kind must be judged against upstream on the engine and corral simulate (issue 37:
    the simulate-vs-engine test agrees on every conformance scenario)."""
    assert kind in _e2e_kinds(), f"{kind}: add it to CASES in {E2E_CONFORMANCE.name}"


def test_every_kind_module_is_loaded_and_every_e2e_case_is_a_kind() -> None:
    """A module under bench/conformance/kinds left out of ``_MODULES`` registers no kind (and
    the tests above would not see it); a case naming no kind would fail only in e2e."""
    files = {p.stem for p in (ROOT / "bench" / "conformance" / "kinds").glob("*.py")}
    assert files - {"__init__"} == set(kinds._MODULES)
    assert len(kinds.names()) == len(kinds._MODULES)  # one kind each
    assert _e2e_kinds() <= set(kinds.names())


@pytest.mark.parametrize("kind", kinds.names())
def test_every_kind_is_reproducible_and_reaches_its_point(kind: str) -> None:
    first = kinds.scenario(kind, 5, pods=40)
    assert first.to_json() == kinds.scenario(kind, 5, pods=40).to_json()
    assert first.to_json() != kinds.scenario(kind, 6, pods=40).to_json()
    assert first.kind == kind
    assert len(first.pods) >= 40
    assert _reaches(kind, first)
    assert Scenario.from_json(first.to_json()) == first


@pytest.mark.parametrize("kind", kinds.names())
def test_every_kinds_profiles_are_valid(kind: str) -> None:
    """A profile upstream refuses stops a whole run: the generator makes valid ones only."""
    for seed in range(1, 31):
        profile = kinds.scenario(kind, seed, nodes=3, running=3, pods=1).profile
        config = {"apiVersion": "kubescheduler.config.k8s.io/v1",
                  "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "s", **profile}]}  # fmt: skip
        load_engine_config(config)


def test_the_basic_kind_is_the_recorded_generator() -> None:
    from bench.conformance.generate import generate  # noqa: PLC0415

    assert kinds.scenario("basic", 3, nodes=10, running=20, pods=5) == generate(
        3, nodes=10, running=20, pods=5
    )


def test_an_unknown_kind_is_named_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown scenario kind 'gpus'; expected one of basic, "):
        kinds.scenario("gpus", 1)


def test_a_kind_registered_twice_is_refused() -> None:
    with pytest.raises(ValueError, match=r"scenario kind 'basic' registered twice"):
        kinds.register(kinds.get("basic"))


def test_a_recording_without_a_kind_reads_as_basic() -> None:
    data = kinds.scenario("basic", 1, pods=2).to_json()
    for key in ("kind", "profile", "objects"):
        del data[key]
    assert Scenario.from_json(data).kind == "basic"


ON_A = ["team-a/run-1", "team-a/run-2"]
FIT = "0/2 nodes are available: 2 Insufficient cpu."
PLACED = Decision(node="a", message=FIT, nominated="a", victims=ON_A)


@pytest.mark.parametrize(
    ("candidate", "agree", "kind"),
    [
        pytest.param(Decision(node="a", message=FIT, nominated="a", victims=ON_A[::-1]), True,
                     "preempted", id="same-node-and-victims-in-any-order"),
        pytest.param(Decision(node="a", message="other", nominated="a", victims=ON_A), False,
                     "message-differs", id="other-preempting-message"),
        pytest.param(Decision(node="b", message=FIT, nominated="b", victims=ON_A), False,
                     "nominated-differs", id="other-node"),
        pytest.param(Decision(node="a", message=FIT, nominated="a", victims=ON_A[:1]), False,
                     "victims-differ", id="fewer-victims"),
        pytest.param(Decision(node="a"), False, "nominated-differs",
                     id="placed-without-preempting"),
        pytest.param(Decision(timed_out=True), False, "timeout", id="no-decision"),
    ],
)  # fmt: skip
def test_preemption_verdicts(candidate: Decision, agree: bool, kind: str) -> None:
    verdict = compare_preemption(PLACED, Trace(bound="a"), candidate)
    assert (verdict.agree, verdict.kind) == (agree, kind), verdict.detail


def test_a_message_still_decides_when_nobody_preempts() -> None:
    unschedulable = Decision(reason="Unschedulable", message="0/2 nodes are available: x.")
    other = Decision(reason="Unschedulable", message="0/2 nodes are available: y.")
    assert compare_preemption(unschedulable, Trace(), unschedulable).kind == "unschedulable"
    assert compare_preemption(unschedulable, Trace(), other).kind == "message-differs"


class _Cluster:
    directory = Path("/nowhere")


def test_a_profile_and_disabled_plugins_merge_in_the_rendered_config() -> None:
    config = SchedulerConfig(
        scheduler_name="s",
        disabled_plugins=("ImageLocality",),
        profile_extra={"plugins": {"multiPoint": {"disabled": [{"name": "NodePorts"}]}}},
        config_extra={"extenders": [{"urlPrefix": "http://127.0.0.1:1"}]},
    ).render(_Cluster())  # type: ignore[arg-type]
    disabled = config["profiles"][0]["plugins"]["multiPoint"]["disabled"]
    assert disabled == [{"name": "NodePorts"}, {"name": "ImageLocality"}]
    assert config["extenders"] == [{"urlPrefix": "http://127.0.0.1:1"}]


@pytest.mark.parametrize(
    ("argv", "code", "out", "err"),
    [
        pytest.param(["--list-kinds"], 0, "preemption   full nodes", "", id="list"),
        pytest.param(["--kinds", "basic,gpus"], 2, "",
                     "unknown scenario kind 'gpus'; expected one of basic, dra, dra-capacity, "
                     "dra-taints, ",
                     id="unknown-kind"),
    ],
)  # fmt: skip
def test_the_command_line_names_the_kinds(
    capsys: pytest.CaptureFixture[str], argv: list[str], code: int, out: str, err: str
) -> None:
    from bench.conformance.__main__ import main  # noqa: PLC0415

    assert main(argv) == code
    captured = capsys.readouterr()
    assert out in captured.out
    assert err in captured.err


UNSCHEDULABLE = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def test_the_replay_taints_cordoned_nodes_as_the_controller_does() -> None:
    node: JSON = {"metadata": {"name": "n"}, "spec": {"unschedulable": True}}
    assert replay._as_controlled(node)["spec"]["taints"] == [UNSCHEDULABLE]
    assert "taints" not in node["spec"]  # the scenario itself is left alone
    plain: JSON = {"metadata": {"name": "m"}, "spec": {}}
    assert replay._as_controlled(plain) is plain


def test_gang_units_are_groups_in_order_then_plain_pods() -> None:
    s = kinds.scenario("gang", 3, pods=40)
    units = list(groups.units(s))
    assert [p for _, _, pods in units for p in pods] == s.pods
    assert [i for i, _, _ in units] == sorted(i for i, _, _ in units)
    for _, template, pods in units:
        if template is None:
            assert len(pods) == 1
            assert groups.group_name(pods[0]) is None
        else:
            assert {groups.group_name(p) for p in pods} == {template["metadata"]["name"]}


def test_a_member_after_a_tie_is_judged_by_its_group() -> None:
    tied = Trace(final={"a": 10, "b": 10})
    follow = Trace(final={"a": 5, "c": 9})
    references = [(Decision(node="a", group="True/Scheduled: "), tied),
                  (Decision(node="c", group="True/Scheduled: "), follow)]  # fmt: skip
    done = "True/Scheduled: "
    got = [Decision(node="b", group=done), Decision(node="a", group=done)]
    assert [v.kind for v in groups.judge(references, got, kinds.get("gang").compare)] == [
        "placed", "after-tie"
    ]  # fmt: skip
    # Without the tie the second member's node is a disagreement, and so is another condition.
    got[0] = Decision(node="a", group="True/Scheduled: ")
    assert [v.agree for v in groups.judge(references, got, kinds.get("gang").compare)] == [
        True, False
    ]  # fmt: skip
    other = [Decision(node="a", group="False/Unschedulable: x"), got[1]]
    assert groups.judge(references, other, kinds.get("gang").compare)[0].kind == (
        "condition-differs"
    )


def test_a_waiting_group_agrees_only_with_waiting() -> None:
    compare = kinds.get("gang").compare
    waiting = Decision(reason="Waiting", group="none")
    assert compare(waiting, Trace(), Decision(reason="Waiting", group="none")).agree
    assert not compare(waiting, Trace(), Decision(node="a", group="none")).agree
