"""A preempting extender's answer is held to the tenant's pool and victim filter: it cannot
nominate a node it was not sent (outside the pool), nor name another tenant's pod as a victim.
Against a real corral.extender server scripted to answer so."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from corral.extender import ExtenderPreemptionResult, MetaPod, MetaVictims
from corral.scheduler.config.types import Extender as ExtenderConfig
from corral.scheduler.extender import HTTPExtender
from corral.scheduler.framework.extender import Victims
from corral.scheduler.framework.status import StatusError
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.helper.preemption.extenders import call_preemption_extenders
from corral.testing.builders import pod_info

from .conftest import Script

MINE = pod_info("mine", namespace="team-a", node_name="pool-a-1")
OTHERS = pod_info("theirs", namespace="team-b", node_name="pool-a-1")
OUTSIDE = pod_info("outside", namespace="team-a", node_name="pool-b-1")
ON_NODE = {"pool-a-1": [MINE, OTHERS], "pool-b-1": [OUTSIDE]}
SENT = {"pool-a-1": Victims((MINE,), 0)}  # DefaultPreemption's candidates, inside the pool


def _pods_on(node: str) -> Sequence[PodInfo]:
    return ON_NODE[node]


def _team_a(pod: PodInfo) -> bool:  # the tenant's victim filter: its own namespaces only
    return pod.namespace == "team-a"


def _answer(node: str, victim: PodInfo) -> ExtenderPreemptionResult:
    return ExtenderPreemptionResult({node: MetaVictims([MetaPod(victim.uid)], 0)})


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        pytest.param(_answer("pool-b-1", OUTSIDE), 'nominated node "pool-b-1", which is not '
                     "one of the candidates it was sent", id="a node outside the tenant pool"),
        pytest.param(_answer("pool-a-1", OTHERS), 'named pod team-b/theirs on node "pool-a-1" '
                     "as a victim, which this scheduler may not evict",
                     id="another tenant's pod"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("ignorable", [False, True])
def test_an_answer_beyond_the_tenants_bounds_is_refused(
    scripted: tuple[str, Script], answer: ExtenderPreemptionResult, error: str, ignorable: bool
) -> None:
    url, script = scripted
    script.preempt = answer
    ext = HTTPExtender(
        ExtenderConfig(url_prefix=url, preempt_verb="preempt", node_cache_capable=True,
                       ignorable=ignorable)
    )  # fmt: skip
    if ignorable:  # skipped: the candidates stay as they were
        kept = call_preemption_extenders([ext], pod_info("p"), SENT, _pods_on, _team_a)
        assert kept == SENT
        return
    with pytest.raises(StatusError) as caught:
        call_preemption_extenders([ext], pod_info("p"), SENT, _pods_on, _team_a)
    assert caught.value.status.message == f"extender {url} {error}"
    assert [verb for verb, _ in script.seen] == ["preempt"]


def test_an_answer_within_bounds_narrows_the_candidates(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    script.preempt = _answer("pool-a-1", MINE)
    ext = HTTPExtender(
        ExtenderConfig(url_prefix=url, preempt_verb="preempt", node_cache_capable=True)
    )
    kept = call_preemption_extenders([ext], pod_info("p"), SENT, _pods_on, _team_a)
    assert kept == {"pool-a-1": Victims((MINE,), 0)}
