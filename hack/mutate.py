#!/usr/bin/env python3
"""Run issue 40's mutation table (corral_dev.mutations) on the real local control plane:
each row's break applied to a scratch copy of this checkout, the row's e2e ids run against it,
the break undone. A row is killed when every one of its ids fails, survived when none does.

    make mutate [MUTATE_ARGS="--only cos-sort-by-pod quota-max-message --baseline"]
    hack/mutate.py [--only ID ...] [--baseline] [--timeout S] [--cluster-dir DIR] [--json F]

One control plane serves every row, one row at a time (``hack/dev-cluster up
--with-kube-scheduler``, reused by the tests through CORRAL_TEST_CLUSTER_DIR; given with
--cluster-dir, it is left running). Never two runs on one cluster: the tests install and
delete the scheduler-plugins CRDs, and break each other's. The
engines the tests start import Corral from the scratch copy (PYTHONPATH, checked before the
first row). ``--baseline`` first runs every selected id unbroken: a row whose ids fail
unbroken proves nothing and is reported as such. Rows whose ids are not in the checkout yet
(``pending``) are skipped. Exit status 1 when a row survived, partly survived or could not be
judged; the table goes to stdout as Markdown, progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "hack"))

from corral_dev.mutations import MUTATIONS, Mutation, missing_tests  # noqa: E402


@dataclass
class Result:
    row: str
    tests: tuple[str, ...]
    verdict: str  # killed | survived | partly survived | pending | error | baseline failed
    failed: int
    seconds: float
    detail: str = ""
    outcomes: dict[str, str] = field(default_factory=dict)


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def copy_checkout(into: Path) -> None:
    """The checkout's files as they are now (tracked and untracked, not ignored)."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True, capture_output=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        if name.split("/", 1)[0] == ".venv":  # a worktree's link to the shared venv
            continue
        source, target = REPO / name, into / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the work tree
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    (into / ".venv").symlink_to((REPO / ".venv").resolve())


def child_env(scratch: Path, cluster_dir: Path) -> dict[str, str]:
    paths = [scratch / "operator", scratch / "tests", scratch / "hack", scratch]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(map(str, paths)),
        "CORRAL_TEST_CLUSTER_DIR": str(cluster_dir),
    }


def check_imports(scratch: Path, env: dict[str, str]) -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import corral, corral_dev; print(corral.__file__, "
         "corral_dev.__file__)"],
        check=True, capture_output=True, text=True, env=env, cwd=scratch,
    ).stdout.split()  # fmt: skip
    wrong = [path for path in out if not Path(path).resolve().is_relative_to(scratch.resolve())]
    if wrong:
        raise SystemExit(f"the scratch copy is not what the tests import: {wrong}")


def run_tests(
    scratch: Path, env: dict[str, str], tests: tuple[str, ...], timeout: float, tag: str
) -> tuple[int | None, dict[str, str], float, str]:
    """(pytest's exit status or None on a timeout, node id -> outcome, seconds, log tail)."""
    report = scratch / f".mutate-{tag}.xml"
    report.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
               f"--timeout={timeout:.0f}", f"--junitxml={report}", *tests]  # fmt: skip
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, check=False, cwd=scratch, env=env, capture_output=True, text=True,
            timeout=timeout * len(tests) + 180,
        )  # fmt: skip
        status: int | None = done.returncode
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
    except subprocess.TimeoutExpired as exc:
        status, tail = None, str(exc)
    seconds = time.monotonic() - started
    outcomes: dict[str, str] = {}
    if report.exists():
        for case in ET.parse(report).iter("testcase"):
            name = case.get("name", "")
            for test in tests:
                if test.split("::")[-1] == name:
                    # A teardown error after a failure is a second testcase of the same name.
                    seen, outcome = outcomes.get(test, ""), _outcome(case)
                    outcomes[test] = seen if seen.startswith("failed") else outcome
    return status, outcomes, seconds, tail


def _outcome(case: ET.Element) -> str:
    """passed, skipped, error (setup or teardown only) or "failed: <the assertion's first
    line>"."""
    by_tag = {child.tag: child for child in case}
    failure = by_tag.get("failure")
    if failure is not None:
        first = (failure.get("message") or "").strip().splitlines()
        return "failed: " + (first[0][:160] if first else "?")
    if "error" in by_tag:
        return "error"
    return "skipped" if "skipped" in by_tag else "passed"


def apply(scratch: Path, row: Mutation) -> dict[Path, str]:
    """Apply the row's edits; the files' texts before them."""
    before: dict[Path, str] = {}
    for edit in row.edits:
        path = scratch / edit.path
        text = path.read_text()
        before.setdefault(path, text)
        if text.count(edit.old) != 1:
            raise ValueError(
                f"{row.id}: {edit.path}: the old text occurs {text.count(edit.old)} times"
            )
        path.write_text(text.replace(edit.old, edit.new))
    return before


def restore(before: dict[Path, str]) -> None:
    for path, text in before.items():
        path.write_text(text)
        # The engines' processes would otherwise run a stale bytecode cache of the same mtime.
        shutil.rmtree(path.parent / "__pycache__", ignore_errors=True)


def judge(row: Mutation, status: int | None, outcomes: dict[str, str]) -> tuple[str, int]:
    failed = sum(outcomes.get(t, "").startswith("failed") for t in row.tests)
    if status is None:
        return "killed (timeout)", len(row.tests)
    unjudged = {"skipped", "error"} & set(outcomes.values())
    if len(outcomes) != len(row.tests) or unjudged or status not in (0, 1):
        return "error", failed
    if failed == len(row.tests):
        return "killed", failed
    return ("partly survived" if failed else "survived"), failed


def markdown(results: list[Result]) -> str:
    """The results as a Markdown table: each row's ids and how each one ended."""
    lines = [
        "| mutation | test ids | result | how each test ended | seconds |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        ids = "<br>".join(f"`{t.split('/')[-1]}`" for t in r.tests)
        ended = "<br>".join(
            r.outcomes.get(t, "not run").removeprefix("failed: ").replace("|", "\\|")
            for t in r.tests
        )
        verdict = r.verdict
        if verdict == "partly survived":
            verdict += f" ({r.failed}/{len(r.tests)} failed)"
        lines.append(f"| `{r.row}` | {ids} | {verdict} | {ended} | {r.seconds:.0f} |")
    return "\n".join(lines)


def parse() -> tuple[argparse.Namespace, list[Mutation]]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="ID", help="these rows, in this order")
    parser.add_argument("--baseline", action="store_true", help="first run the ids unbroken")
    parser.add_argument("--timeout", type=float, default=300, help="per test (pytest-timeout)")
    parser.add_argument("--cluster-dir", type=Path, help="a running dev cluster to reuse")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--list", action="store_true", help="list the rows and exit")
    options = parser.parse_args()
    by_id = {m.id: m for m in MUTATIONS}
    unknown = sorted(set(options.only or ()) - set(by_id))
    if unknown:
        parser.error(f"no such rows: {', '.join(unknown)}")
    return options, [by_id[i] for i in options.only] if options.only else list(MUTATIONS)


def dev_cluster(*args: str, check: bool) -> None:
    command = [str(REPO / "hack" / "dev-cluster"), *args]
    subprocess.run(command, check=check, stdout=subprocess.DEVNULL)


def baseline(scratch: Path, env: dict[str, str], rows: list[Mutation], timeout: float) -> set[str]:
    """The rows' ids that do not pass unbroken."""
    wanted = tuple(dict.fromkeys(t for m in rows for t in m.tests))
    log(f"baseline: {len(wanted)} test(s) unbroken")
    _, outcomes, seconds, tail = run_tests(scratch, env, wanted, timeout, "baseline")
    failing = {t for t in wanted if outcomes.get(t) != "passed"}
    log(f"baseline: {len(wanted) - len(failing)} passed, {len(failing)} not, {seconds:.0f} s")
    if failing:
        log(tail)
    return failing


def run_row(scratch: Path, env: dict[str, str], row: Mutation, timeout: float) -> Result:
    before = apply(scratch, row)
    try:
        status, outcomes, seconds, tail = run_tests(scratch, env, row.tests, timeout, row.id)
    finally:
        restore(before)
    verdict, failed = judge(row, status, outcomes)
    detail = "" if verdict == "killed" else tail
    return Result(row.id, row.tests, verdict, failed, seconds, detail, outcomes)


def run_all(
    options: argparse.Namespace, rows: list[Mutation], scratch: Path, cluster: Path
) -> list[Result]:
    env = child_env(scratch, cluster)
    check_imports(scratch, env)
    runnable = [m for m in rows if not missing_tests(scratch, m)]
    failing = baseline(scratch, env, runnable, options.timeout) if options.baseline else set()
    results: list[Result] = []
    for n, row in enumerate(rows, 1):
        head = f"[{n}/{len(rows)}] {row.id}"
        if row not in runnable:
            log(f"{head}: pending ({row.pending or 'its tests are not in this checkout'})")
            results.append(Result(row.id, row.tests, "pending", 0, 0.0, row.pending))
        elif failing & set(row.tests):
            log(f"{head}: its tests fail unbroken; not run")
            results.append(Result(row.id, row.tests, "baseline failed", 0, 0.0))
        else:
            log(f"{head}: {row.what}; running {len(row.tests)} test(s)")
            result = run_row(scratch, env, row, options.timeout)
            log(f"{head}: {result.verdict} ({result.failed}/{len(row.tests)} failed) "
                f"in {result.seconds:.0f} s")  # fmt: skip
            if result.detail:
                log(result.detail)
            results.append(result)
    return results


def main() -> int:
    options, rows = parse()
    if options.list:
        for m in rows:
            print(f"{m.id}\t{m.mode}\t{len(m.tests)} test(s){'  (pending)' if m.pending else ''}")
        return 0
    with tempfile.TemporaryDirectory(prefix="corral-mutate-") as tmp:
        scratch = Path(tmp) / "tree"
        copy_checkout(scratch)
        cluster = options.cluster_dir or Path(tmp) / "cluster"
        if options.cluster_dir is None:
            log(f"starting a control plane in {cluster}")
            dev_cluster("up", "--dir", str(cluster), "--with-kube-scheduler", check=True)
        try:
            results = run_all(options, rows, scratch, cluster)
        finally:
            if options.cluster_dir is None:
                dev_cluster("down", "--dir", str(cluster), check=False)
    print(markdown(results))
    if options.json:
        options.json.write_text(json.dumps([r.__dict__ for r in results], indent=2) + "\n")
    bad = [r.row for r in results if r.verdict not in ("killed", "killed (timeout)", "pending")]
    if bad:
        log(f"not killed: {', '.join(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
