"""The CPU a reconcile spends on a profile before any request, in-process (not a test; no API
server).

    .venv/bin/python -m bench.operator_render --profiles 200

For n profiles (as ``bench.operator_apply`` creates them: replicas 1, one namespace), each is
checked as the reconcile checks it (``refusals.check``: parse, default, validate, guards),
rendered (``corral.render.render``: the templates and their YAML parsed back) and digested
(``apply.digest`` of every object, what decides whether to apply it). CPU milliseconds per
profile of each step; a reconcile renders only when the profile changed
(``corral.controller.reconcile``), so the render is paid once per change, the rest every time.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from corral.api import default_catalog
from corral.controller import apply, guards, refusals
from corral.controller.settings import Settings
from corral.render import render


def body(i: int) -> dict[str, Any]:
    meta = {"name": f"bench-{i}", "uid": f"uid-{i}", "generation": 1, "resourceVersion": "1"}
    return {"apiVersion": "corral.dev/v1alpha1", "kind": "SchedulerProfile", "metadata": meta,
            "spec": {"namespace": "corral-bench", "replicas": 1}}  # fmt: skip


def run(count: int) -> dict[str, float]:
    catalog, settings = default_catalog(), Settings()
    spent = {"check": 0.0, "render": 0.0, "digest": 0.0}
    for i in range(count):
        b = body(i)
        started = time.process_time()
        profile, refusal = refusals.check(
            b, settings=settings, catalog=catalog, claims=[guards.claim_of(b)]
        )
        if profile is None or refusal is not None:
            raise SystemExit(f"bench profile refused: {refusal}")
        checked = time.process_time()
        objects = render(profile, catalog).objects
        rendered = time.process_time()
        for obj in objects:
            apply.digest(obj)
        spent["check"] += checked - started
        spent["render"] += rendered - checked
        spent["digest"] += time.process_time() - rendered
    return {step: seconds * 1e3 / count for step, seconds in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, nargs="+", default=[200])
    args = parser.parse_args()
    for count in args.profiles:
        ms = run(count)
        print(
            f"profiles={count:5d}  CPU ms per profile: check {ms['check']:.2f}  "
            f"render {ms['render']:.2f}  digest {ms['digest']:.2f}"
        )


if __name__ == "__main__":
    main()
