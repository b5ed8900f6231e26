"""The SchedulerProfile CRD on a real API server: it installs, explains itself, refuses what its
CEL rules forbid, and every object rendered from every sample passes a server-side dry-run."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.api import OperatorDefaults, load_profile
from corral.k8s import ApiError, Client
from corral.k8s.client import CONTENT_APPLY_PATCH
from corral.render import render

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CRD = yaml.safe_load((ROOT / "crds" / "schedulerprofiles.corral.dev.yaml").read_text())
SAMPLES = sorted(
    p for p in (ROOT / "config" / "samples").glob("*.yaml") if p.name != "kustomization.yaml"
)


def dry_run_apply(kube: Client, obj: dict[str, Any]) -> Any:
    return kube.request(
        "PATCH",
        kube.path_of(obj),
        body=json.dumps(obj).encode(),
        params={"fieldManager": "corral", "force": True, "dryRun": "All"},
        content_type=CONTENT_APPLY_PATCH,
    )


@pytest.fixture(scope="module")
def crd(kube: Client) -> Iterator[None]:
    kube.apply(CRD, field_manager="corral-tests")
    deadline = time.monotonic() + 30
    while True:
        got = kube.get(
            "apiextensions.k8s.io/v1", "CustomResourceDefinition", CRD["metadata"]["name"]
        )
        status = got.get("status") or {}
        conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
        if conditions.get("Established") == "True":
            break
        assert time.monotonic() < deadline, conditions
        time.sleep(0.2)
    # Discovery must know the new kind before kubectl explain or path lookups work.
    while True:
        try:
            kube.request("GET", "/apis/corral.dev/v1alpha1/schedulerprofiles")
            break
        except ApiError:
            assert time.monotonic() < deadline
            time.sleep(0.2)
    return


def test_crd_is_established(kube: Client, crd: None) -> None:
    got = kube.get(
        "apiextensions.k8s.io/v1", "CustomResourceDefinition", "schedulerprofiles.corral.dev"
    )
    assert got["spec"]["scope"] == "Cluster"
    assert got["status"]["acceptedNames"]["shortNames"] == ["sp", "schedprof"]


def test_kubectl_explain_reads_well(crd: None, kubectl: Callable[..., Any]) -> None:
    deadline = time.monotonic() + 30
    while True:
        result = kubectl("explain", "schedulerprofile.spec.tenancy", check=False)
        if result.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Restricts the scheduler to a tenant" in out
    assert "namespaces" in out
    assert "nodeSelector" in out
    assert "namespaceSelector" in out
    assert "binding rights only there" in out


@pytest.fixture(scope="module")
def sample_namespaces(kube: Client) -> Iterator[str]:
    """A fresh scheduler namespace plus the tenant namespaces the tenant sample names."""
    ns = f"t-{uuid.uuid4().hex[:10]}"
    names = [ns, "team-a", "team-a-batch", "corral-system"]
    created = []
    for name in names:
        try:
            kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
            created.append(name)
        except ApiError as exc:
            if not exc.conflict:
                raise
    yield ns
    for name in created:
        kube.delete("v1", "Namespace", name)


@pytest.mark.parametrize("sample", [pytest.param(s, id=s.stem) for s in SAMPLES])
def test_sample_and_every_rendered_object_pass_server_side_dry_run(
    kube: Client, crd: None, sample_namespaces: str, sample: Path
) -> None:
    data = yaml.safe_load(sample.read_text())
    dry_run_apply(kube, data)
    profile = load_profile(data, operator=OperatorDefaults(namespace=sample_namespaces))
    objects = render(profile).objects
    assert objects
    for obj in objects:
        answer = dry_run_apply(kube, obj)
        assert answer["kind"] == obj["kind"]
        assert answer["metadata"]["name"] == obj["metadata"]["name"]


def profile(spec: dict[str, Any], name: str = "cel-test") -> dict[str, Any]:
    return {
        "apiVersion": "corral.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": name},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("obj", "fragment"),
    [
        pytest.param(
            profile({}, name="Bad_Name"), "metadata.name must be a DNS-1035 label", id="name"
        ),
        pytest.param(profile({}, name="x" * 41), "at most 40 characters", id="name length"),
        pytest.param(
            profile({"replicas": 2, "leaderElection": {"leaderElect": False}}),
            "replicas > 1 requires leaderElection.leaderElect: true",
            id="replicas need leader election",
        ),
        pytest.param(
            profile({"leaderElection": {"leaseDuration": "10s", "renewDeadline": "10s"}}),
            "leaseDuration must be greater than renewDeadline",
            id="lease > renew",
        ),
        pytest.param(
            profile({"leaderElection": {"renewDeadline": "2s", "retryPeriod": "3s"}}),
            "renewDeadline must be greater than retryPeriod",
            id="renew > retry",
        ),
        pytest.param(
            profile({"schedulerName": "default-scheduler"}),
            'schedulerName "default-scheduler" is reserved',
            id="default-scheduler",
        ),
        pytest.param(
            profile(
                {"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 101}]}}}
            ),
            "weight must be between 0 and 100",
            id="plugin weight",
        ),
        pytest.param(
            profile({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2}),
            "podMaxBackoffSeconds must be greater than or equal to podInitialBackoffSeconds",
            id="backoff order",
        ),
        pytest.param(
            profile({"extenders": [{"urlPrefix": "http://x", "prioritizeVerb": "p"}]}),
            "an extender with prioritizeVerb needs a positive weight",
            id="extender weight",
        ),
        pytest.param(
            profile(
                {
                    "extenders": [
                        {"urlPrefix": "http://a", "bindVerb": "b"},
                        {"urlPrefix": "http://b", "bindVerb": "b"},
                    ]
                }
            ),
            "at most one extender may set bindVerb",
            id="one binder",
        ),
        pytest.param(profile({"tenancy": {}}), "tenancy sets nothing", id="empty tenancy"),
        pytest.param(
            profile({"percentageOfNodesToScore": 101}),
            "should be less than or equal to 100",
            id="percentage (schema)",
        ),
    ],
)
def test_api_server_refuses(kube: Client, crd: None, obj: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ApiError) as refused:
        kube.request(
            "POST",
            "/apis/corral.dev/v1alpha1/schedulerprofiles",
            body=obj,
            params={"dryRun": "All"},
        )
    assert refused.value.status == 422, refused.value
    assert fragment in refused.value.message, refused.value.message


def test_api_server_applies_defaults(kube: Client, crd: None) -> None:
    created = kube.request(
        "POST",
        "/apis/corral.dev/v1alpha1/schedulerprofiles",
        body=profile({}),
        params={"dryRun": "All"},
    )
    spec = created["spec"]
    assert spec["replicas"] == 2
    assert spec["leaderElection"] == {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
    }


POD_GROUP_PLUGINS = {
    "placementGenerate": {"enabled": [{"name": "TopologyPlacementGenerator"}]},
    "placementScore": {"enabled": [{"name": "PodGroupPodsCount", "weight": 3}]},
    "podGroupPostFilter": {"disabled": [{"name": "*"}]},
}


def test_the_1_37_pod_group_points_pass_the_api_server_and_corral(kube: Client, crd: None) -> None:
    """kube-scheduler 1.37's plugin sets: the API server keeps them (not pruned) and Corral's
    own validation and rendering carry them into the KubeSchedulerConfiguration."""
    obj = profile({"plugins": POD_GROUP_PLUGINS}, name="pod-group-points")
    created = kube.request(
        "POST", "/apis/corral.dev/v1alpha1/schedulerprofiles", body=obj, params={"dryRun": "All"}
    )
    assert created["spec"]["plugins"] == POD_GROUP_PLUGINS
    rendered = render(load_profile(created, operator=OperatorDefaults()))
    plugins = yaml.safe_load(rendered.config_yaml)["profiles"][0]["plugins"]
    assert {k: plugins[k] for k in POD_GROUP_PLUGINS} == POD_GROUP_PLUGINS
