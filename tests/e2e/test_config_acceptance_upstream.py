"""Corral accepts exactly the KubeSchedulerConfigurations the pinned kube-scheduler accepts, and
defaults them alike, judged by the live binary (``--config --write-config-to``); the checks are
:mod:`support.config_acceptance`'s. Also: the recording the unit tier runs them against is the
binary's current answer (else ``hack/record-upstream-config`` refreshes it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.testing.binaries import ensure_binaries
from support.config_acceptance import (
    Verdict,
    kubeconfig,
    live_verdicts,
    recorded_verdicts,
    test_corpus_summary,
    test_corral_accepts_exactly_what_upstream_accepts,
    test_corral_defaults_every_accepted_case_as_upstream,
    test_every_configuration_upstream_writes_loads_in_corral,
)

__all__ = [
    "kubeconfig",
    "test_corpus_summary",
    "test_corral_accepts_exactly_what_upstream_accepts",
    "test_corral_defaults_every_accepted_case_as_upstream",
    "test_every_configuration_upstream_writes_loads_in_corral",
]


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory, kubeconfig: Path) -> dict[str, Verdict]:
    work = tmp_path_factory.mktemp("upstream-verdicts")
    return live_verdicts(ensure_binaries().kube_scheduler, work, kubeconfig)


def test_the_recording_is_the_binarys_answer(
    upstream: dict[str, Verdict], kubeconfig: Path
) -> None:
    assert recorded_verdicts(kubeconfig) == upstream, "run hack/record-upstream-config"
