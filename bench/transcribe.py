"""``python -m bench.transcribe DOC RECORDS``: protocol runs read back from the tables that
``bench docs`` generated, for runs whose results directories are gone.

The first protocol runs (2026-11-24) lived only in ``bench/results/`` on a machine that did not
outlive its session; their figures survived in docs/benchmarks.md (in the format of `git show
651f5af:docs/benchmarks.md`, which this reads). This reads each run's header,
verdict table, phase table and notes from the generated section and writes one record per run
(``bench docs``'s format, with ``runs`` empty and the summaries in ``summary``), so later runs
can be compared with them. What a table does not show is not invented: the absolute figures
keep their medians only, every figure is rounded as printed, and a record says it was
transcribed. ``summary.markdown`` of a record renders the same tables again (tested).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any, Final

from bench import docs, summary
from bench.intervals import coverage, order_statistic_rank

Document = dict[str, Any]

TRANSCRIBED: Final = (
    "transcribed from the tables `bench docs` generated for it (its per-pair results were lost "
    "with the machine that ran it): figures rounded as shown, absolute figures medians only"
)
_HEADING = re.compile(r"^#{3,4} (?P<size>default sizes|5,000 nodes \(scheduler_perf's sizes\))"
                      r"(?:: run \d+)?$", re.M)  # fmt: skip
_HEADER = re.compile(
    r"^Command: `(?P<command>.*?)`; (?:code (?P<code>(?:`\w+`(?:, )?)+); )?(?P<started>\S+) to "
    r"(?P<finished>\S+); control plane (?P<plane>lean|full)\b.*?; pinning (?P<pin>.*); "
    r"(?P<pairs>\d+|\?) pairs planned\.$",
    re.M,
)
_INTERVAL = re.compile(r"^(?P<m>[\d.]+) \[(?P<lo>[\d.]+), (?P<hi>[\d.]+)\](?: \((?P<c>\d+)%\))?$")
_WORKLOAD = re.compile(r"^(?P<name>\S+) \((?P<n>\d+) / (?P<i>\d+) / (?P<p>\d+)\)$")
_PHASE = re.compile(r"^(?P<wall>[\d.]+) \((?P<cpu>[\d.]+)\)$")


class TranscribeError(ValueError):
    """A generated section this reader does not understand; the message says where."""


def _rows(block: str, first_cell: str) -> list[list[str]]:
    """The body rows of the markdown table whose header starts with ``first_cell``."""
    lines = block.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f"| {first_cell}"):
            body = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                body.append([cell.strip() for cell in row.strip().strip("|").split("|")])
            return body
    return []


def _interval(cell: str, n: int, where: str) -> dict[str, float | int] | None:
    if cell == "-":
        return None
    m = _INTERVAL.match(cell)
    if m is None:
        raise TranscribeError(f"{where}: not an interval: {cell!r}")
    got = coverage(n, order_statistic_rank(n))
    if m["c"] is not None and round(got * 100) != int(m["c"]):
        raise TranscribeError(f"{where}: coverage {m['c']}% does not fit {n} pairs")
    return {"median": float(m["m"]), "low": float(m["lo"]), "high": float(m["hi"]),
            "coverage": got, "n": n}  # fmt: skip


def _medians(cell: str) -> tuple[float, float] | None:
    if cell == "-":
        return None
    up, corral = (float(v) for v in cell.split(" / "))
    return up, corral


def _summary(row: list[str], phases: dict[str, dict[str, dict[str, float]]]) -> dict[str, Any]:
    w = _WORKLOAD.match(row[0])
    if w is None or len(row) != 12:
        raise TranscribeError(f"not a verdict-table row: {row!r}")
    counted, _, planned = row[1].partition(" of ")
    n = int(counted)
    ratios, upstream, corral = {}, {}, {}
    for figure, cell, absolute in zip(summary.FIGURES, row[2:7:2], row[8:11], strict=True):
        if (ratio := _interval(cell, n, f"{w['name']} {figure}")) is not None:
            ratios[figure] = ratio
        if (medians := _medians(absolute)) is not None:
            upstream[figure], corral[figure] = {"median": medians[0]}, {"median": medians[1]}
    requests = [None if v == "-" else float(v) for v in row[11].split(" / ")]
    return {
        "workload": w["name"],
        "params": {"nodes": int(w["n"]), "init_pods": int(w["i"]), "measured_pods": int(w["p"])},
        "pairs": n, "planned": int(planned or counted), "ratios": ratios,
        "upstream": upstream, "corral": corral,
        "requests_per_pod": {"upstream": requests[0], "corral": requests[1]},
        "phases_ms_per_pod": phases.get(w["name"], {}),
    }  # fmt: skip


def _phases(block: str) -> dict[str, dict[str, dict[str, float]]]:
    # The verdict table's header starts "| workload (nodes"; the phase table's "| workload |".
    lines = [line for line in block.splitlines() if line.startswith("| workload | ")]
    if not lines:
        return {}
    names = [c.strip() for c in lines[0].strip().strip("|").split("|")][1:]
    keys = {p.removeprefix("span:"): p for p in summary.PHASE_ORDER}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for row in _rows(block, "workload | "):
        phases = {}
        for name, cell in zip(names, row[1:], strict=True):
            if (m := _PHASE.match(cell)) is not None:
                phases[keys[name]] = {"wall": float(m["wall"]), "cpu": float(m["cpu"])}
        out[row[0]] = phases
    return out


def run(block: str) -> Document:
    """One run's record from its part of the section (heading to the next heading)."""
    heading = _HEADING.search(block)
    header = _HEADER.search(block)
    if heading is None or header is None:
        raise TranscribeError(f"no run heading or Command line in: {block[:80]!r}")
    mine = block.split("\n**Does run", 1)[0]  # the comparison with the run before is not its own
    phases = _phases(mine)
    codes = re.findall(r"`(\w+)`", header["code"] or "")
    return {
        "kind": "protocol",
        "mode": {"full": heading["size"].startswith("5,000"), "lean": header["plane"] == "lean",
                 "pin": None if header["pin"] == "off" else ast.literal_eval(header["pin"])},
        "pairs": int(header["pairs"]) if header["pairs"] != "?" else "?",
        "command": header["command"], "started": header["started"],
        "finished": header["finished"],
        "code": codes[0] if codes else None,
        "resumed": [{"code": c} for c in codes[1:]],
        "notes": [n for n in re.findall(r"^Note: (.*)$", mine, re.M)
                  if not n.startswith(summary.TRANSCRIBED_NOTE)],
        "runs": [],
        "summary": [_summary(row, phases) for row in _rows(mine, "workload (nodes")],
        "transcribed": TRANSCRIBED,
    }  # fmt: skip


def section(text: str) -> list[Document]:
    """Every run of the generated section of ``text``, in the order shown."""
    start, end = text.find(docs.BEGIN), text.find(docs.END)
    if start < 0 or end < start:
        raise TranscribeError("no generated protocol section in the document")
    body = text[start + len(docs.BEGIN) : end]
    starts = [m.start() for m in _HEADING.finditer(body)]
    return [run(body[a:b]) for a, b in zip(starts, [*starts[1:], len(body)], strict=True)]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m bench.transcribe DOC RECORDS", file=sys.stderr)
        return 2
    doc, records = Path(argv[0]), Path(argv[1])
    try:
        documents = section(doc.read_text())
    except (OSError, TranscribeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    records.mkdir(parents=True, exist_ok=True)
    numbers: dict[bool, int] = {}
    for document in documents:
        full = bool(document["mode"]["full"])
        numbers[full] = numbers.get(full, 0) + 1
        name = f"{document['started'][:10]}-{'full' if full else 'default'}-{numbers[full]}"
        (records / f"{name}.json").write_text(json.dumps(document, indent=1) + "\n")
        print(f"{records / name}.json: {len(document['summary'])} workloads")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
