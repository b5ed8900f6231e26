"""Corral accepts exactly the KubeSchedulerConfigurations the pinned kube-scheduler accepts: the
checks, run twice over upstream's verdicts (the ``upstream`` fixture): recorded
(``tests/unit/scheduler/config/test_config_acceptance_recorded.py``, unit tier, from
:data:`RECORDED`, written by ``hack/record-upstream-config``) and live
(``tests/e2e/test_config_acceptance_upstream.py``, conformance tier, which also checks the
recording is current).

The corpus (``data/kube_scheduler_config/*.yaml``, one case per file, the file name is its id,
the first line names the upstream test it comes from) is taken from upstream's own config tests:
``scheme_test.go``, ``options_test.go``, ``validation_test.go``, ``defaults_test.go`` and the 1.37
pod-group points. Upstream's verdict is the real binary's: ``kube-scheduler --config=CASE
--write-config-to=OUT`` decodes strictly, defaults, validates and builds every profile's
framework, then writes the completed configuration and exits 0; no API server is contacted
(``--master`` points nowhere). Corral's verdict is the engine's own loader
(:func:`load_engine_config` and :func:`load_extenders`, what ``corral scheduler --config`` runs).
Every configuration the binary writes is fed to Corral too: upstream's defaulted output must load.

A differing verdict fails its case with both reasons; ``test_corpus_summary`` prints the counts.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.scheduler.config import ValidationError, dump_config, load_config, parse_duration
from corral.scheduler.engine.frameworks import load_engine_config, load_extenders

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "e2e" / "data" / "kube_scheduler_config"
RECORDED = ROOT / "tests" / "unit" / "scheduler" / "config" / "data" / "upstream"
CASES = sorted(CORPUS.glob("*.yaml"))
KUBECONFIG_PLACEHOLDER = "@KUBECONFIG@"
# The binary's one-line failure: klog's 'command failed' err="...".
_FAILED = re.compile(r'"command failed" err="(.*)"')

_KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: unused}}]
current-context: c
"""


@dataclass(frozen=True, slots=True)
class Verdict:
    accepted: bool
    reason: str = ""  # why it was refused
    written: str = ""  # upstream only: the completed configuration it wrote


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    text: str


def _case(path: Path, kubeconfig: Path) -> Case:
    return Case(path.stem, path.read_text().replace(KUBECONFIG_PLACEHOLDER, str(kubeconfig)))


def upstream_verdict(binary: Path, work: Path, case: Case) -> Verdict:
    config, out = work / f"{case.id}.yaml", work / f"{case.id}.out.yaml"
    config.write_text(case.text)
    done = subprocess.run(
        [
            str(binary),
            f"--config={config}",
            "--master=https://127.0.0.1:1",
            "--secure-port=0",  # no listener: cases run side by side with other schedulers
            f"--write-config-to={out}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode == 0 and out.exists():
        return Verdict(True, written=out.read_text())
    found = _FAILED.search(done.stderr)
    lines = done.stderr.strip().splitlines() or [f"exit {done.returncode}"]
    return Verdict(False, found.group(1) if found else lines[-1])


def corral(text: str) -> Verdict:
    try:
        load_extenders(load_engine_config(text))
    except ValidationError as exc:
        return Verdict(False, "; ".join(str(e) for e in exc.errors))
    return Verdict(True)


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kubeconfig") / "kubeconfig"
    path.write_text(_KUBECONFIG)
    return path


def _ids() -> Iterator[str]:
    return (p.stem for p in CASES)


@pytest.mark.parametrize("case_id", list(_ids()))
def test_corral_accepts_exactly_what_upstream_accepts(
    case_id: str, upstream: dict[str, Verdict], kubeconfig: Path
) -> None:
    theirs = upstream[case_id]
    ours = corral(_case(CORPUS / f"{case_id}.yaml", kubeconfig).text)
    assert ours.accepted == theirs.accepted, (
        f"upstream {'accepts' if theirs.accepted else 'refuses: ' + theirs.reason}; "
        f"Corral {'accepts' if ours.accepted else 'refuses: ' + ours.reason}"
    )


def test_every_configuration_upstream_writes_loads_in_corral(upstream: dict[str, Verdict]) -> None:
    """What the binary writes for an accepted case is fully defaulted (every plugin set, every
    default args block): Corral loads all of it."""
    written = {case: v.written for case, v in upstream.items() if v.accepted}
    assert written
    refused = {case: corral(text).reason for case, text in written.items()}
    assert {case: why for case, why in refused.items() if why} == {}


DURATIONS = ("filterTimeout", "bindingTimeout")
TOP_LEVEL = ("parallelism", "percentageOfNodesToScore", "podInitialBackoffSeconds",
             "podMaxBackoffSeconds", "enableProfiling", "enableContentionProfiling")  # fmt: skip


def _defaulted(config: dict[str, Any], instantiated: set[str]) -> dict[str, Any]:
    """What defaulting decides, in a form both sides write alike: every plugin set (name and
    weight, 0 for none), the args of the plugins upstream instantiated (its written config
    keeps no others) without their type meta, durations in seconds, and the top-level fields."""

    def plugin_set(entries: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
        return {
            kind: [(p["name"], p.get("weight") or 0) for p in entries.get(kind) or ()]
            for kind in ("enabled", "disabled")
        }

    profiles = []
    for profile in config.get("profiles") or ():
        sets = {k: plugin_set(v or {}) for k, v in (profile.get("plugins") or {}).items()}
        args = {
            pc["name"]: {
                k: parse_duration(v) if k in DURATIONS else v
                for k, v in (pc.get("args") or {}).items()
                if k not in ("apiVersion", "kind")
            }
            for pc in profile.get("pluginConfig") or ()
            if pc["name"] in instantiated
        }
        profiles.append(
            {
                "schedulerName": profile.get("schedulerName"),
                "percentageOfNodesToScore": profile.get("percentageOfNodesToScore"),
                "plugins": {k: v for k, v in sets.items() if v["enabled"] or v["disabled"]},
                "pluginConfig": args,
            }
        )
    top = {k: config.get(k) for k in TOP_LEVEL}
    return {**top, "leaderElection": config.get("leaderElection"), "profiles": profiles}


def test_corral_defaults_every_accepted_case_as_upstream(
    upstream: dict[str, Verdict], kubeconfig: Path
) -> None:
    """Plugin sets, weights, default args and top-level defaults of every accepted case."""
    differ = {}
    for case_id, theirs in upstream.items():
        if not theirs.accepted:
            continue
        written = yaml.safe_load(theirs.written)
        instantiated = {
            pc["name"] for p in written.get("profiles") or () for pc in p.get("pluginConfig") or ()
        }
        ours = dump_config(load_config(_case(CORPUS / f"{case_id}.yaml", kubeconfig).text))
        if _defaulted(ours, instantiated) != _defaulted(written, instantiated):
            differ[case_id] = (_defaulted(written, instantiated), _defaulted(ours, instantiated))
    assert differ == {}


def test_corpus_summary(upstream: dict[str, Verdict], kubeconfig: Path) -> None:
    """The corpus holds both kinds of case; prints the counts and every differing case."""
    differ = []
    for path in CASES:
        ours = corral(_case(path, kubeconfig).text)
        if ours.accepted != upstream[path.stem].accepted:
            differ.append(path.stem)
    accepted = sum(v.accepted for v in upstream.values())
    print(
        f"\n{len(CASES)} configurations: upstream accepts {accepted}, refuses "
        f"{len(CASES) - accepted}; Corral differs on {len(differ)}: {differ}"
    )
    assert accepted >= 10
    assert len(CASES) - accepted >= 10


def live_verdicts(binary: Path, work: Path, kubeconfig: Path) -> dict[str, Verdict]:
    """The binary's verdict on every case (two at a time: the machine is shared)."""
    cases = [_case(p, kubeconfig) for p in CASES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        verdicts = pool.map(lambda c: upstream_verdict(binary, work, c), cases)
        return {c.id: v for c, v in zip(cases, verdicts, strict=True)}


def _placeholder(text: str, kubeconfig: Path) -> str:
    return text.replace(str(kubeconfig), KUBECONFIG_PLACEHOLDER)


def record(verdicts: dict[str, Verdict], kubeconfig: Path, directory: Path = RECORDED) -> None:
    """Write ``verdicts`` as the recording: ``verdicts.yaml`` (case -> accepted, reason) and
    ``written/<case>.yaml`` (what the binary wrote for an accepted case), the kubeconfig's
    path replaced by ``@KUBECONFIG@``."""
    written = directory / "written"
    shutil.rmtree(written, ignore_errors=True)
    written.mkdir(parents=True)
    table = {}
    for case_id, verdict in sorted(verdicts.items()):
        table[case_id] = {"accepted": verdict.accepted, "reason": verdict.reason}
        if verdict.accepted:
            (written / f"{case_id}.yaml").write_text(_placeholder(verdict.written, kubeconfig))
    (directory / "verdicts.yaml").write_text(yaml.safe_dump(table, width=1000))


def recorded_verdicts(kubeconfig: Path, directory: Path = RECORDED) -> dict[str, Verdict]:
    """The recording :func:`record` wrote, the kubeconfig placeholder filled in."""
    table = yaml.safe_load((directory / "verdicts.yaml").read_text())
    out = {}
    for case_id, entry in table.items():
        text = ""
        if entry["accepted"]:
            text = (directory / "written" / f"{case_id}.yaml").read_text()
            text = text.replace(KUBECONFIG_PLACEHOLDER, str(kubeconfig))
        out[case_id] = Verdict(entry["accepted"], entry["reason"], text)
    return out
