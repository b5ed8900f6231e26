"""`corral scheduler --shadow-of`: a configuration a shadow must not run is refused at its field
before any credential is read (one profile; never the live scheduler's own Lease)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.unit.cli.conftest import Run

from corral.cli.scheduler import check_shadow
from corral.scheduler.config import ValidationError
from corral.scheduler.engine.frameworks import load_engine_config

HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
OWN_LEASE = {"leaderElection": {"resourceName": "shadow-of-default"}}
NO_ELECTION = {"leaderElection": {"leaderElect": False}}


@pytest.mark.parametrize(
    ("config", "errors"),
    [
        pytest.param({**NO_ELECTION, "profiles": [{"schedulerName": "x"}]}, [], id="no-election"),
        pytest.param({**OWN_LEASE, "profiles": [{"schedulerName": "x"}]}, [], id="own-lease"),
        pytest.param({"profiles": [{"schedulerName": "x"}]},
                     ["leaderElection.resourceName: 'kube-scheduler' in kube-system is the live "
                      "scheduler's Lease: give the shadow its own, or leaderElect: false"],
                     id="the-live-schedulers-lease"),
        pytest.param({**NO_ELECTION, "profiles": [{"schedulerName": "x"}, {"schedulerName": "y"}]},
                     ["profiles: a shadow runs one profile, not 2"], id="two-profiles"),
    ],
)  # fmt: skip
def test_what_a_shadow_may_run(config: dict[str, object], errors: list[str]) -> None:
    engine = load_engine_config({**HEAD, **config})
    if not errors:
        check_shadow(engine)
        return
    with pytest.raises(ValidationError) as refused:
        check_shadow(engine)
    assert [str(e) for e in refused.value.errors] == errors


def test_a_shadow_on_the_live_lease_exits_1_before_credentials(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({**HEAD, "profiles": [{"schedulerName": "x"}]}))
    result = subprocess.run(
        [sys.executable, "-m", "corral", "scheduler", "--config", str(config), "--shadow-of",
         "default-scheduler", "--kubeconfig", str(tmp_path / "missing")],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(f"{config}:")
    assert "leaderElection.resourceName: 'kube-scheduler' in kube-system" in result.stderr
    assert "credentials" not in result.stderr


def test_shadow_profile_goes_with_shadow_of(tmp_path: Path, corral: Run) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({**HEAD, **NO_ELECTION, "profiles": [{"schedulerName": "x"}]}))
    code, out, err = corral("scheduler", "--config", str(config), "--shadow-profile", "p",
                            "--kubeconfig", str(tmp_path / "missing"))  # fmt: skip
    assert (code, out) == (2, "")
    assert err.strip() == "corral: --shadow-profile goes with --shadow-of"
