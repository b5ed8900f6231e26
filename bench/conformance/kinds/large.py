"""300+ nodes: node counts where upstream's sampling would matter (it is off: 100% scored)."""

from __future__ import annotations

import random

from bench.conformance.generate import Scenario, build
from bench.conformance.kinds import Kind, Sizes, register


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    # Anywhere from the size asked to a third more, so seeds differ in node count too.
    nodes = sizes.nodes + rng.randrange(sizes.nodes // 3 + 1)
    return build(rng, seed, nodes=nodes, running=sizes.running, pods=sizes.pods)


register(
    Kind("large", "300 to 400 nodes, the basic pods", _make, Sizes(nodes=300, running=450, pods=60))
)
