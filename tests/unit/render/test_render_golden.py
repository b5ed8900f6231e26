"""Golden files for every sample, determinism, and the rendered config loading in the engine.

Regenerate the golden files after an intended change with
``CORRAL_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/render -q`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from corral.api import default_catalog, load_profile
from corral.render import dump, render
from corral.scheduler.config import expand_profiles, load_config

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = sorted((ROOT / "config" / "samples").glob("*.yaml"))
SAMPLES = [s for s in SAMPLES if s.name != "kustomization.yaml"]
GOLDEN = Path(__file__).parent / "golden"


def render_sample(path: Path) -> str:
    return dump(render(load_profile(yaml.safe_load(path.read_text()))).objects)


@pytest.mark.parametrize("sample", [pytest.param(s, id=s.stem) for s in SAMPLES])
def test_golden(sample: Path) -> None:
    text = render_sample(sample)
    golden = GOLDEN / sample.name
    if os.environ.get("CORRAL_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), f"no golden file; run with CORRAL_UPDATE_GOLDEN=1 to create {golden}"
    assert text == golden.read_text(encoding="utf-8")


def test_samples_are_listed_in_kustomization() -> None:
    kustomization = yaml.safe_load((ROOT / "config" / "samples" / "kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == sorted(s.name for s in SAMPLES)


@pytest.mark.parametrize("sample", [pytest.param(s, id=s.stem) for s in SAMPLES])
def test_two_renders_give_identical_bytes(sample: Path) -> None:
    assert render_sample(sample).encode() == render_sample(sample).encode()


@pytest.mark.parametrize("sample", [pytest.param(s, id=s.stem) for s in SAMPLES])
def test_rendered_config_loads_like_upstream(sample: Path) -> None:
    rendered = render(load_profile(yaml.safe_load(sample.read_text())))
    (configmap,) = [o for o in rendered.objects if o["kind"] == "ConfigMap"]
    text = configmap["data"]["config.yaml"]
    assert text == rendered.config_yaml
    registry = default_catalog().registry()
    cfg = load_config(text, registry=registry)
    (expanded,) = expand_profiles(cfg, registry)
    assert len(expanded.points["queueSort"]) == 1
    assert expanded.points["bind"]
    assert cfg.leader_election.resource_namespace == configmap["metadata"]["namespace"]


def test_pod_limits_sample_is_the_seed_article_scheduler() -> None:
    rendered = render(
        load_profile(yaml.safe_load((ROOT / "config/samples/pod-limits-ha.yaml").read_text()))
    )
    registry = default_catalog().registry()
    (expanded,) = expand_profiles(load_config(rendered.config_yaml, registry=registry), registry)
    assert "DefaultPreemption" not in expanded.points["postFilter"]
    assert expanded.points["filter"][-2:] == ["CheckPodCountLimit", "CheckPodLimitResources"]
    deployment = next(o for o in rendered.objects if o["kind"] == "Deployment")
    assert deployment["spec"]["replicas"] == 3
    assert any(o["kind"] == "PodDisruptionBudget" for o in rendered.objects)
