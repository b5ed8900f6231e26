"""Two benchmark runs side by side: is every figure reproducible within 15%?

A run is one ``results.json`` (one ``make bench``). Its figure for a workload and scheduler is
the mean over its repetitions (complete runs only). For each figure: run A, run B and the
spread ``max/min - 1``. The ceiling (API server alone, no scheduler) is compared the same way:
it shows how far the platform itself drifted between the runs, which bounds how reproducible
any scheduler figure measured on it can be.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any

from bench.report import FIGURES, TOLERANCE, Run, _value

Figures = dict[tuple[str, str, str], float]


def run_figures(document: dict[str, Any]) -> Figures:
    """(workload, scheduler or 'corral/upstream', figure) -> mean over repetitions."""
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    by_rep: dict[tuple[str, int], dict[str, Run]] = defaultdict(dict)
    for run in document["runs"]:
        if not run.get("complete"):
            continue
        by_rep[(run["workload"], run["repetition"])][run["scheduler"]] = run
        for label, path, _fmt in FIGURES:
            value = _value(run, path)
            if value is not None:
                values[(run["workload"], run["scheduler"], label)].append(value)
    for (workload, _rep), runs in by_rep.items():
        up, co = runs.get("upstream"), runs.get("corral")
        if up and co and up["throughput_mean"]:
            ratio = co["throughput_mean"] / up["throughput_mean"]
            values[(workload, "corral/upstream", "pods/s ratio")].append(ratio)
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
    for key in fa:
        if key not in fb or min(fa[key], fb[key]) <= 0:
            continue
        workload, kind, label = key
        spread = max(fa[key], fb[key]) / min(fa[key], fb[key]) - 1
        ok = spread <= TOLERANCE
        if workload != "ceiling":
            within += ok
            total += 1
        fmt = "{:.2f}" if fa[key] < 10 else "{:.1f}" if fa[key] < 100 else "{:.0f}"
        lines.append(
            f"| {workload} | {kind} | {label} | {fmt.format(fa[key])} | {fmt.format(fb[key])} "
            f"| {spread * 100:.0f}% | {'yes' if ok else '**no**'} |"
        )
    head = (
        f"Run A: {a.get('command', '?')} ({a.get('started', '?')}); "
        f"run B: {b.get('command', '?')} ({b.get('started', '?')}).\n"
        "Each figure is the mean over the run's repetitions.\n\n"
        f"**{within} of {total} scheduler figures within 15%.**\n\n"
    )
    return head + "\n".join(lines) + "\n"
