"""``corral shadow report`` as text: a shadow's counts, the breakdown by deciding plugin, and
the evidence of its newest disagreements (each plugin's scores on both nodes).

Reads only :mod:`corral.scheduler.engine.shadow.tally`'s data.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Final

from corral.scheduler.engine.shadow import compare as c
from corral.scheduler.engine.shadow import tally as t

INDENT: Final = "    "


def table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]


def rate(counts: t.Counts) -> str:
    agreement = counts.agreement
    return "-" if agreement is None else f"{100 * agreement:.1f}%"


def counts_line(counts: t.Counts) -> str:
    return (
        f"{counts.observed} decisions: {counts.agreed} agreed, {counts.ties} ties, "
        f"{counts.disagreed} disagreed, {counts.live_unschedulable} live unschedulable, "
        f"{counts.shadow_unschedulable} shadow unschedulable: {rate(counts)} agree"
    )


def alone(status: t.ShadowStatus) -> t.Counts:
    """The decisions made with no other pod in flight."""
    whole, burst = status.counts, status.burst
    return t.Counts(*(getattr(whole, f) - getattr(burst, f) for f in vars(whole)))


def losses(status: t.ShadowStatus) -> dict[str, list[int]]:
    """Per plugin, the points the live node lost on it in each kept disagreement."""
    out: dict[str, list[int]] = defaultdict(list)
    for d in status.last_disagreements:
        for loss in d.lost_on:
            out[loss.plugin].append(loss.by)
    return out


def by_plugin(status: t.ShadowStatus) -> list[str]:
    total = sum(p.decisions for p in status.by_plugin)
    if not total:
        return ["no disagreement"]
    lost = losses(status)
    rows = [["PLUGIN", "DECISIONS", "SHARE", "POINTS LOST (KEPT DISAGREEMENTS)"]]
    for p in status.by_plugin:
        points = lost.get(p.plugin, [])
        shown = f"{sum(points) / len(points):.0f} on average over {len(points)}" if points else "-"
        rows.append([p.plugin, str(p.decisions), f"{100 * p.decisions / total:.1f}%", shown])
    return table(rows)


def _node(name: str | None, total: int | None, who: str) -> str:
    if name is None:
        return f"{who}: unschedulable"
    return f"{who} {name}" + (f" (total {total})" if total is not None else "")


def disagreement(d: c.Disagreement) -> list[str]:
    head = f"{d.pod}  {d.outcome}  {_node(d.live_node, d.live_total, 'live')}, " + _node(
        d.shadow_node, d.shadow_total, "shadow"
    )
    if d.rejected_by:
        r = d.rejected_by[0]
        head += f": the shadow rejects {d.live_node}: {r.plugin or '-'}: {r.message}"
    elif d.lost_on:
        head += ": lost on " + ", ".join(f"{loss.plugin} by {loss.by}" for loss in d.lost_on)
    if d.message:
        head += f" ({d.message})"
    if d.burst:
        head += "  [burst]"
    lines = [head]
    scored = [s for s in d.scores if s.shadow is not None or s.live is not None]
    if scored:
        rows = [
            ["PLUGIN", "WEIGHT", f"{d.shadow_node or '-'} (shadow)", f"{d.live_node or '-'} (live)"]
        ]
        rows += [[s.plugin, str(s.weight), _score(s.shadow), _score(s.live)] for s in scored]
        lines += [INDENT + line for line in table(rows)]
    return lines


def _score(value: int | None) -> str:
    return "-" if value is None else str(value)


def report(profile: str, status: t.ShadowStatus) -> str:
    lines = [
        f"SchedulerProfile {profile} shadows {status.scheduler_name} since {status.since} "
        f"(updated {status.last_update or '-'})",
        counts_line(status.counts),
        f"{INDENT}one at a time: {counts_line(alone(status))}",
        f"{INDENT}under a burst: {counts_line(status.burst)}",
        "",
        "BY PLUGIN (what decided each decision that was not an agreement)",
        *by_plugin(status),
    ]
    if status.last_disagreements:
        lines += ["", f"LAST {len(status.last_disagreements)} DISAGREEMENTS (newest last)"]
        for d in status.last_disagreements:
            lines += disagreement(d)
    return "\n".join(lines) + "\n"
