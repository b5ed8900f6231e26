"""Markdown table and per-workload throughput plots from a ``results.json``.

The table has one row per workload and repetition: each scheduler's mean throughput, latency
p50/p99, CPU seconds during the measured phase and peak RSS, and the Corral/upstream ratios
(throughput: higher is better; latency, CPU and memory: lower is better).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import profiling

Run = dict[str, Any]


def _by_key(document: dict[str, Any]) -> dict[tuple[str, int], dict[str, Run]]:
    table: dict[tuple[str, int], dict[str, Run]] = defaultdict(dict)
    for run in document["runs"]:
        table[(run["workload"], run["repetition"])][run["scheduler"]] = run
    return table


def _ratio(a: float | None, b: float | None) -> str:
    if not a or not b:
        return "-"
    return f"{a / b:.2f}x"


def _cell(run: Run | None, fmt: str, value: Any) -> str:
    if run is None:
        return "-"
    if run.get("error") and not run.get("bound"):
        return "failed"
    return fmt.format(value)


def _value(run: Run | None, path: tuple[str, ...]) -> float | None:
    """The number at ``path`` inside a run, or None where any step is missing."""
    value: Any = run
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return float(value) if value is not None else None


def table(document: dict[str, Any]) -> str:
    lines = [
        "| workload (nodes/init/measured) | rep | upstream pods/s | corral pods/s | ratio "
        "| upstream p50 / p99 s | corral p50 / p99 s | p99 ratio "
        "| upstream CPU s | corral CPU s | CPU ratio | upstream RSS MB | corral RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (workload, rep), runs in _by_key(document).items():
        up, co = runs.get("upstream"), runs.get("corral")
        params = (up or co or {}).get("params", {})
        size = f"{params.get('nodes')}/{params.get('init_pods')}/{params.get('measured_pods')}"

        def lat(run: Run | None) -> str:
            if run is None or not run.get("latency_s"):
                return "-"
            return f"{run['latency_s']['p50']:.2f} / {run['latency_s']['p99']:.2f}"

        def get(run: Run | None, *path: str) -> float | None:
            return _value(run, path)

        flags = "".join(
            f" ({name}: {r['bound']}/{r['measured_pods']} bound)"
            for name, r in runs.items()
            if not r.get("complete")
        )
        lines.append(
            f"| {workload} ({size}){flags} | {rep + 1} "
            f"| {_cell(up, '{:.1f}', get(up, 'throughput_mean'))} "
            f"| {_cell(co, '{:.1f}', get(co, 'throughput_mean'))} "
            f"| {_ratio(get(co, 'throughput_mean'), get(up, 'throughput_mean'))} "
            f"| {lat(up)} | {lat(co)} "
            f"| {_ratio(get(co, 'latency_s', 'p99'), get(up, 'latency_s', 'p99'))} "
            f"| {_cell(up, '{:.1f}', get(up, 'scheduler_cpu_s'))} "
            f"| {_cell(co, '{:.1f}', get(co, 'scheduler_cpu_s'))} "
            f"| {_ratio(get(co, 'scheduler_cpu_s'), get(up, 'scheduler_cpu_s'))} "
            f"| {_cell(up, '{:.0f}', get(up, 'scheduler_peak_rss_mb'))} "
            f"| {_cell(co, '{:.0f}', get(co, 'scheduler_peak_rss_mb'))} |"
        )
    out = "\n".join(lines) + "\n"
    ceilings = list(document.get("ceilings") or [])
    if document.get("ceiling"):  # results.json from before per-repetition ceilings
        ceilings.insert(0, {"repetition": 0, **document["ceiling"]})
    if ceilings:
        out += (
            "\nCeiling (no scheduler; a minimal client as system:kube-scheduler posting "
            "bindings, 32 in flight), measured at the start of each repetition:\n\n"
            "| rep | nodes / pods | pods created/s | bindings/s | create+bind pods/s | note |\n"
            "|---|---|---|---|---|---|\n"
        )
        for c in ceilings:
            out += (
                f"| {c['repetition'] + 1} | {c['nodes']} / {c['pods']} | {c['create']:.0f} "
                f"| {c['bind']:.0f} | {c['pipeline']:.0f} | {c.get('note', '')} |\n"
            )
    for note in document.get("notes", []):
        out += f"\nNote: {note}\n"
    return out


# (label, path into a run, format) of every figure the table reports per scheduler.
FIGURES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("pods/s", ("throughput_mean",), "{:.1f}"),
    ("p50 s", ("latency_s", "p50"), "{:.2f}"),
    ("p99 s", ("latency_s", "p99"), "{:.2f}"),
    ("CPU s", ("scheduler_cpu_s",), "{:.1f}"),
    ("RSS MB", ("scheduler_peak_rss_mb",), "{:.0f}"),
)
TOLERANCE = 0.15  # the bar: every figure within 15% across runs


PROBE = "machine probe ms"  # not a scheduler figure: shown, never counted
RATIO = "pods/s ratio"
FORMATS: dict[str, str] = {
    **{label: fmt for label, _, fmt in FIGURES},
    RATIO: "{:.2f}",
    PROBE: "{:.1f}",
}

Series = dict[tuple[str, str, str], list[float]]


def collect(document: dict[str, Any]) -> Series:
    """(workload, scheduler, figure) -> its value in each complete repetition, in order; the
    Corral/upstream throughput ratio under the scheduler ``corral/upstream``; the machine
    probe (mean of before and after the measured phase) under :data:`PROBE`."""
    per: Series = defaultdict(list)
    for run in document["runs"]:
        if not run.get("complete"):
            continue
        for label, path, _fmt in FIGURES:
            value = _value(run, path)
            if value is not None:
                per[(run["workload"], run["scheduler"], label)].append(value)
        if run.get("probe_ms"):
            probe = sum(run["probe_ms"]) / len(run["probe_ms"])
            per[(run["workload"], run["scheduler"], PROBE)].append(probe)
    for (workload, _rep), runs in _by_key(document).items():
        up, co = runs.get("upstream"), runs.get("corral")
        if up and co and up.get("complete") and co.get("complete") and up["throughput_mean"]:
            per[(workload, "corral/upstream", RATIO)].append(
                co["throughput_mean"] / up["throughput_mean"]
            )
    return per


def spread(values: list[float]) -> float | None:
    """``max/min - 1``; None for fewer than two values or a non-positive one."""
    if len(values) < 2 or min(values) <= 0:
        return None
    return max(values) / min(values) - 1


def reproducibility(document: dict[str, Any]) -> str:
    """Every figure across repetitions: its values, spread and whether that is within
    :data:`TOLERANCE`. The machine probe is shown beside, as the platform's own drift."""
    lines = [
        "| workload | scheduler | figure | per repetition | spread (max/min - 1) | within 15% |",
        "|---|---|---|---|---|---|",
    ]
    within = total = 0
    for (workload, kind, label), values in collect(document).items():
        s = spread(values)
        if s is None:
            continue
        ok = s <= TOLERANCE
        if label != PROBE:
            within += ok
            total += 1
        shown = ", ".join(FORMATS[label].format(v) for v in values)
        verdict = "(machine)" if label == PROBE else "yes" if ok else "**no**"
        lines.append(f"| {workload} | {kind} | {label} | {shown} | {s * 100:.0f}% | {verdict} |")
    summary = f"{within} of {total} figures within 15% across repetitions.\n\n"
    return summary + "\n".join(lines) + "\n"


def plot(document: dict[str, Any], out: Path) -> list[Path]:
    # matplotlib comes with the `bench` extra; the table works without it.
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    written = []
    by_workload: dict[str, list[Run]] = defaultdict(list)
    for run in document["runs"]:
        by_workload[run["workload"]].append(run)
    colors = {"upstream": "tab:blue", "corral": "tab:orange"}
    styles = ["-", "--", ":", "-."]
    for workload, runs in by_workload.items():
        fig, ax = plt.subplots(figsize=(7, 3.5), dpi=100)
        offered: list[float] = next(
            (r["created_series"] for r in runs if r.get("created_series")), []
        )
        if offered:
            ax.plot(range(len(offered)), offered, ":", color="gray", lw=1,
                    label="pods created per second (run 1)")  # fmt: skip
        for run in runs:
            series = run.get("throughput_series") or []
            if not series:
                continue
            ax.plot(
                range(len(series)),
                series,
                styles[run["repetition"] % len(styles)],
                color=colors.get(run["scheduler"], "gray"),
                label=f"{run['scheduler']} (run {run['repetition'] + 1}, "
                f"mean {run['throughput_mean']:.0f}/s)",
            )
        params = runs[0]["params"]
        ax.set_title(
            f"{workload}: {params['nodes']} nodes, {params['init_pods']} init, "
            f"{params['measured_pods']} measured pods"
        )
        ax.set_xlabel("seconds since the first measured pod was created")
        ax.set_ylabel("pods bound per second")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = out / f"{workload}.png"
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written


def write(document: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    text = table(document) + "\nReproducibility:\n\n" + reproducibility(document)
    (out / "table.md").write_text(text)
    plot(document, out)
    for raw in sorted((out / "profiles").glob("*.txt")):
        (raw.with_suffix(".md")).write_text(f"# {raw.stem}\n\n" + profiling.summarize(raw))
