"""The mutation table of issue 40's failure modes: for each e2e failure mode of Coscheduling and
CapacityScheduling, small plausible breaks of the behaviour it names, and the pytest node ids
that must fail with each break applied (``make mutate`` applies them one at a time, runs those
ids on the real local control plane and reports each break killed or survived: hack/mutate.py;
results in docs/plugins/mutations.md).

A row's ``old`` text must occur exactly once in its file, and its ids must name tests that
exist; ``tests/unit/test_mutation_table.py`` (in ``make test``) checks both, and that every
failure mode has a row, so the table breaks as soon as the code or the tests move. A row whose
test is not on main yet says so in ``pending``: the guard then skips its ids, and the runner
skips the row until they exist.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Final

# Issue 40, section 6 ("Proof"): the failure modes whose e2e tests must fail when broken.
FAILURE_MODES: Final = {
    "two-gangs": "two gangs that together exceed capacity: one completes, no deadlock",
    "never-fits": "a gang that can never fit does not block the queue behind it",
    "permit-timeout": "members at Permit release their resources when the timeout fires",
    "member-deleted": "a member deleted while the others wait",
    "leader-failover": "leader failover with gangs waiting",
    "gated": "gated members",
    "quota-borrow": "CapacityScheduling: borrowing within max",
    "quota-reclaim": "CapacityScheduling: reclaim by preemption when a namespace within its min "
    "needs its share",
    "quota-max": "CapacityScheduling: refusal beyond max with SP's message",
}

COSCHEDULING: Final = "operator/corral/scheduler/plugins/coscheduling.py"
CAPACITY: Final = "operator/corral/scheduler/plugins/capacity_scheduling/__init__.py"
QUOTA: Final = "operator/corral/scheduler/plugins/capacity_scheduling/elastic_quota.py"
VICTIMS: Final = "operator/corral/scheduler/plugins/capacity_scheduling/victims.py"
WAITING: Final = "operator/corral/scheduler/framework/runtime/waiting_pods.py"
SCHEDULE_ONE: Final = "operator/corral/scheduler/framework/runtime/schedule_one.py"
NOMINATED: Final = "operator/corral/scheduler/framework/runtime/nominated.py"
HANDLERS: Final = "operator/corral/scheduler/engine/handlers.py"
ASSUME: Final = "operator/corral/scheduler/engine/assume.py"
ELECTION: Final = "operator/corral/scheduler/engine/leaderelection.py"

_FAILURES: Final = "tests/e2e/engine/test_coscheduling_failures.py"
_TABLE: Final = "tests/e2e/engine/test_sp_coscheduling_table.py"
_SP_PLUGINS: Final = "tests/e2e/engine/test_sp_plugins.py"
_QUOTAS: Final = "tests/e2e/engine/test_sp_capacity_scheduling.py"

TWO_GANGS_DEFAULT: Final = (
    f"{_FAILURES}::test_two_gangs_that_together_exceed_the_node_do_not_deadlock"
    "[default args: QueueSort and PostFilter's rejection]"
)
TWO_GANGS_NO_REJECTION: Final = (
    f"{_FAILURES}::test_two_gangs_that_together_exceed_the_node_do_not_deadlock"
    "[no optimistic rejection: QueueSort alone]"
)
NEVER_FITS: Final = f"{_FAILURES}::test_a_gang_that_never_fits_does_not_block_the_pod_behind_it"
MEMBER_DELETED: Final = (
    f"{_FAILURES}::test_a_member_deleted_while_its_group_waits_releases_the_group"
)
FAILOVER: Final = f"{_FAILURES}::test_a_new_leader_schedules_a_gang_the_old_one_left_waiting"
GATED_NEEDED: Final = (
    f"{_FAILURES}::test_gated_members"
    "[a gated member the group needs: nobody binds until it is ungated]"
)
GATED_SLACK: Final = (
    f"{_FAILURES}::test_gated_members[slack for the gated one: the two ungated members bind]"
)
WHOLE_OR_NONE: Final = f"{_SP_PLUGINS}::test_coscheduling_binds_whole_gangs_or_none"
TABLE_ROW_7: Final = (
    f"{_TABLE}::test_coscheduling_integration_rows"
    "[equal priority, not sequentially pg1 meet min and p2 p3 not meet min]"
)
QUOTA_MAX: Final = f"{_QUOTAS}::test_a_quotas_max_refuses_the_pod_with_sps_message"
QUOTA_BORROW: Final = (
    f"{_QUOTAS}::test_a_namespace_borrows_past_its_min_what_another_quota_leaves_unused"
)
QUOTA_RECLAIM: Final = (
    f"{_QUOTAS}::test_a_namespace_within_its_min_reclaims_borrowed_capacity_by_preemption"
)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``old`` (occurring exactly once) with ``new`` in ``path`` (repository-relative)."""

    path: str
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class Mutation:
    id: str
    mode: str  # a key of FAILURE_MODES
    what: str  # the break, in words
    edits: tuple[Edit, ...]
    tests: tuple[str, ...]  # node ids that must each fail with the edits applied
    pending: str = ""  # why the ids may not exist on main yet ("" : they must)


_PERMIT_REJECTED: Final = (
    "        s = Status.of(s.code, host_fit_error(pod, s).message()).with_plugin(s.plugin)\n"
)
_SORT_BY_POD: Final = Edit(
    COSCHEDULING,
    "        ta, tb = self._group_time(a), self._group_time(b)\n",
    "        ta, tb = a.timestamp, b.timestamp\n",
)

MUTATIONS: Final = (
    # --- two gangs that together exceed the node ---------------------------------------------
    Mutation(
        "cos-sort-by-pod",
        "two-gangs",
        "QueueSort orders members by their own queue time (PrioritySort's rule), not their "
        "group's: interleaved gangs are placed member by member",
        (_SORT_BY_POD,),
        (TWO_GANGS_NO_REJECTION,),
    ),
    Mutation(
        "cos-sort-by-pod-no-rejection",
        "two-gangs",
        "as cos-sort-by-pod, and PostFilter never rejects (the unassigned share is always "
        "within podGroupRejectPercentage)",
        (
            _SORT_BY_POD,
            Edit(
                COSCHEDULING,
                "        if unassigned <= self.reject_threshold:\n",
                "        if unassigned <= 1.0:\n",
            ),
        ),
        (TWO_GANGS_DEFAULT, TWO_GANGS_NO_REJECTION),
    ),
    Mutation(
        "cos-waiting-still-counted",
        "two-gangs",
        "a member rejected or timed out at Permit keeps counting as assigned until its "
        "Unreserve (SP's stale count, before 28942ca)",
        (
            Edit(
                COSCHEDULING,
                "        return waiting is not None and not waiting.rejected()\n",
                "        return waiting is not None\n",
            ),
        ),
        (TABLE_ROW_7,),
    ),
    Mutation(
        "cos-no-reactivation",
        "two-gangs",
        "only the first member assigned activates its siblings, not the first permitted after "
        "members were lost (SP #682, before abac398)",
        (
            Edit(
                COSCHEDULING,
                "        if assigned == 1 or lost:\n",
                "        if assigned == 1:\n",
            ),
        ),
        (TABLE_ROW_7,),
    ),
    # --- a gang that never fits --------------------------------------------------------------
    Mutation(
        "cos-postfilter-keeps-waiting",
        "never-fits",
        "PostFilter rejects the pod but not its siblings waiting at Permit",
        (
            Edit(
                COSCHEDULING,
                "        self._reject_waiting(pod.namespace, group.name, "
                "REJECTED_IN_POST_FILTER)\n",
                "",
            ),
        ),
        (NEVER_FITS,),
    ),
    Mutation(
        "cos-backoff-off-by-one",
        "never-fits",
        "a group with exactly minMember pods is never backed off (> for >=)",
        (
            Edit(
                COSCHEDULING,
                "        if self.backoff_seconds > 0 and len(siblings or ()) >= "
                "group.min_member:\n",
                "        if self.backoff_seconds > 0 and len(siblings or ()) > group.min_member:\n",
            ),
        ),
        (NEVER_FITS,),
    ),
    # --- the Permit timeout ------------------------------------------------------------------
    Mutation(
        "permit-timeout-ignored",
        "permit-timeout",
        "a waiting pod's deadline is upstream's 15-minute cap, not its plugin's timeout",
        (
            Edit(
                WAITING,
                "        self._deadlines = {name: now + t for name, t in timeouts.items()}\n",
                "        self._deadlines = {name: now + MAX_PERMIT_TIMEOUT for name in timeouts}\n",
            ),
        ),
        (WHOLE_OR_NONE,),
    ),
    Mutation(
        "permit-rejection-not-forgotten",
        "permit-timeout",
        "a pod rejected at Permit (timed out, or rejected by a sibling) is unreserved but not "
        "forgotten: its room stays assumed in the cache",
        (
            Edit(
                SCHEDULE_ONE,
                _PERMIT_REJECTED,
                _PERMIT_REJECTED + "        fwk.run_unreserve(state, pod, host)\n"
                "        return s\n",
            ),
        ),
        (WHOLE_OR_NONE, MEMBER_DELETED),
    ),
    # --- a member deleted while the others wait ----------------------------------------------
    Mutation(
        "deleted-member-left-waiting",
        "member-deleted",
        "a deleted member assumed at Permit leaves the cache but its binding cycle is not "
        "rejected (no handleAssumedPodDeletion): its Unreserve never releases the siblings",
        (
            Edit(
                HANDLERS,
                "            if self.reject_waiting is None or not self.reject_waiting(assumed):\n",
                "            if True:\n",
            ),
        ),
        (MEMBER_DELETED,),
    ),
    Mutation(
        "unreserve-keeps-siblings",
        "member-deleted",
        "Coscheduling's Unreserve does not reject the siblings waiting at Permit",
        (
            Edit(
                COSCHEDULING,
                "        self._reject_waiting(pod.namespace, group.name, REJECTED_IN_UNRESERVE)\n",
                "",
            ),
        ),
        (MEMBER_DELETED,),
    ),
    # --- leader failover ----------------------------------------------------------------------
    Mutation(
        "lease-never-expires",
        "leader-failover",
        "a standby restarts the expiry clock on every read of the Lease, not only when its "
        "record changes: a dead leader's Lease never expires",
        (
            Edit(
                ELECTION,
                "        if spec != self._observed:\n            self._observe(spec)\n",
                "        self._observe(spec)\n",
            ),
        ),
        (FAILOVER,),
    ),
    Mutation(
        "assume-keeps-nomination",
        "leader-failover",
        "assume does not drop the pod's nomination: the old leader's announced nominations "
        "count the new leader's waiting members twice",
        (
            Edit(
                ASSUME,
                "        if self.nominator is not None:\n"
                "            self.nominator.forget(pod.uid)\n",
                "",
            ),
        ),
        (FAILOVER,),
    ),
    Mutation(
        "nominated-counts-itself",
        "leader-failover",
        "Filter counts the pod's own nomination as another pod on the node (the UID check of "
        "addGENominatedPods dropped)",
        (
            Edit(
                NOMINATED,
                "        if p.priority >= pod.priority and p.uid != pod.uid\n",
                "        if p.priority >= pod.priority\n",
            ),
        ),
        (FAILOVER,),
    ),
    # --- gated members ------------------------------------------------------------------------
    Mutation(
        "gates-read-on-the-pod",
        "gated",
        "PreFilter reads the scheduling gates of the pod being scheduled (never gated) instead "
        "of its siblings': gated siblings are not counted",
        (
            Edit(
                COSCHEDULING,
                "            if sibling.scheduling_gates:\n",
                "            if pod.scheduling_gates:\n",
            ),
        ),
        (GATED_NEEDED,),
    ),
    Mutation(
        "gates-without-slack",
        "gated",
        "any gated sibling refuses the group (minMember's slack below the replicas ignored)",
        (Edit(COSCHEDULING, "                gap += 1\n", "                gap = 1\n"),),
        (GATED_SLACK,),
    ),
    # --- CapacityScheduling -------------------------------------------------------------------
    Mutation(
        "quota-max-without-request",
        "quota-max",
        "the max rule compares what the namespace uses, not that plus the pod's request: one "
        "pod past max is let through to the sum-of-mins rule",
        (
            Edit(
                QUOTA,
                "        return self.max is not None and over(request, self.used, self.max, "
                "UPPER_BOUND_OF_MAX)\n",
                "        return self.max is not None and over(ZERO, self.used, self.max, "
                "UPPER_BOUND_OF_MAX)\n",
            ),
        ),
        (QUOTA_MAX, QUOTA_BORROW),
    ),
    Mutation(
        "quota-max-message",
        "quota-max",
        "the refusal's text drifts from SP's ('more than max' for 'more than Max')",
        (
            Edit(
                CAPACITY,
                '        f"{namespace} is more than Max"\n',
                '        f"{namespace} is more than max"\n',
            ),
        ),
        (QUOTA_MAX,),
    ),
    Mutation(
        "quota-no-borrowing",
        "quota-borrow",
        "PreFilter holds a namespace to its own min instead of the sum of every quota's mins: "
        "nothing is borrowed",
        (
            Edit(
                CAPACITY,
                "        if eq.aggregated_used_over_min_with(infos, pre.all):\n",
                "        if own.used_over_min_with(pre.all):\n",
            ),
        ),
        (QUOTA_BORROW, QUOTA_RECLAIM),
    ),
    Mutation(
        "reclaim-needs-lower-priority",
        "quota-reclaim",
        "within its min a preemptor takes only lower-priority pods of the borrowers (default "
        "preemption's rule; SP takes them whatever their priority)",
        (
            Edit(
                VICTIMS,
                "    return p.namespace != pod.namespace and theirs.used_over_min()\n",
                "    return p.namespace != pod.namespace and theirs.used_over_min() "
                "and p.priority < pod.priority\n",
            ),
        ),
        (QUOTA_RECLAIM,),
    ),
    Mutation(
        "reclaim-no-reprieve",
        "quota-reclaim",
        "no potential victim is reprieved: every borrowed pod over the borrower's min is evicted, "
        "not just what the preemptor needs",
        (
            Edit(
                VICTIMS,
                "        if fits and not exceeded():\n            return True, None\n",
                "",
            ),
        ),
        (QUOTA_RECLAIM,),
    ),
)


# --- the tests' node ids, read from their source (nothing collected or run) -------------------


def _param_ids(module: ast.Module, decorator: ast.expr) -> list[str] | None:
    """The ids of ``@pytest.mark.parametrize(names, VALUES)``, VALUES a literal list or a
    module-level name bound to one, each a ``pytest.param(..., id="...")``; None for another
    decorator. Raises ValueError on a form it does not read."""
    if not (
        isinstance(decorator, ast.Call)
        and isinstance(decorator.func, ast.Attribute)
        and decorator.func.attr == "parametrize"
    ):
        return None
    values = decorator.args[1]
    if isinstance(values, ast.Name):
        name = values.id
        bound = [
            node.value
            for node in module.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        ]
        if len(bound) != 1:
            raise ValueError(f"{name}: not one module-level assignment")
        values = bound[0]
    if not isinstance(values, ast.List | ast.Tuple):
        raise ValueError(f"line {values.lineno}: parametrize values not a literal list")
    ids: list[str] = []
    for item in values.elts:
        keywords = {k.arg: k.value for k in item.keywords} if isinstance(item, ast.Call) else {}
        given = keywords.get("id")
        if not (isinstance(given, ast.Constant) and isinstance(given.value, str)):
            raise ValueError(f"line {item.lineno}: a parameter without a literal id")
        ids.append(given.value)
    return ids


def node_ids(root: Path, path: str) -> frozenset[str]:
    """The pytest node ids of the test functions of ``root / path`` (none when it is missing):
    ``path::name``, or ``path::name[id]`` for each parameter of a parametrized one."""
    file = root / path
    if not file.is_file():
        return frozenset()
    module = ast.parse(file.read_text(), filename=str(file))
    found: set[str] = set()
    for node in module.body:
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
            continue
        params = [ids for d in node.decorator_list if (ids := _param_ids(module, d)) is not None]
        if len(params) > 1:
            raise ValueError(f"{path}::{node.name}: stacked parametrize is not read")
        base = f"{path}::{node.name}"
        found.update([f"{base}[{i}]" for i in params[0]] if params else [base])
    return frozenset(found)


def missing_tests(root: Path, row: Mutation) -> list[str]:
    """The row's ids that name no test in the checkout at ``root``."""
    return [t for t in row.tests if t not in node_ids(root, t.split("::", 1)[0])]
