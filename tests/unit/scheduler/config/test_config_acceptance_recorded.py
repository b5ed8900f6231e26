"""Corral accepts exactly the KubeSchedulerConfigurations the pinned kube-scheduler accepts, and
defaults them alike, judged by the binary's recorded answers (``data/upstream/``, written by
``hack/record-upstream-config``; the conformance tier checks them against the live binary); the
checks are :mod:`support.config_acceptance`'s."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.config_acceptance import (
    Verdict,
    kubeconfig,
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
def upstream(kubeconfig: Path) -> dict[str, Verdict]:
    return recorded_verdicts(kubeconfig)
