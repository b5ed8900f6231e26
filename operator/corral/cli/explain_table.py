"""The ``--explain`` table: an :class:`~corral.scheduler.framework.explanation.Explanation` as
text a person reads when a pod stays Pending.

Layout (indented under the pod's line): the PreFilter line (plugins that skipped, failed or
narrowed the nodes), one row per node (feasible ones best total first, then those rejected, in the
order the cycle took them) with what rejected it, or with ``every``, one column per Filter plugin
and extender, and one column per Score plugin with its weighted score (``every``: raw and
normalized too) and the total; then PostFilter with the preemption candidates and the choice, and
Reserve and Permit when they did not simply pass. Only what the cycle evaluated is shown: a
plugin that skipped reads ``skip``, a node the cycle did not reach ``not evaluated``.
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.framework import explanation as x

OK: Final = "ok"
INDENT: Final = "    "
NOT_EVALUATED: Final = "not evaluated (enough feasible nodes were found first)"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _column_name(column: x.FilterColumn | x.ScoreColumn) -> str:
    return f"extender {column.plugin}" if column.source == x.EXTENDER else column.plugin


def _pre_filter(e: x.Explanation) -> list[str]:
    skipped = [r.plugin for r in e.pre_filter if r.code == x.SKIP]
    lines = []
    if skipped:
        lines.append("PreFilter: skip " + ", ".join(skipped))
    for r in e.pre_filter:
        if r.code not in (x.SUCCESS, x.SKIP):
            lines.append(f"PreFilter {r.plugin}: {r.code}: {r.message}")
        elif r.node_names is not None:
            lines.append(f"PreFilter {r.plugin}: only node(s) {', '.join(r.node_names) or '-'}")
    return lines


def _order(e: x.Explanation) -> list[str]:
    feasible = set(e.feasible_nodes)
    best = sorted(feasible, key=lambda n: (-e.totals.get(n, 0), e.nodes.index(n) if n in e.nodes
                                           else 0))  # fmt: skip
    return best + [n for n in e.nodes if n not in feasible]


def _verdict(e: x.Explanation, node: str) -> str:
    if node in e.feasible_nodes:
        return OK
    failures = e.failures(node)
    if failures:
        return "; ".join(f"{_column_name(c)}: {v.message or v.code}" for c, v in failures)
    if node not in e.processed_nodes:
        return NOT_EVALUATED
    return "-"


def _filter_cell(column: x.FilterColumn, node: str) -> str:
    if column.skipped:
        return "skip"
    verdict = column.nodes.get(node)
    if verdict is None:
        return "-"
    return OK if verdict.code == x.SUCCESS and not verdict.message else (verdict.message or
                                                                          verdict.code)  # fmt: skip


def _score_cell(column: x.ScoreColumn, node: str, every: bool) -> str:
    score = column.nodes.get(node)
    if score is None:
        return "-"
    if not every:
        return str(score.weighted)
    return f"{score.weighted} ({score.raw}>{score.normalized})"


def _nodes(e: x.Explanation, every: bool) -> list[str]:
    scored = [c for c in e.score if not c.skipped]
    filters = [c for c in e.filter if every or c.source != x.NOMINATED]
    header = ["NODE"]
    header += [_column_name(c) for c in filters] if every else ["FILTER"]
    header += [f"{_column_name(c)}(x{c.weight})" for c in scored]
    if scored:
        header.append("TOTAL")
    rows = [header]
    for node in _order(e):
        row = [node]
        if every:
            row += [_filter_cell(c, node) for c in filters]
        else:
            row.append(_verdict(e, node))
        row += [_score_cell(c, node, every) for c in scored]
        if scored:
            row.append(str(e.totals[node]) if node in e.totals else "-")
        rows.append(row)
    return _table(rows)


def _after(e: x.Explanation, every: bool) -> list[str]:
    lines = []
    skipped = [c.plugin for c in e.score if c.skipped]
    if skipped:
        lines.append("PreScore: skip " + ", ".join(skipped))
    for r in e.pre_score:
        if r.code not in (x.SUCCESS, x.SKIP):
            lines.append(f"PreScore {r.plugin}: {r.code}: {r.message}")
    if e.feasible_nodes and len(e.feasible_nodes) == 1 and not e.totals:
        lines.append("Score: not run (one feasible node)")
    for r in e.post_filter:
        if not every and r.code == "Unschedulable" and not r.message and not r.nominated_node_name:
            continue  # it had nothing to offer and said nothing
        nominated = f", nominates {r.nominated_node_name}" if r.nominated_node_name else ""
        lines.append(f"PostFilter {r.plugin}: {r.code}{nominated}"
                     + (f": {r.message}" if r.message else ""))  # fmt: skip
    if e.preemption is not None:
        lines += _preemption(e.preemption)
    for point, results in (("Reserve", e.reserve), ("Permit", e.permit)):
        failed = [r for r in results if r.code != x.SUCCESS]
        if failed:
            lines += [f"{point} {r.plugin}: {r.code}" + (f": {r.message}" if r.message else "")
                      + (f" (up to {r.timeout_seconds:g}s)" if r.timeout_seconds else "")
                      for r in failed]  # fmt: skip
        elif results:
            lines.append(f"{point}: ok ({', '.join(r.plugin for r in results)})")
    return lines


def _preemption(p: x.Preemption) -> list[str]:
    lines = []
    for c in p.candidates:
        victims = ", ".join(f"{v.pod} (priority {v.priority})" for v in c.victims) or "none"
        pdb = f"; {c.pdb_violations} PodDisruptionBudget violation(s)" if c.pdb_violations else ""
        mark = "*" if c.node == p.chosen else " "
        lines.append(f"  {mark} candidate {c.node}: evict {victims}{pdb}")
    if p.chosen:
        lines.append(f"  chosen {p.chosen}: {p.why}")
    elif p.why:
        lines.append(f"  no candidate: {p.why}")
    return lines


def explain_table(e: x.Explanation, *, every: bool = False) -> str:
    """The table; ``every``: each plugin's verdict on each node, passing ones too."""
    lines = _pre_filter(e)
    if e.nodes:
        lines += _nodes(e, every)
    lines += _after(e, every)
    return "\n".join(INDENT + line for line in lines) + "\n"
