"""A protocol run's verdicts: per workload, the median Corral/upstream ratio over the pairs with
its exact 95% interval (``bench.intervals``), for throughput, scheduler CPU seconds per 1,000
pods and peak RSS; each scheduler's absolute figures beside; API requests per pod; where
Corral's scheduling thread spent its time. Also the comparison of two protocol runs.

A pair counts only when both of its runs bound every measured pod; the table says how many
pairs counted and shows an interval's real coverage whenever it is below 95%.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from bench.goals import MISSED
from bench.intervals import Interval, agree, median_interval, overlap
from bench.schedulers import CEILING
from bench.workloads import goals_of

Run = dict[str, Any]
Document = dict[str, Any]


# Starts the note that marks a run kept only as its tables (``bench.transcribe``).
TRANSCRIBED_NOTE = "this run's record was "
LABELS = {
    "throughput": "throughput",
    "cpu_per_1000": "CPU s / 1,000 pods",
    "rss": "peak RSS",
}


def throughput(run: Run) -> float:
    return float(run["throughput_mean"])


def cpu_per_1000(run: Run) -> float:
    return float(run["scheduler_cpu_s"]) / max(1, int(run["bound"])) * 1000


def rss(run: Run) -> float:
    return float(run["scheduler_peak_rss_mb"])


FIGURES: dict[str, Callable[[Run], float]] = {
    "throughput": throughput,
    "cpu_per_1000": cpu_per_1000,
    "rss": rss,
}


def pairs(document: Document) -> dict[str, list[tuple[Run, Run]]]:
    """workload -> its complete pairs as (upstream, corral), in round order."""
    by: dict[tuple[str, int], dict[str, Run]] = defaultdict(dict)
    for run in document["runs"]:
        by[(run["workload"], run["repetition"])][run["scheduler"]] = run
    out: dict[str, list[tuple[Run, Run]]] = defaultdict(list)
    for (workload, _round), runs in sorted(by.items(), key=lambda kv: kv[0][1]):
        up, co = runs.get("upstream"), runs.get("corral")
        if up and co and up.get("complete") and co.get("complete") and throughput(up) > 0:
            out[workload].append((up, co))
    return dict(out)


def ceilings(document: Document) -> dict[str, dict[int, Run]]:
    """workload -> round -> its complete ceiling run (API-bound workloads only)."""
    out: dict[str, dict[int, Run]] = defaultdict(dict)
    for run in document["runs"]:
        if run["scheduler"] == CEILING and run.get("complete") and throughput(run) > 0:
            out[run["workload"]][run["repetition"]] = run
    return dict(out)


@dataclass(frozen=True)
class WorkloadSummary:
    workload: str
    params: dict[str, Any]
    pairs: int  # complete pairs
    planned: int  # pairs attempted (complete or not)
    ratios: dict[str, Interval]  # figure -> Corral/upstream ratio
    upstream: dict[str, Interval]  # figure -> absolute
    corral: dict[str, Interval]
    requests_per_pod: dict[str, float | None]  # scheduler -> median (None: not scraped)
    phases_ms_per_pod: dict[str, dict[str, float]]  # Corral: phase -> {wall, cpu} ms per pod
    # API-bound workloads, over the pairs whose ceiling run completed too: "pods_s" (the
    # ceiling's throughput), "corral" and "upstream" (each scheduler's fraction of it).
    ceiling: dict[str, Interval] = field(default_factory=dict)

    def verdicts(self) -> dict[str, str]:
        """figure -> met / missed / undecided against the workload's goals (bench.goals)."""
        return goals_of(self.workload).judge(self.ratios, self.ceiling.get("corral"))

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload, "params": self.params, "pairs": self.pairs,
            "planned": self.planned,
            "ratios": {k: v.to_json() for k, v in self.ratios.items()},
            "upstream": {k: v.to_json() for k, v in self.upstream.items()},
            "corral": {k: v.to_json() for k, v in self.corral.items()},
            "verdicts": self.verdicts(), "requests_per_pod": self.requests_per_pod,
            "phases_ms_per_pod": self.phases_ms_per_pod,
            **({"ceiling": {k: v.to_json() for k, v in self.ceiling.items()}}
               if self.ceiling else {}),
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorkloadSummary:
        """The inverse of ``to_json``. An absolute figure stored as its median alone (a run
        transcribed from its table, ``bench.transcribe``) reads as an interval of no width and
        no coverage: only its median is ever shown."""

        def absolute(figures: dict[str, dict[str, float]]) -> dict[str, Interval]:
            return {
                name: Interval.from_json(
                    f if "low" in f else {"low": f["median"], "high": f["median"],
                                          "coverage": 0.0, "n": 0, **f}
                )
                for name, f in figures.items()
            }  # fmt: skip

        return cls(
            str(data["workload"]), dict(data["params"]), int(data["pairs"]),
            int(data["planned"]),
            {k: Interval.from_json(v) for k, v in data["ratios"].items()},
            absolute(data["upstream"]), absolute(data["corral"]),
            dict(data["requests_per_pod"]), dict(data["phases_ms_per_pod"]),
            {k: Interval.from_json(v) for k, v in (data.get("ceiling") or {}).items()},
        )  # fmt: skip


def missed(summaries: list[WorkloadSummary]) -> list[str]:
    """One line per goal a workload missed (bench.goals), naming the ratio and the bar."""
    out = []
    for s in summaries:
        goals = goals_of(s.workload)
        for figure, given in s.verdicts().items():
            if given != MISSED:
                continue
            bar, higher = goals.bound(figure)
            line = (f"{s.workload} ({size(s)}): {LABELS[figure]} ratio "
                    f"{_iv(s.ratios[figure])}, goal {'≥' if higher else '≤'} {bar:g}x")  # fmt: skip
            if figure == "throughput" and (wall := s.ceiling.get("corral")) is not None:
                line += f"; Corral at {_iv(wall)} of the ceiling"
            out.append(line)
    return out


def _requests(runs: list[Run]) -> float | None:
    values = [r["api_requests"]["per_pod"] for r in runs if r.get("api_requests")]
    return median(values) if values else None


def _phases(runs: list[Run]) -> dict[str, dict[str, float]]:
    """Median over the runs of each phase's wall and CPU milliseconds per bound pod."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        pods = max(1, int(run.get("bound") or 0))
        for phase, clocks in (run.get("engine_phases") or {}).items():
            for clock in ("wall", "cpu"):
                per[phase][clock].append(clocks.get(clock, 0.0) / pods * 1000)
    return {phase: {clock: median(v) for clock, v in clocks.items()}
            for phase, clocks in per.items()}  # fmt: skip


def of(document: Document) -> list[WorkloadSummary]:
    """The run's per-workload summaries: computed from its runs, or, for a record that keeps
    only its summary (a run transcribed from its table, ``bench.transcribe``), as stored."""
    if document.get("runs"):
        return summarize(document)
    return [WorkloadSummary.from_json(s) for s in document.get("summary") or []]


def summarize(document: Document) -> list[WorkloadSummary]:
    complete = pairs(document)
    walls = ceilings(document)
    planned: dict[str, int] = defaultdict(int)
    params: dict[str, dict[str, Any]] = {}
    for run in document["runs"]:
        if run["scheduler"] == "upstream":
            planned[run["workload"]] += 1
        params.setdefault(run["workload"], run.get("params", {}))
    out = []
    for workload in dict.fromkeys(r["workload"] for r in document["runs"]):
        if workload not in planned:  # no upstream run at all: a workload without a rival
            out.append(_solo(workload, params[workload], document["runs"]))
            continue
        got = complete.get(workload, [])
        ratios: dict[str, Interval] = {}
        absolute: dict[str, dict[str, Interval]] = {"upstream": {}, "corral": {}}
        for name, figure in FIGURES.items():
            values = [(figure(up), figure(co)) for up, co in got]
            usable = [(u, c) for u, c in values if u > 0]
            if not usable:
                continue
            ratios[name] = median_interval([c / u for u, c in usable])
            absolute["upstream"][name] = median_interval([u for u, _ in usable])
            absolute["corral"][name] = median_interval([c for _, c in usable])
        out.append(
            WorkloadSummary(
                workload, params[workload], len(got), planned[workload], ratios,
                absolute["upstream"], absolute["corral"],
                {"upstream": _requests([u for u, _ in got]),
                 "corral": _requests([c for _, c in got])},
                _phases([c for _, c in got]),
                _ceiling(got, walls.get(workload, {})),
            )
        )  # fmt: skip
    return out


def _solo(workload: str, params: dict[str, Any], runs: list[Run]) -> WorkloadSummary:
    """A workload only Corral runs (``Workload.corral_only``): its absolute figures over its
    complete runs, no ratio ("pairs" counts those runs)."""
    mine = [r for r in runs if r["workload"] == workload and r["scheduler"] == "corral"]
    done = [r for r in mine if r.get("complete") and throughput(r) > 0]
    corral = (
        {name: median_interval([figure(r) for r in done]) for name, figure in FIGURES.items()}
        if done
        else {}
    )
    return WorkloadSummary(
        workload,
        params,
        len(done),
        len(mine),
        {},
        {},
        corral,
        {"upstream": None, "corral": _requests(done)},
        _phases(done),
        {},
    )


def _ceiling(got: list[tuple[Run, Run]], walls: dict[int, Run]) -> dict[str, Interval]:
    """The ceiling's throughput and each scheduler's fraction of it, over the pairs whose
    ceiling run completed (none: an empty dict)."""
    triples = [(up, co, walls[up["repetition"]]) for up, co in got if up["repetition"] in walls]
    if not triples:
        return {}
    return {
        "pods_s": median_interval([throughput(c) for _, _, c in triples]),
        "corral": median_interval([throughput(co) / throughput(c) for _, co, c in triples]),
        "upstream": median_interval([throughput(up) / throughput(c) for up, _, c in triples]),
    }


# --- markdown -------------------------------------------------------------------------------


def _iv(interval: Interval | None, fmt: str = "{:.2f}") -> str:
    if interval is None:
        return "-"
    text = (
        f"{fmt.format(interval.median)} [{fmt.format(interval.low)}, {fmt.format(interval.high)}]"
    )
    if not interval.reaches:
        text += f" ({interval.coverage:.0%})"
    return text


def fmt_interval(interval: Interval | None, fmt: str = "{:.2f}") -> str:
    """An interval as the tables show it: ``median [low, high]``, its coverage beside when
    below 95%."""
    return _iv(interval, fmt)


def _abs(s: WorkloadSummary, figure: str, fmt: str) -> str:
    up, co = s.upstream.get(figure), s.corral.get(figure)
    if co is None:
        return "-"
    return f"{'-' if up is None else fmt.format(up.median)} / {fmt.format(co.median)}"


def _req(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(summaries: list[WorkloadSummary]) -> str:
    """The verdict table: ratios with intervals, verdicts, absolute medians beside; where a
    run measured the ceiling, each scheduler's fraction of it (the throughput verdict then
    follows bench.goals' ceiling rule)."""
    walls = any(s.ceiling for s in summaries)
    lines = [
        "| workload (nodes / init / measured) | pairs | throughput ratio [95% CI] | ≥ 1.0x "
        "| CPU/1,000 pods ratio [95% CI] | ≤ 0.9x | peak RSS ratio [95% CI] | ≤ 1.0x "
        "| pods/s up / Corral | CPU s per 1,000 pods up / Corral | peak RSS MB up / Corral "
        "| API requests per pod up / Corral |"
        + (" Corral of the ceiling [95% CI] | upstream of the ceiling | ceiling pods/s |"
           if walls else ""),
        "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|" if walls else ""),
    ]  # fmt: skip
    for s in summaries:
        v = s.verdicts()
        pairs_cell = f"{s.pairs}" if s.pairs == s.planned else f"{s.pairs} of {s.planned}"
        lines.append(
            f"| {s.workload} ({size(s)}) | {pairs_cell} "
            f"| {_iv(s.ratios.get('throughput'))} | {v.get('throughput', '-')} "
            f"| {_iv(s.ratios.get('cpu_per_1000'))} | {v.get('cpu_per_1000', '-')} "
            f"| {_iv(s.ratios.get('rss'))} | {v.get('rss', '-')} "
            f"| {_abs(s, 'throughput', '{:.1f}')} | {_abs(s, 'cpu_per_1000', '{:.2f}')} "
            f"| {_abs(s, 'rss', '{:.0f}')} "
            f"| {_req(s.requests_per_pod['upstream'])} / {_req(s.requests_per_pod['corral'])} |"
            + (f" {_iv(s.ceiling.get('corral'))} | {_iv(s.ceiling.get('upstream'))} "
               f"| {_iv(s.ceiling.get('pods_s'), '{:.0f}')} |" if walls else "")
        )  # fmt: skip
    return "\n".join(lines) + "\n"


PHASE_ORDER = ("pop", "snapshot", "filter", "score", "post_filter", "assume", "handoff",
               "failure", "span:binding_cycle", "span:api_bind", "gc")  # fmt: skip


def phases_table(summaries: list[WorkloadSummary]) -> str:
    """Corral's scheduling thread per phase (wall ms per pod, and how much of it was CPU),
    then the binding threads' spans and the garbage collector's time on every thread."""
    shown = [p for p in PHASE_ORDER if any(p in s.phases_ms_per_pod for s in summaries)]
    if not shown:
        return "(no engine phase counters in this run)\n"
    head = "| workload | " + " | ".join(p.removeprefix("span:") for p in shown) + " |"
    lines = [head, "|---|" + "---|" * len(shown)]
    for s in summaries:
        cells = []
        for phase in shown:
            clocks = s.phases_ms_per_pod.get(phase)
            if clocks is None:
                cells.append("-")
                continue
            wall, cpu = clocks.get("wall", 0.0), clocks.get("cpu", 0.0)
            cells.append(f"{wall:.2f} ({cpu:.2f})")
        lines.append(f"| {s.workload} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


THREAD_ORDER = ("MainThread", "scheduling", "binding")  # then any other role, by name
# Records from before the binding pool named its threads binding_N label each apart
# (binding-17): one role all the same.
_THREAD_NUMBER = re.compile(r"-\d+$")


def _cpu_by_role(phases: dict[str, dict[str, float]]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for phase, clocks in phases.items():
        if phase.startswith("thread:"):
            out[_THREAD_NUMBER.sub("", phase.removeprefix("thread:"))] += clocks.get("cpu", 0.0)
    return out


def threads_table(summaries: list[WorkloadSummary]) -> str:
    """Corral's CPU per thread role (ms per pod), where the engine exports it."""
    by_role = [_cpu_by_role(s.phases_ms_per_pod) for s in summaries]
    roles = {r for cpu in by_role for r in cpu}
    if not roles:
        return ""
    shown = [r for r in THREAD_ORDER if r in roles] + sorted(roles - set(THREAD_ORDER))
    lines = ["| workload | " + " | ".join(shown) + " |", "|---|" + "---|" * len(shown)]
    for s, cpu in zip(summaries, by_role, strict=True):
        cells = ["-" if name not in cpu else f"{cpu[name]:.2f}" for name in shown]
        lines.append(f"| {s.workload} | " + " | ".join(cells) + " |")
    return (
        "\nCorral's CPU by thread, ms per pod (MainThread is the event loop: the informers, "
        "Events, pod status writes):\n\n" + "\n".join(lines) + "\n"
    )


def corral_args(document: Document) -> tuple[str, ...]:
    """The arguments Corral ran with beyond the defaults (none for the default engine)."""
    return tuple(document.get("mode", {}).get("corral_args") or ())


def markdown(document: Document) -> str:
    rows = of(document)
    mode = document.get("mode", {})
    codes = [document.get("code")] + [r.get("code") for r in document.get("resumed") or []]
    code = ", ".join(dict.fromkeys(f"`{c}`" for c in codes if c))
    args = corral_args(document)
    variant = f"; Corral ran with `{' '.join(args)}`" if args else ""
    head = (
        f"Command: `{document.get('command', '?')}`; {f'code {code}; ' if code else ''}"
        f"{document.get('started', '?')} to "
        f"{document.get('finished', 'unfinished')}; control plane "
        f"{'lean (etcd + kube-apiserver)' if mode.get('lean') else 'full'}; pinning "
        f"{mode.get('pin') or 'off'}; {document.get('pairs', '?')} pairs planned{variant}.\n\n"
        "Ratios are Corral/upstream, median over the pairs with the exact distribution-free "
        "interval (coverage shown when below 95%); a verdict is on the whole interval "
        "(met / missed / undecided). Absolute figures are the medians.\n\n"
    )
    notes = "".join(f"\nNote: {n}\n" for n in document.get("notes") or [])
    if transcribed := document.get("transcribed"):
        notes += f"\nNote: {TRANSCRIBED_NOTE}{transcribed}\n"
    return (
        head + table(rows) + "\nCorral's scheduling thread, ms per pod: wall (of which "
        "thread CPU); binding threads' spans likewise (summed over threads); gc: the garbage "
        "collector on every thread:\n\n" + phases_table(rows) + threads_table(rows) + notes
    )


# --- two runs -------------------------------------------------------------------------------


def size(s: WorkloadSummary) -> str:
    """A workload's sizes as the tables show them: nodes / init pods / measured pods."""
    p = s.params
    return f"{p.get('nodes')} / {p.get('init_pods')} / {p.get('measured_pods')}"


def agreement(rows: list[tuple[str, WorkloadSummary, WorkloadSummary]]) -> str:
    """Do the later measurements agree with the earlier ones? Each row is (the earlier run's
    name, its summary, the later summary) of one workload; for each ratio, agreement is each
    median inside the other's interval. A workload measured at other sizes is not compared."""
    lines = [
        "| workload | figure | earlier run | earlier [95% CI] | this run [95% CI] | agree "
        "| intervals overlap |",
        "|---|---|---|---|---|---|---|",
    ]
    agreed = overlapped = total = 0
    for name, left, right in rows:
        if size(left) != size(right):
            lines.append(f"| {right.workload} | all | {name} | sizes {size(left)} | sizes "
                         f"{size(right)} | not compared |")  # fmt: skip
            continue
        for figure in FIGURES:
            ia, ib = left.ratios.get(figure), right.ratios.get(figure)
            if ia is None or ib is None:
                continue
            ok, shared = agree(ia, ib), overlap(ia, ib)
            agreed += ok
            overlapped += shared
            total += 1
            lines.append(
                f"| {right.workload} | {LABELS[figure]} ratio | {name} | {_iv(ia)} | {_iv(ib)} "
                f"| {'yes' if ok else '**no**'} | {'yes' if shared else '**no**'} |"
            )
    head = (
        f"**{agreed} of {total} ratios agree.** Their intervals overlap on {overlapped} of "
        f"{total}.\n\n"
    )
    return head + "\n".join(lines) + "\n"


def compare(a: Document, b: Document) -> str:
    """Do two protocol runs agree, on the workloads both measured?"""
    sa = {s.workload: s for s in of(a)}
    rows = [("run A", sa[s.workload], s) for s in of(b) if s.workload in sa]
    head = (
        f"Run A: `{a.get('command', '?')}` ({a.get('started', '?')}); "
        f"run B: `{b.get('command', '?')}` ({b.get('started', '?')}).\n"
        "Two runs agree on a figure when each run's median ratio lies inside the other's "
        "interval; the weaker reading, intervals that overlap, is counted beside it.\n\n"
    )
    return head + agreement(rows)


def is_protocol(document: Document) -> bool:
    return document.get("kind") == "protocol"
