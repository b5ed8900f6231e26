"""The validating admission webhook with the operator as two real pods on the real node,
installed from config/default with the Component config/webhook and the image built from this
checkout: the API server calls it through the corral-webhook Service (at a ready endpoint, the
pod's address on the node's bridge),
``kubectl apply`` and ``--dry-run=server`` of a bad profile are refused with the field path
whichever replica answers, a good one is admitted, and a replica's deletion does not break
admission: both serve the one self-signed pair kept in the Secret, which the caBundle names.

The tests share one cluster and run in order.
"""

from __future__ import annotations

import base64
import json
import ssl
from pathlib import Path
from typing import Any

import pytest
from test_real_path import API, IMAGE, ON_REAL_NODE, OPERATOR_NS, OPERATORS, _ready_pods

from corral.k8s import ApiError, Client
from corral.testing import LocalCluster
from corral.testing.processes import wait_for
from corral_dev.install import operator_overlay, prerequisites

pytestmark = pytest.mark.timeout(1800)

ROOT = Path(__file__).resolve().parents[3]
VWC = ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "corral.dev")
SECRET = "corral-webhook-tls"
WEBHOOK_PORT = 9443
ENGINE_NS = "corral-hook"
HOLDER = "holder"
DENIED = 'admission webhook "profiles.corral.dev" denied the request'
TRIES = 6  # the API server picks a ready endpoint per call: both replicas answer some


def _profile(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "SchedulerProfile", "metadata": {"name": name},
            "spec": {"namespace": ENGINE_NS, "replicas": 1, **spec}}  # fmt: skip


def _apply(cluster: LocalCluster, obj: dict[str, Any], *extra: str) -> tuple[int, str]:
    done = cluster.kubectl("apply", "-f", "-", *extra, input=json.dumps(obj), check=False)
    return done.returncode, done.stderr.strip()


def _secret_pem(kube: Client, key: str) -> str:
    data = kube.get("v1", "Secret", SECRET, OPERATOR_NS)["data"][key]
    return ssl.DER_cert_to_PEM_cert(ssl.PEM_cert_to_DER_cert(base64.b64decode(data).decode()))


def _served(pod: dict[str, Any]) -> str:
    """The certificate the pod's webhook server presents (the host reaches the pod's bridge)."""
    return ssl.get_server_certificate((pod["status"]["podIP"], WEBHOOK_PORT), timeout=10)


@pytest.fixture(scope="module")
def operator(
    real_cluster: LocalCluster, kube: Client, tmp_path_factory: pytest.TempPathFactory
) -> list[dict[str, Any]]:
    overlay = operator_overlay(
        tmp_path_factory.mktemp("overlay"), ROOT / "config" / "default", IMAGE, ON_REAL_NODE,
        components=[ROOT / "config" / "webhook"],
    )  # fmt: skip
    prerequisites(real_cluster.kubectl, ROOT)
    real_cluster.kubectl("apply", "--server-side", "-k", str(overlay))
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ENGINE_NS}})
    pods = _ready_pods(kube, OPERATOR_NS, OPERATORS, 2)
    wait_for(
        "the webhook registered behind the Service",
        lambda: "service" in ((kube.get(*VWC[:2], VWC[2]).get("webhooks") or [{}])[0]
                              .get("clientConfig") or {}),
        timeout=120,
    )  # fmt: skip
    return pods


def test_both_replicas_serve_the_secrets_pair_named_by_the_ca_bundle(
    kube: Client, operator: list[dict[str, Any]]
) -> None:
    client_config = kube.get(*VWC[:2], VWC[2])["webhooks"][0]["clientConfig"]
    service = client_config["service"]
    assert (service["namespace"], service["name"], service["port"]) == (
        OPERATOR_NS, "corral-webhook", 443)  # fmt: skip
    secret = kube.get("v1", "Secret", SECRET, OPERATOR_NS)
    assert client_config["caBundle"] == secret["data"]["ca.crt"]
    assert {_served(p) for p in operator} == {_secret_pem(kube, "tls.crt")}


def test_good_profile_is_admitted(real_cluster: LocalCluster, kube: Client) -> None:
    holder = _profile(HOLDER)
    assert _apply(real_cluster, holder, "--dry-run=server") == (0, "")
    code, err = _apply(real_cluster, holder)
    assert code == 0, err
    assert kube.get(API, "SchedulerProfile", HOLDER)["metadata"]["name"] == HOLDER


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        pytest.param(
            {"schedulerName": HOLDER},
            f"spec.schedulerName: '{HOLDER}' is already served by SchedulerProfile '{HOLDER}'",
            id="duplicate schedulerName",
        ),
        pytest.param(
            {"plugins": {"score": {"enabled": [{"name": "ImageLocalty"}]}}},
            'spec.plugins.score.enabled[0].name: unknown plugin "ImageLocalty"; '
            'did you mean "ImageLocality"?',
            id="unknown plugin",
        ),
    ],
)
def test_refused_through_the_service_with_the_field_path(
    real_cluster: LocalCluster, kube: Client, spec: dict[str, Any], fragment: str
) -> None:
    incoming = _profile("incoming", **spec)
    for extra in [("--dry-run=server",), ()] * (TRIES // 2):
        code, err = _apply(real_cluster, incoming, *extra)
        assert code != 0
        assert DENIED in err, err
        assert fragment in err, err
    with pytest.raises(ApiError) as absent:
        kube.get(API, "SchedulerProfile", "incoming")
    assert absent.value.status == 404


def test_deleting_a_replica_keeps_admission_and_the_pair(
    real_cluster: LocalCluster, kube: Client, operator: list[dict[str, Any]]
) -> None:
    pods = _ready_pods(kube, OPERATOR_NS, OPERATORS, 2)
    pair = _secret_pem(kube, "tls.crt")
    gone, kept = pods
    kube.delete("v1", "Pod", gone["metadata"]["name"], OPERATOR_NS)
    duplicate = _profile("incoming", schedulerName=HOLDER)
    # While the deleted replica terminates and its replacement starts, the API server calls the
    # replicas that are ready: every answer is the webhook's refusal, none a call failure.
    for _ in range(TRIES):
        code, err = _apply(real_cluster, duplicate, "--dry-run=server")
        assert code != 0
        assert DENIED in err, err
    now = _ready_pods(kube, OPERATOR_NS, OPERATORS, 2)
    names = {p["metadata"]["name"] for p in now}
    assert gone["metadata"]["name"] not in names
    assert kept["metadata"]["name"] in names
    assert _secret_pem(kube, "tls.crt") == pair
    assert {_served(p) for p in now} == {pair}
    code, err = _apply(real_cluster, duplicate)
    assert code != 0
    assert f"spec.schedulerName: '{HOLDER}' is already served" in err, err
    assert _apply(real_cluster, _profile("after"), "--dry-run=server") == (0, "")
