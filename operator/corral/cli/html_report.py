"""``--html FILE``: one self-contained page for ``simulate`` and ``explain``.

Contract: the page is a single HTML document with its style inline and nothing else: no script,
no font, image, stylesheet or link to fetch (a review attachment opens the same anywhere, even
offline). Every text taken from the cluster or the input is escaped. Two kinds of section,
each from plain data only (:mod:`corral.scheduler.framework.explanation`, :class:`NodeUsage`):

- a node x plugin table per explained cycle: each Filter plugin's verdict (``ok``, its reason,
  ``skip``, or blank when the cycle did not run it there), each Score plugin's weighted score,
  the total, the chosen node marked;
- a capacity bar per node and resource: what was in use before, what the simulation added, of
  the allocatable.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from corral.cli.problems import UsageError
from corral.cli.shadow_table import alone, rate
from corral.scheduler.engine.shadow import tally as t
from corral.scheduler.framework import explanation as x
from corral.scheduler.framework.snapshot import Snapshot

STYLE: Final = """
body{font-family:sans-serif;margin:24px;color:#1a1a1a;background:#fff}
h1{font-size:22px;margin:0 0 12px}h2{font-size:18px;margin:28px 0 8px}
h3{font-size:15px;margin:18px 0 6px}
p.note{color:#555;margin:2px 0;font-size:13px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #bbb;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#e8e8e8}
td.ok{background:#c8f0c8}td.no{background:#f6c4c4}td.skip{background:#eee;color:#777}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.plugin{display:flex;align-items:center;margin:2px 0;font-size:13px}
.plugin .name{width:260px}.plugin .fill{height:14px;background:#c0392b;margin-right:8px}
tr.chosen td:first-child{font-weight:bold}tr.chosen td:first-child::after{content:" \\2190 chosen"}
.bar{display:flex;width:360px;height:16px;background:#eee;border:1px solid #999}
.used{background:#7a8ca8}.added{background:#3c9a3c}.over{background:#c0392b}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;border:1px solid #999}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def page(title: str, body: Iterable[str], notes: Sequence[str] = ()) -> str:
    notes_html = "".join(f'<p class="note">{_e(n)}</p>' for n in notes)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_e(title)}</h1>{notes_html}{''.join(body)}</body></html>\n"
    )


def write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--html: cannot write {path}: {exc.strerror or exc}") from None


# --- a cycle: node x plugin -------------------------------------------------------------------


def _order(e: x.Explanation) -> list[str]:
    feasible = set(e.feasible_nodes)
    best = sorted(feasible, key=lambda n: (-e.totals.get(n, 0), n))
    return best + [n for n in e.nodes if n not in feasible]


def _filter_cell(column: x.FilterColumn, node: str) -> str:
    if column.skipped:
        return '<td class="skip">skip</td>'
    verdict = column.nodes.get(node)
    if verdict is None:
        return "<td></td>"
    if verdict.code == x.SUCCESS:
        return f'<td class="ok">{_e(verdict.message or "ok")}</td>'
    return f'<td class="no">{_e(verdict.message or verdict.code)}</td>'


def _score_cell(column: x.ScoreColumn, node: str) -> str:
    score = column.nodes.get(node)
    return '<td class="num"></td>' if score is None else f'<td class="num">{score.weighted}</td>'


def cycle_section(e: x.Explanation, heading: str) -> str:
    """The node x plugin table of one explained cycle."""
    filters = [c for c in e.filter if c.source != x.NOMINATED or c.nodes]
    scored = [c for c in e.score if not c.skipped]
    head = "".join(f"<th>{_e(c.plugin)}</th>" for c in filters)
    head += "".join(f"<th>{_e(c.plugin)} &times;{c.weight}</th>" for c in scored)
    head += "<th>total</th>" if scored else ""
    rows = []
    for node in _order(e):
        chosen = ' class="chosen"' if node == e.selected_node else ""
        cells = "".join(_filter_cell(c, node) for c in filters)
        cells += "".join(_score_cell(c, node) for c in scored)
        if scored:
            total = e.totals.get(node)
            cells += f'<td class="num">{"" if total is None else total}</td>'
        rows.append(f"<tr{chosen}><td>{_e(node)}</td>{cells}</tr>")
    outcome = e.outcome
    said = ""
    if outcome is not None:
        where = f" on {outcome.node}" if outcome.node else ""
        said = f'<p class="note">{_e(outcome.code + where)}{": " if outcome.message else ""}'
        said += f"{_e(outcome.message)}</p>"
    return f"<h3>{_e(heading)}</h3>{said}<table><tr><th>node</th>{head}</tr>{''.join(rows)}</table>"


# --- capacity bars ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    resource: str
    used: int  # before the simulation (running pods)
    added: int  # by the pods the simulation placed
    allocatable: int
    unit: str = ""  # how to print the numbers: "m" (cpu millis), "bytes", ""

    def show(self, value: int) -> str:
        if self.unit == "m":
            return f"{value / 1000:g}"
        if self.unit == "bytes":
            return f"{value / 2**30:.2f}Gi"
        return str(value)


@dataclass
class NodeUsage:
    node: str
    resources: list[Usage] = field(default_factory=list)
    note: str = ""  # e.g. "13 placed"


def _bar(u: Usage) -> str:
    whole = max(u.allocatable, 1)
    used = min(u.used, whole)
    added = min(u.added, whole - used)
    over = u.used + u.added > u.allocatable
    parts = [
        f'<div class="used" style="width:{100 * used / whole:.2f}%"></div>',
        f'<div class="added" style="width:{100 * added / whole:.2f}%"></div>',
    ]
    if over:
        parts.append('<div class="over" style="width:2%"></div>')
    return f'<div class="bar">{"".join(parts)}</div>'


def capacity_section(nodes: Sequence[NodeUsage], heading: str = "Capacity per node") -> str:
    legend = (
        '<p class="legend note"><span class="used"></span>in use before'
        '<span class="added"></span>placed by the simulation</p>'
    )
    rows = []
    for n in nodes:
        first = True
        for u in n.resources:
            name = f'<td rowspan="{len(n.resources)}">{_e(n.node)}<br>{_e(n.note)}</td>'
            rows.append(
                f"<tr>{name if first else ''}<td>{_e(u.resource)}</td><td>{_bar(u)}</td>"
                f'<td class="num">{_e(u.show(u.used + u.added))} / {_e(u.show(u.allocatable))}'
                "</td></tr>"
            )
            first = False
    return (
        f"<h2>{_e(heading)}</h2>{legend}<table><tr><th>node</th><th>resource</th>"
        f"<th>use</th><th>requested / allocatable</th></tr>{''.join(rows)}</table>"
    )


_UNITS: Final = (("cpu", "m"), ("memory", "bytes"), ("pods", ""))


def usage(
    before: Snapshot, after: Snapshot, notes: Mapping[str, str] | None = None
) -> list[NodeUsage]:
    """cpu, memory and pods of every node: requested before, added since, of allocatable."""
    old = {name: slot for slot, name in enumerate(before.names) if name}
    out = []
    for slot, name in enumerate(after.names):
        if not name:
            continue
        node = NodeUsage(name, note=(notes or {}).get(name, ""))
        for resource, unit in _UNITS:
            row = after.resource_row(resource)
            if row is None:
                continue
            now = int(after.requested[row, slot])
            was_slot = old.get(name)
            row_before = before.resource_row(resource)
            was = (
                int(before.requested[row_before, was_slot])
                if was_slot is not None and row_before is not None
                else 0
            )
            allocatable = int(after.allocatable[row, slot])
            node.resources.append(Usage(resource, was, max(now - was, 0), allocatable, unit))
        out.append(node)
    return sorted(out, key=lambda n: n.node)


# --- a shadow ---------------------------------------------------------------------------------


def _counts_row(label: str, c: t.Counts) -> str:
    cells = [
        c.observed,
        c.agreed,
        c.ties,
        c.disagreed,
        c.live_unschedulable,
        c.shadow_unschedulable,
    ]
    return (
        f"<tr><td>{_e(label)}</td>"
        + "".join(f'<td class="num">{v}</td>' for v in cells)
        + f'<td class="num">{_e(rate(c))}</td></tr>'
    )


def shadow_page(profile: str, status: t.ShadowStatus) -> str:
    counts = (
        "<h2>Decisions</h2><table><tr><th></th><th>decisions</th><th>agreed</th>"
        "<th>ties</th><th>disagreed</th><th>live unschedulable</th>"
        "<th>shadow unschedulable</th><th>agree</th></tr>"
        + _counts_row("all", status.counts)
        + _counts_row("one at a time", alone(status))
        + _counts_row("under a burst", status.burst)
        + "</table>"
    )
    total = sum(p.decisions for p in status.by_plugin)
    bars = []
    for p in status.by_plugin:
        width = 300 * p.decisions / total if total else 0
        bars.append(
            f'<div class="plugin"><span class="name">{_e(p.plugin)}</span>'
            f'<span class="fill" style="width:{width:.1f}px"></span>'
            f"{p.decisions} ({100 * p.decisions / total:.1f}%)</div>"
        )
    breakdown = "<h2>Disagreements by deciding plugin</h2>" + (
        "".join(bars) or "<p>no disagreement</p>"
    )
    recent = []
    for d in status.last_disagreements:
        head = (
            f"{d.pod}: {d.outcome}: live {d.live_node or 'unschedulable'}, shadow "
            f"{d.shadow_node or 'unschedulable'}; deciding plugin "
            f"{d.deciding_plugin or '-'}"
        )
        rows = "".join(
            f'<tr><td>{_e(s.plugin)}</td><td class="num">{s.weight}</td>'
            f'<td class="num">{"" if s.shadow is None else s.shadow}</td>'
            f'<td class="num">{"" if s.live is None else s.live}</td></tr>'
            for s in d.scores
        )
        rejected = "".join(
            f'<p class="note">rejected by {_e(r.plugin)}: {_e(r.message)}</p>'
            for r in d.rejected_by
        )
        recent.append(
            f"<h3>{_e(head)}</h3>{rejected}<table><tr><th>plugin</th><th>weight</th>"
            f"<th>{_e(d.shadow_node or '-')} (shadow)</th>"
            f"<th>{_e(d.live_node or '-')} (live)</th></tr>{rows}</table>"
        )
    newest = "<h2>Newest disagreements</h2>" + "".join(recent) if recent else ""
    notes = [
        f"shadows {status.scheduler_name} since {status.since}; updated "
        f"{status.last_update or '-'}; {status.summary}"
    ]
    return page(f"Shadow profile {profile}", [counts, breakdown, newest], notes)
