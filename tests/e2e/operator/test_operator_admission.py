"""The validating admission webhook, served by a local operator to the real API server, by URL
and through a Service (the operator-in-a-pod configuration; on this kubelet-less cluster the
Service is an ExternalName pointing at localhost, which the API server's resolver follows):
``kubectl apply`` and ``kubectl apply --dry-run=server`` of a profile ``corral validate``
refuses, or whose schedulerName or Lease another profile holds, are refused with the field
path; a good profile passes. With the operator stopped the webhook stays and fails closed
(failure policy Fail): no profile is admitted unchecked, deletes still work."""

from __future__ import annotations

import base64
import json
import socket
import ssl
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster
from support.operator_process import API, KIND, OperatorProcess, eventually, profile

VWC = ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "corral.dev")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(params=["url", "service"])
def webhook_operator(
    request: pytest.FixtureRequest,
    kube: Client,
    kube_namespaces: list[str],
    start_operator: Callable[..., OperatorProcess],
) -> Iterator[OperatorProcess]:
    port = free_port()
    args = [f"--webhook-listen=127.0.0.1:{port}"]
    if request.param == "service":
        ns = kube_namespaces[1]
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "corral-webhook", "namespace": ns},
                "spec": {
                    "type": "ExternalName",
                    "externalName": "localhost",
                    "ports": [{"name": "https", "port": port}],
                },
            }
        )
        args.append(f"--webhook-service={ns}/corral-webhook:{port}")
    op = start_operator(*args)

    def registered() -> bool:
        hooks = kube.get(*VWC[:2], VWC[2]).get("webhooks") or []
        return bool(hooks) and set(hooks[0]["clientConfig"]) == {"caBundle", request.param}

    eventually(registered, what="the webhook configuration")
    yield op
    op.stop()
    kube.delete(*VWC[:2], VWC[2])  # persistent by design: it outlives the operator
    kube.delete(VWC[0], "MutatingWebhookConfiguration", VWC[2])  # the pod webhook, kept as well


def served_certificate(port: int) -> str:
    """The PEM certificate whichever listener takes a new connection serves."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return ssl.DER_cert_to_PEM_cert(der)


def apply(cluster: LocalCluster, obj: JSON, *extra: str) -> tuple[int, str]:
    done = cluster.kubectl("apply", "-f", "-", *extra, input=json.dumps(obj), check=False)
    return done.returncode, done.stderr.strip()


def admitted(cluster: LocalCluster, obj: JSON) -> bool:
    """The webhook judges with the operator's view of existing profiles: a profile just created
    is seen a moment later, so the first checks may still pass."""
    return apply(cluster, obj, "--dry-run=server")[0] == 0


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        pytest.param(
            {"schedulerName": "{holder}"},
            "spec.schedulerName: '{holder}' is already served by SchedulerProfile '{holder}'",
            id="duplicate schedulerName",
        ),
        pytest.param(
            {"leaderElection": {"resourceName": "{holder}"}},
            "spec.leaderElection.resourceName: Lease '{ns}/{holder}' is already used by "
            "SchedulerProfile '{holder}'",
            id="colliding Lease",
        ),
        pytest.param(
            {"plugins": {"score": {"enabled": [{"name": "ImageLocalty"}]}}},
            'spec.plugins.score.enabled[0].name: unknown plugin "ImageLocalty"; '
            'did you mean "ImageLocality"?',
            id="unknown plugin",
        ),
        pytest.param(
            {
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Most"}}}
                ]
            },
            "spec.pluginConfig[0].args.scoringStrategy.type",
            id="bad args",
        ),
        pytest.param(
            {
                "tenancy": {"nodeSelector": {"pool": "x"}},
                "plugins": {"filter": {"disabled": [{"name": "NodeAffinity"}]}},
            },
            'spec.plugins.filter.disabled[0].name: plugin "NodeAffinity" must run at filter',
            id="tenant pool dropped",
        ),
    ],
)
def test_refused_at_admission_with_the_field_path(
    kube: Client,
    cluster: LocalCluster,
    kube_namespaces: list[str],
    webhook_operator: OperatorProcess,
    profiles: Any,
    spec: JSON,
    fragment: str,
) -> None:
    ns, _ = kube_namespaces
    holder = profiles("holder")
    kube.create(profile(holder, ns))
    fill = {"holder": holder, "ns": ns}
    body = json.loads(json.dumps(spec).replace("{holder}", holder))
    incoming = profile(profiles("new"), ns, **body)
    eventually(lambda: not admitted(cluster, incoming), what="the webhook to see the holder")
    expected = fragment.format(**fill)
    for extra in (("--dry-run=server",), ()):
        code, err = apply(cluster, incoming, *extra)
        assert code != 0
        assert 'admission webhook "profiles.corral.dev" denied the request' in err, err
        assert expected in err, err
    with pytest.raises(ApiError) as absent:
        kube.get(API, KIND, incoming["metadata"]["name"])
    assert absent.value.status == 404


def test_good_profile_is_admitted_and_the_webhook_fails_closed_without_operator(
    kube: Client,
    cluster: LocalCluster,
    kube_namespaces: list[str],
    webhook_operator: OperatorProcess,
    profiles: Any,
) -> None:
    ns, _ = kube_namespaces
    good = profile(profiles("good"), ns)
    assert apply(cluster, good, "--dry-run=server") == (0, "")
    assert apply(cluster, good)[0] == 0
    webhook_operator.stop()
    hooks = kube.get(*VWC[:2], VWC[2])["webhooks"]
    assert [h["failurePolicy"] for h in hooks] == ["Fail"]
    code, err = apply(cluster, profile(profiles("later"), ns))
    assert code != 0
    assert 'failed calling webhook "profiles.corral.dev"' in err, err
    kube.delete(API, KIND, good["metadata"]["name"])  # deletes are not intercepted


def test_replicas_behind_one_service_share_the_self_signed_pair(
    kube: Client,
    cluster: LocalCluster,
    kube_namespaces: list[str],
    start_operator: Callable[..., OperatorProcess],
    profiles: Any,
) -> None:
    """Two operators on one port (SO_REUSEPORT: the kernel spreads connections as a Service
    spreads them over pods) keep their pair in one Secret, so the single caBundle verifies
    whichever answers: every refusal comes from the webhook, none is a TLS failure."""
    ns, other = kube_namespaces
    port = free_port()
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "corral-webhook", "namespace": other},
            "spec": {
                "type": "ExternalName",
                "externalName": "localhost",
                "ports": [{"name": "https", "port": port}],
            },
        }
    )
    args = (
        f"--webhook-listen=127.0.0.1:{port}",
        f"--webhook-service={other}/corral-webhook:{port}",
        f"--webhook-cert-secret={other}/corral-webhook-tls",
    )
    ops = [start_operator(*args), start_operator(*args)]
    try:
        eventually(
            lambda: (kube.get(*VWC[:2], VWC[2]).get("webhooks") or [{}])[0].get("clientConfig"),
            what="the webhook configuration",
        )
        secret = kube.get("v1", "Secret", "corral-webhook-tls", other)
        bundle = kube.get(*VWC[:2], VWC[2])["webhooks"][0]["clientConfig"]["caBundle"]
        assert bundle == secret["data"]["ca.crt"]
        served = {served_certificate(port) for _ in range(40)}  # fresh connections, spread
        assert served == {
            ssl.DER_cert_to_PEM_cert(
                ssl.PEM_cert_to_DER_cert(base64.b64decode(secret["data"]["tls.crt"]).decode())
            )
        }
        bad = profile(profiles("bad"), ns, plugins={"score": {"enabled": [{"name": "Nope"}]}})
        for _ in range(3):
            code, err = apply(cluster, bad, "--dry-run=server")
            assert code != 0
            assert 'admission webhook "profiles.corral.dev" denied the request' in err, err
    finally:
        for op in ops:
            op.stop()
        kube.delete(*VWC[:2], VWC[2])
        kube.delete(VWC[0], "MutatingWebhookConfiguration", VWC[2])
