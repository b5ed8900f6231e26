"""Corral's table of kube-scheduler's feature gates is the pinned binary's, and its refusals are
the binary's words: the pinned kube-scheduler is asked (``--feature-gates ... --version``, which
validates the gates and exits; no API server needed).

- every gate the binary lists in ``--help`` (the non-GA ones) has the table's stage and default;
- setting every locked gate to its other value fails with exactly the table's locked refusals;
- an unknown gate, and each gate with dependencies enabled alone, fail with Corral's message.
The whole table (GA gates, locks, dependencies) is regenerated from the binary's own
registrations by ``hack/gen-feature-gates`` (``--check`` compares).
"""

from __future__ import annotations

import re
import subprocess

import pytest

from corral.scheduler.config import features
from corral.testing.binaries import ensure_binaries

_HELP_GATE = re.compile(r"kube:(\w+)=true\|false \(([A-Z-]+) - default=(true|false)\)")
_FAILED = re.compile(r'"command failed" err="(.*)"\s*$')


def _refusal(*flags: str) -> str:
    binary = ensure_binaries().kube_scheduler
    result = subprocess.run(
        [str(binary), *flags, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    match = _FAILED.search(result.stderr.strip().splitlines()[-1]) if result.stderr else None
    if result.returncode == 0:
        return ""
    assert match, result.stderr
    return match.group(1).encode().decode("unicode_escape")


def _errors(text: str) -> set[str]:
    """kube-scheduler prints one error as is, several as ``[a, b, ...]``."""
    if text.startswith("[") and text.endswith("]"):
        return {e.strip() for e in re.split(r", (?=cannot set|\w+ is enabled)", text[1:-1])}
    return {text}


def test_listed_gates_have_the_tables_stage_and_default() -> None:
    binary = ensure_binaries().kube_scheduler
    help_text = subprocess.run(
        [str(binary), "--help"], capture_output=True, text=True, timeout=60, check=False
    ).stdout
    listed = {m[0]: (m[1], m[2] == "true") for m in _HELP_GATE.findall(help_text)}
    assert len(listed) > 100
    table = features.table().gates
    mismatched = {
        name: (want, (table[name].stage, table[name].default) if name in table else None)
        for name, want in listed.items()
        if name not in table or (table[name].stage, table[name].default) != want
    }
    assert not mismatched


def test_locked_gates_are_refused_as_upstream() -> None:
    locked = {n: not g.default for n, g in features.table().gates.items() if g.locked}
    assert locked
    flag = ",".join(f"{n}={'true' if v else 'false'}" for n, v in sorted(locked.items()))
    assert _errors(_refusal(f"--feature-gates={flag}")) == {
        p.message for p in features.upstream_problems(locked)
    }


@pytest.mark.parametrize(
    "gate",
    sorted(n for n, g in features.table().gates.items() if g.depends_on and not g.locked),
)
def test_a_gate_without_its_dependencies_is_refused_as_upstream(gate: str) -> None:
    spec = features.table().gates[gate]
    value = not spec.default
    settings = {gate: value}
    want = {p.message for p in features.upstream_problems(settings)}
    got = _refusal(f"--feature-gates={gate}={'true' if value else 'false'}")
    assert (_errors(got) if got else set()) == want


@pytest.mark.parametrize(
    ("flag", "settings"),
    [
        pytest.param("NoSuchGate=true", {"NoSuchGate": True}, id="unknown"),
        pytest.param("SchedulerQueueingHints=false", {"SchedulerQueueingHints": False},
                     id="removed in 1.37"),
    ],
)  # fmt: skip
def test_unknown_gates_are_refused_as_upstream(flag: str, settings: dict[str, bool]) -> None:
    assert _refusal(f"--feature-gates={flag}") == features.upstream_problems(settings)[0].message


def test_syntax_errors_are_worded_as_upstream() -> None:
    for flag in ("GenericWorkload", "kube:GenericWorkload=maybe"):
        with pytest.raises(features.FeatureGateError) as caught:
            features.parse_flag(flag)
        assert _refusal(f"--feature-gates={flag}") == str(caught.value)
