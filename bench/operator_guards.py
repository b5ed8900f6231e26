"""The operator's guard lookups at fleet size, in-process (not a test; no API server).

    .venv/bin/python -m bench.operator_guards --profiles 200 1000

For n profiles, each is stored (a profile event) and then checked as the operator checks it:
``guards.related`` for the event, ``name_holder``, ``lease_holder`` and ``overlapping`` for
its reconcile. ``indexed`` reads the claims the State indexes (``State.rivals``, what the
operator does); ``scan`` rebuilds every profile's claim and compares it with all of them (what
it did before the index: O(n) per event, O(n^2) to apply n profiles). CPU seconds of each,
measured in turns in one process.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from corral.controller import guards
from corral.controller.state import State

Lookup = Callable[[State, list[guards.Claim]], list[guards.Claim]]


def body(i: int) -> dict[str, Any]:
    meta = {
        "name": f"p{i}",
        "resourceVersion": str(i + 1),
        "creationTimestamp": "2026-01-01T00:00:00Z",
    }
    return {"metadata": meta, "spec": {"namespace": "corral-bench", "replicas": 1}}


def indexed(state: State, versions: list[guards.Claim]) -> list[guards.Claim]:
    return state.rivals(versions)


def scan(state: State, _: list[guards.Claim]) -> list[guards.Claim]:
    """State.claims() as it was: every body's claim rebuilt (a benchmark may look inside)."""
    with state._lock:
        return [guards.claim_of(b) for b in state._profiles.values()]


def run(count: int, lookup: Lookup) -> float:
    state = State()
    started = time.process_time()
    for i in range(count):
        claim = guards.claim_of(body(i))
        state.put_profile(body(i))
        guards.related([claim], lookup(state, [claim]))
        claims = lookup(state, [claim])
        guards.name_holder(claim, claims)
        guards.lease_holder(claim, claims, "corral-system")
        guards.overlapping(claim, claims)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, nargs="+", default=[200, 1000])
    args = parser.parse_args()
    for count in args.profiles:
        fast, slow = run(count, indexed), run(count, scan)
        print(f"profiles={count:5d}  indexed {fast * 1e3:8.1f} ms  scan {slow * 1e3:8.1f} ms CPU")


if __name__ == "__main__":
    main()
