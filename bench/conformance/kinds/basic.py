"""The original scenarios: every default plugin's filter and score (see ``generate``)."""

from __future__ import annotations

import random

from bench.conformance.generate import Scenario, generate
from bench.conformance.kinds import Kind, Sizes, register


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    # ``generate(seed)`` rather than ``rng``: the recorded upstream decisions replayed by the
    # unit suite were made from these exact scenarios.
    del rng
    return generate(seed, nodes=sizes.nodes, running=sizes.running, pods=sizes.pods)


register(
    Kind(
        "basic",
        "the default plugins' filters and scores, default profile",
        _make,
        Sizes(nodes=30, running=60, pods=60),
    )
)
