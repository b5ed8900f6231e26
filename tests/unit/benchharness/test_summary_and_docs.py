"""A protocol run's verdict table, the comparison of two runs, and the generated docs section."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from bench import docs, summary, transcribe


def _run(workload: str, scheduler: str, rnd: int, pods_s: float, cpu: float, **kw: Any) -> Any:
    return {
        "workload": workload, "scheduler": scheduler, "repetition": rnd,
        "complete": kw.get("complete", True), "throughput_mean": pods_s,
        "scheduler_cpu_s": cpu, "bound": 1000, "measured_pods": 1000,
        "scheduler_peak_rss_mb": kw.get("rss", 100.0),
        "params": {"nodes": 500, "init_pods": 500, "measured_pods": 1000},
        "api_requests": {"per_pod": kw.get("requests", 2.0)},
        "engine_phases": kw.get("phases", {}),
    }  # fmt: skip


def _doc(corral: list[float], *, full: bool = False, incomplete: int | None = None) -> Any:
    """Six pairs of workload W: upstream at 100 pods/s and 10 CPU s; Corral at ``corral``
    pods/s and 8 CPU s (0.8x per pod)."""
    runs = []
    for rnd, pods_s in enumerate(corral):
        runs.append(_run("W", "upstream", rnd, 100.0, 10.0))
        phases = {"filter": {"wall": 2.0, "cpu": 1.5, "count": 1000.0}}
        runs.append(_run("W", "corral", rnd, pods_s, 8.0, complete=rnd != incomplete,
                         requests=3.0, rss=90.0, phases=phases))  # fmt: skip
    return {"kind": "protocol", "mode": {"full": full, "lean": True, "pin": None},
            "pairs": len(corral), "runs": runs, "command": "python -m bench protocol",
            "started": "2026-11-24T01:00:00+0000"}  # fmt: skip


def test_summary_of_six_pairs() -> None:
    (s,) = summary.summarize(_doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0]))
    assert (s.pairs, s.planned) == (6, 6)
    tp = s.ratios["throughput"]
    assert (tp.median, tp.low, tp.high, tp.reaches) == pytest.approx((1.125, 1.01, 1.3, True))
    assert s.ratios["cpu_per_1000"].median == pytest.approx(0.8)
    assert s.upstream["cpu_per_1000"].median == pytest.approx(10.0)  # CPU s per 1,000 pods
    assert s.verdicts() == {"throughput": "met", "cpu_per_1000": "met", "rss": "met"}
    assert s.requests_per_pod == {"upstream": 2.0, "corral": 3.0}
    assert s.phases_ms_per_pod == {"filter": {"wall": 2.0, "cpu": 1.5}}


def test_cpu_by_thread_table() -> None:
    doc = _doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0])
    for run in doc["runs"]:
        if run["scheduler"] == "corral":
            run["engine_phases"] = {
                "thread:binding": {"cpu": 2.0},
                "thread:MainThread": {"cpu": 3.0},
                "thread:preemption": {"cpu": 0.5},
            }
    text = summary.threads_table(summary.summarize(doc))
    # The event loop first, then the known roles, then the others by name; ms per bound pod.
    assert "| workload | MainThread | binding | preemption |" in text
    assert "| W | 3.00 | 2.00 | 0.50 |" in text
    assert summary.threads_table(summary.summarize(_doc([105.0] * 6))) == ""


def test_binding_threads_labelled_apart_read_as_one_role() -> None:
    """Records before the binding pool's threads were named like a pool's (binding_N) label
    each binding thread apart (binding-N): the table sums them into one column."""
    doc = _doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0])
    for run in doc["runs"]:
        if run["scheduler"] == "corral":
            run["engine_phases"] = {
                "thread:binding-1": {"cpu": 0.5},
                "thread:binding-17": {"cpu": 0.25},
                "thread:preemption-call": {"cpu": 0.5},
            }
    text = summary.threads_table(summary.summarize(doc))
    assert "| workload | binding | preemption-call |" in text
    assert "| W | 0.75 | 0.50 |" in text


def test_an_incomplete_pair_does_not_count_and_the_table_says_so() -> None:
    doc = _doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0], incomplete=2)
    (s,) = summary.summarize(doc)
    assert (s.pairs, s.planned) == (5, 6)
    row = summary.table([s]).splitlines()[2]
    # Five pairs cannot reach 95%: the interval carries its real coverage.
    assert row.startswith("| W (500 / 500 / 1000) | 5 of 6 | 1.10 [1.01, 1.30] (94%) | met |")


def test_verdict_undecided_when_the_interval_straddles() -> None:
    (s,) = summary.summarize(_doc([95.0, 110.0, 120.0, 101.0, 130.0, 115.0]))
    assert s.verdicts()["throughput"] == "undecided"


@pytest.mark.parametrize(
    ("second", "want"),
    [
        pytest.param([104.0, 111.0, 118.0, 102.0, 128.0, 112.0],
                     "**3 of 3 ratios agree.** Their intervals overlap on 3 of 3.",
                     id="same behaviour"),
        pytest.param([135.0, 140.0, 150.0, 145.0, 160.0, 138.0],
                     "**2 of 3 ratios agree.** Their intervals overlap on 2 of 3.",
                     id="throughput moved"),
        pytest.param([121.0, 125.0, 131.0, 124.0, 140.0, 127.0],
                     "**2 of 3 ratios agree.** Their intervals overlap on 3 of 3.",
                     id="throughput moved within the intervals"),
    ],
)  # fmt: skip
def test_compare_two_protocol_runs(second: list[float], want: str) -> None:
    text = summary.compare(_doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0]), _doc(second))
    assert want in text


@pytest.mark.parametrize(
    ("code", "resumed", "shown"),
    [
        pytest.param(None, [], None, id="a run from before the code was recorded: none shown"),
        pytest.param("fccc2fa", [], "code `fccc2fa`; ", id="one commit"),
        pytest.param("fccc2fa", ["fccc2fa"], "code `fccc2fa`; ", id="resumed on the same commit"),
        pytest.param("fccc2fa", ["1a2b3c4-dirty"], "code `fccc2fa`, `1a2b3c4-dirty`; ",
                     id="resumed on other code: both shown"),
    ],
)  # fmt: skip
def test_the_header_names_the_code_measured(
    code: str | None, resumed: list[str], shown: str | None
) -> None:
    doc = _doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0])
    if code:
        doc["code"] = code
    doc["resumed"] = [{"command": "python -m bench protocol --resume", "code": c} for c in resumed]
    head = summary.markdown(doc).split("\n")[0]
    if shown is None:
        assert "code " not in head
    else:
        assert shown in head


@pytest.mark.parametrize(
    ("corral_args", "shown"),
    [
        pytest.param(None, None, id="default-engine"),
        pytest.param(["--pod-watch-encoding=protobuf"],
                     "; Corral ran with `--pod-watch-encoding=protobuf`.", id="variant"),
    ],
)  # fmt: skip
def test_head_names_corral_arguments(corral_args: list[str] | None, shown: str | None) -> None:
    doc = _doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0])
    if corral_args:
        doc["mode"]["corral_args"] = corral_args
    head = summary.markdown(doc).split("\n")[0]
    if shown is None:
        assert "Corral ran with" not in head
    else:
        assert shown in head


def test_splice_replaces_only_between_the_markers() -> None:
    text = f"intro\n{docs.BEGIN}\nold\n{docs.END}\nrest\n"
    assert docs.splice(text, "new") == f"intro\n{docs.BEGIN}\nnew\n{docs.END}\nrest\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(None, "cannot read a run: ", id="missing"),
        pytest.param("{not json", "cannot read a run: ", id="not JSON"),
        pytest.param('{"runs": []}', "is not a protocol run (python -m bench protocol)",
                     id="a `bench run` result"),
    ],
)  # fmt: skip
def test_docs_refuses_a_run_it_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    from bench.__main__ import main  # noqa: PLC0415

    run = tmp_path / "run"
    run.mkdir()
    if content is not None:
        (run / "results.json").write_text(content)
    assert main(["docs", str(run), "--doc", str(tmp_path / "doc.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err


def test_docs_refuses_a_document_without_markers(tmp_path: Path) -> None:
    with pytest.raises(docs.DocsError, match="the document has no"):
        docs.splice("no markers here\n", "x")


def test_compare_command_judges_protocol_runs_and_refuses_a_mix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json  # noqa: PLC0415

    from bench.__main__ import main  # noqa: PLC0415

    a, b, old = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "old.json"
    a.write_text(json.dumps(_doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0])))
    b.write_text(json.dumps(_doc([104.0, 111.0, 118.0, 102.0, 128.0, 112.0])))
    old.write_text(json.dumps({"runs": []}))
    assert main(["compare", str(a), str(b)]) == 0
    assert "**3 of 3 ratios agree.**" in capsys.readouterr().out
    assert main(["compare", str(a), str(old)]) == 2
    assert capsys.readouterr().err == "cannot compare a protocol run with a `bench run` run\n"


def _renamed(doc: Any, workload: str) -> Any:
    for run in doc["runs"]:
        run["workload"] = workload
    return doc


def test_a_workload_measured_at_other_sizes_is_not_compared() -> None:
    a, b = _doc([105.0] * 6), _doc([105.0] * 6)
    for run in b["runs"]:
        run["params"] = {**run["params"], "nodes": 200}
    text = summary.compare(a, b)
    assert "**0 of 0 ratios agree.**" in text
    assert (
        "| W | all | run A | sizes 500 / 500 / 1000 | sizes 200 / 500 / 1000 | not compared |"
        in text
    )


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(_doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0]), id="six pairs"),
        pytest.param(_doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0], incomplete=2),
                     id="5 of 6 pairs: 94%"),
        pytest.param(_doc([150.0, 160.0, 170.0], full=True), id="three pairs at full size"),
        pytest.param({**_doc([105.0] * 6), "code": "aaaaaaa", "notes": ["busy"],
                      "resumed": [{"command": "--resume", "code": "bbbbbbb"}]},
                     id="code, a resumed part, notes"),
        pytest.param({**_doc([105.0] * 6), "mode": {"full": False, "lean": False, "pin": None}},
                     id="full cluster, no pinning"),
    ],
)  # fmt: skip
def test_a_transcribed_run_renders_its_tables_again(doc: Any) -> None:
    heading = (
        "### 5,000 nodes (scheduler_perf's sizes)"
        if doc["mode"]["full"]
        else "#### default sizes: run 2"
    )
    shown = summary.markdown(doc)
    record = transcribe.run(f"{heading}\n\n{shown}\n**Does run 2 agree with ...**\n\nNote: x\n")
    assert record["runs"] == []
    again = summary.markdown(record)
    note = f"\nNote: {summary.TRANSCRIBED_NOTE}{transcribe.TRANSCRIBED}\n"
    assert again == shown + note
    # Read again, the note is not taken for one of the run's own.
    assert transcribe.run(f"{heading}\n\n{again}")["notes"] == record["notes"]


def test_transcribe_refuses_a_coverage_that_does_not_fit_the_pairs() -> None:
    shown = summary.markdown(_doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0], incomplete=2))
    with pytest.raises(transcribe.TranscribeError, match=r"W throughput: coverage 75% does"):
        transcribe.run("### default sizes\n\n" + shown.replace("(94%)", "(75%)", 1))


def _variant(doc: Any, *args: str) -> Any:
    doc["mode"] = {**doc["mode"], "corral_args": list(args)}
    return doc


PROTOBUF = "--pod-watch-encoding=protobuf"


def _records(*documents: Any) -> list[docs.Record]:
    """The runs as records named "run 1", "run 2", ... that started in that order."""
    return [(f"run {i}", {**d, "started": f"2026-11-{i:02d}T01:00:00+0000"})
            for i, d in enumerate(documents, start=1)]  # fmt: skip


@pytest.mark.parametrize(
    ("variants", "want"),
    [
        # Run 3 repeats run 1's default engine after a variant: judged against run 1.
        ((None, (PROTOBUF,), None), ("run 1", "**3 of 3 ratios agree.**")),
        # A variant's own earlier measurement comes first as well.
        (((PROTOBUF,), None, (PROTOBUF,)), ("run 1", "**3 of 3 ratios agree.**")),
        # No earlier run with the same arguments: the latest at all, named with its arguments.
        ((None, None, (PROTOBUF,)), ("run 2 (default Corral)", "**2 of 3 ratios agree.**")),
        ((None, (PROTOBUF,), ("--x",)), (f"run 2 (Corral with `{PROTOBUF}`)", "**2 of 3")),
    ],
    ids=["default-after-variant", "variant-after-default", "new-variant", "variant-after-other"],
)
def test_a_run_is_judged_against_the_latest_run_with_the_same_corral_arguments(
    variants: tuple[tuple[str, ...] | None, ...], want: tuple[str, str]
) -> None:
    throughputs = ([105.0, 110.0, 120.0, 101.0, 130.0, 115.0], [150.0] * 6,
                   [106.0, 111.0, 119.0, 102.0, 129.0, 114.0])  # fmt: skip
    runs = [_variant(_doc(t), *(v or ())) for t, v in zip(throughputs, variants, strict=True)]
    text = docs.history_block(_records(*runs)).split("### run 2")[0]  # newest first: run 3
    names = {line.split(" | ")[2] for line in text.splitlines() if "ratio |" in line}
    assert names == {want[0]}
    assert want[1] in text


def test_history_is_newest_first_and_compares_each_run_with_the_runs_before_it() -> None:
    a = _doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0])
    b = _doc([135.0, 140.0, 150.0, 145.0, 160.0, 138.0])  # throughput moved
    c = _doc([136.0, 141.0, 149.0, 146.0, 158.0, 139.0])  # as b
    full = _doc([150.0, 160.0, 170.0], full=True)
    text = docs.history_block(_records(a, full, b, c))
    assert re.findall(r"^#+ .*$", text, re.M) == ["### run 4", "### run 3", "### run 2",
                                                  "### run 1"]  # fmt: skip
    run4, run3, run2, run1 = re.split(r"^### run \d\n\n", text, flags=re.M)[1:]
    assert run4.startswith("Default sizes. Command: ")
    assert "**3 of 3 ratios agree.**" in run4  # c against b (against a: 2 of 3)
    assert "**2 of 3 ratios agree.**" in run3  # b against a
    assert run2.startswith("5,000 nodes (scheduler_perf's sizes). Command: ")
    assert "1.60 [1.50, 1.70] (75%)" in run2  # three pairs at full size: 75% only
    assert "agree with the runs before it" not in run2 + run1  # first of their sizes


def test_each_workload_is_compared_with_its_latest_earlier_measurement() -> None:
    # Run 2 measured W alone; run 3 measures W and V: W against run 2, V against run 1.
    v = _renamed(_doc([100.0] * 6), "V")
    run1 = {**v, "runs": _doc([105.0, 110.0, 120.0, 101.0, 130.0, 115.0])["runs"] + v["runs"]}
    run2 = _doc([135.0, 140.0, 150.0, 145.0, 160.0, 138.0])
    run3 = {**v, "runs": _doc([136.0, 141.0, 149.0, 146.0, 158.0, 139.0])["runs"] + v["runs"]}
    text = docs.history_block(_records(run1, run2, run3)).split("### run 2")[0]
    rows = {tuple(line.split(" | ")[:3]) for line in text.splitlines() if "ratio |" in line}
    assert ("| W", "throughput ratio", "run 2") in rows
    assert ("| V", "throughput ratio", "run 1") in rows
    assert "**6 of 6 ratios agree.**" in text  # against run 1, W's throughput would not


def test_the_page_shows_each_workloads_latest_default_engine_run_per_size() -> None:
    v = _renamed(_doc([90.0] * 6), "V")
    old = {**_doc([105.0] * 6), "code": "aaaaaaa"}
    newer = {**_doc([135.0, 140.0, 150.0, 145.0, 160.0, 138.0]), "code": "bbbbbbb"}
    variant = _variant(_doc([200.0] * 6), PROTOBUF)  # newest, but a variant: not shown
    full = {**_doc([150.0, 160.0, 170.0], full=True), "code": "ccccccc",
            "resumed": [{"command": "--resume", "code": "ddddddd"}]}  # fmt: skip
    records = _records(old, v, full, newer, variant)
    rows = docs.latest(records)
    assert [(r.size, r.summary.workload, r.name) for r in rows] == [
        (docs.SIZES[0], "V", "run 2"),
        (docs.SIZES[0], "W", "run 4"),
        (docs.SIZES[1], "W", "run 3"),
    ]  # fmt: skip  (names not in bench.workloads: by name)
    table = docs.latest_table(rows).splitlines()
    assert table[3] == (
        "| default | W (500 / 500 / 1000) | [run 4](benchmarks/history.md#run 4) | 2026-11-04 "
        "| `bbbbbbb` | 6 | 1.42 [1.35, 1.60] met | 0.80 [0.80, 0.80] met "
        "| 0.90 [0.90, 0.90] met |"
    )
    assert table[2].startswith("| default | V (500 / 500 / 1000) | [run 2](")
    assert "| 0.90 [0.90, 0.90] **missed** | 0.80" in table[2]  # V: 0.9x throughput
    assert "| `ccccccc`, `ddddddd` | 3 | 1.60 [1.50, 1.70] (75%) met |" in table[4]
    assert docs.tally(rows) == (
        "- **default sizes**, 2 workloads: throughput met on 1, undecided on 0, missed on 1; "
        "CPU per pod met on 2, undecided on 0, missed on 0; peak RSS met on 2, undecided on 0, "
        "missed on 0.\n"
        "- **5,000 nodes (scheduler_perf's sizes)**, 1 workloads: throughput met on 1, "
        "undecided on 0, missed on 0; CPU per pod met on 1, undecided on 0, missed on 0; peak "
        "RSS met on 1, undecided on 0, missed on 0.\n"
    )


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        pytest.param("2026-11-29-protocol-full-31", "full-31", id="a protocol directory"),
        pytest.param("2026-11-24-default-1", "default-1", id="a transcribed record"),
        pytest.param("run 4", "run 4", id="no date"),
    ],
)
def test_the_page_links_a_run_by_its_short_name(name: str, shown: str) -> None:
    assert docs.short(name) == shown


def test_docs_keeps_every_run_as_a_record_and_builds_the_pages_from_the_records(
    tmp_path: Path,
) -> None:
    import json  # noqa: PLC0415

    page, history = tmp_path / "page.md", tmp_path / "history.md"
    for path in (page, history):
        path.write_text(f"intro\n{docs.BEGIN}\n{docs.END}\n")
    records = tmp_path / "runs"
    later, earlier = tmp_path / "protocol-b", tmp_path / "protocol-a"
    for path, pods_s, started in ((later, 135.0, "2026-11-25T01:00:00+0000"),
                                  (earlier, 105.0, "2026-11-24T01:00:00+0000")):  # fmt: skip
        path.mkdir()
        (path / "results.json").write_text(json.dumps({**_doc([pods_s] * 6), "started": started}))
    docs.write(
        [later, earlier],
        records,
        page=page,
        history=history,
        plots=None,
        curve=tmp_path / "scaling",
    )
    assert sorted(p.name for p in records.iterdir()) == [
        "2026-11-24-protocol-a.json", "2026-11-25-protocol-b.json"]  # fmt: skip
    first = page.read_text(), history.read_text()
    assert "[b](benchmarks/history.md#2026-11-25-protocol-b)" in first[0]
    assert first[1].index("### 2026-11-25-protocol-b") < first[1].index("### 2026-11-24-protocol-a")
    # The results directories can go: the pages are made again from the records alone.
    for path in (later, earlier):
        (path / "results.json").unlink()
    docs.write([], records, page=page, history=history, plots=None, curve=tmp_path / "scaling")
    assert (page.read_text(), history.read_text()) == first


def test_the_committed_pages_are_what_the_records_make() -> None:
    """docs/benchmarks.md and docs/benchmarks/history.md, byte for byte, from the records in
    docs/benchmarks/runs/ (after a new record: `make bench-docs`)."""
    root = Path(__file__).resolve().parents[3]
    page, history = root / docs.PAGE, root / docs.HISTORY
    curve = docs.recorded(root / docs.SCALING / "runs")
    made = docs.generated(docs.recorded(root / docs.RECORDS), page, history, curve)
    assert made[page] == page.read_text()
    assert made[history] == history.read_text()


def test_a_workload_only_corral_runs_shows_its_own_figures_and_no_verdict() -> None:
    """A solo workload (bench.workloads' corral_only, e.g. Coscheduling): the page's cells give
    Corral's medians, and the tally counts only the workloads compared with upstream."""
    paired = _doc([120.0] * 6)
    alone = _renamed(_doc([80.0, 90.0, 85.0]), "S")
    alone = {**alone, "runs": [r for r in alone["runs"] if r["scheduler"] == "corral"]}
    rows = docs.latest(_records(paired, alone))
    (solo,) = [r for r in rows if r.summary.workload == "S"]
    (line,) = [x for x in docs.latest_table([solo]).splitlines() if x.startswith("| default")]
    assert line.endswith(
        "| Corral only: 85.0 pods/s | Corral only: 8.00 CPU s / 1,000 pods | Corral only: 90 MB |"
    )
    assert docs.tally(rows).startswith("- **default sizes**, 1 workloads: throughput met on 1,")
