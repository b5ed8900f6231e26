"""Two benchmark runs side by side: is every figure reproducible within 15%?

A run is one ``results.json`` (one ``make bench``). Its figure for a workload and scheduler is
the mean over its repetitions (complete runs only). For each figure: run A, run B and the
spread ``max/min - 1``. The ceiling (API server alone, no scheduler) is compared the same way:
it shows how far the platform itself drifted between the runs, which bounds how reproducible
any scheduler figure measured on it can be.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any

from bench.report import FORMATS, PROBE, TOLERANCE, collect, spread

Figures = dict[tuple[str, str, str], float]


def run_figures(document: dict[str, Any]) -> Figures:
    """(workload, scheduler or 'corral/upstream', figure) -> mean over repetitions; the
    ceiling under ('ceiling', 'API server alone', ...)."""
    values = collect(document)
    for c in document.get("ceilings") or []:
        for key in ("create", "bind", "pipeline"):
            values[("ceiling", "API server alone", f"{key}/s")].append(float(c[key]))
    return {k: fmean(v) for k, v in values.items() if v}


def compare(a: dict[str, Any], b: dict[str, Any]) -> str:
    fa, fb = run_figures(a), run_figures(b)
    lines = [
        "| workload | scheduler | figure | run A | run B | spread (max/min - 1) | within 15% |",
        "|---|---|---|---|---|---|---|",
    ]
    within = total = 0
    for key, value_a in fa.items():
        if key not in fb:
            continue
        s = spread([value_a, fb[key]])
        if s is None:
            continue
        workload, kind, label = key
        machine = workload == "ceiling" or label == PROBE
        ok = s <= TOLERANCE
        if not machine:
            within += ok
            total += 1
        fmt = FORMATS.get(label, "{:.0f}")
        verdict = "(machine)" if machine else "yes" if ok else "**no**"
        lines.append(
            f"| {workload} | {kind} | {label} | {fmt.format(value_a)} | {fmt.format(fb[key])} "
            f"| {s * 100:.0f}% | {verdict} |"
        )
    head = (
        f"Run A: {a.get('command', '?')} ({a.get('started', '?')}); "
        f"run B: {b.get('command', '?')} ({b.get('started', '?')}).\n"
        "Each figure is the mean over the run's repetitions; (machine) rows are the platform "
        "alone (API server ceiling, CPU probe), not counted.\n\n"
        f"**{within} of {total} scheduler figures within 15%.**\n\n"
    )
    return head + "\n".join(lines) + "\n"
