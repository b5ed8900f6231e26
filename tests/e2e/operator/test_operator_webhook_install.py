"""config/default with the Component config/webhook: the operator, with exactly its
ServiceAccount's rights and kopf peering on, keeps its self-signed serving pair in the Secret the
Role allows, fills in the two webhook configurations the install ships (the pod webhook failing
open) and refuses a bad profile at admission. (The pods cannot run on this kubelet-less cluster,
so the process runs locally and registers a URL; the Service path is covered in
test_operator_admission.py, the pods in tests/e2e/realnode/test_real_lifecycle.py.)"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from test_operator_install import NS, SA, _Shim

from corral.k8s import Client
from corral.k8s.kubeconfig import write_token_kubeconfig
from corral.testing import LocalCluster
from corral_dev.install import operator_overlay, prerequisites
from support.operator_process import ROOT, OperatorProcess, eventually, profile

VWC = ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "corral.dev")


def test_webhook_install_with_the_operators_own_rights(
    cluster: LocalCluster, kube: Client, crd: None, namespace: str, tmp_path: Path, profiles: Any
) -> None:
    prerequisites(cluster.kubectl, ROOT)
    overlay = operator_overlay(
        tmp_path / "overlay",
        ROOT / "config" / "default",
        "ghcr.io/corral-dev/corral:0.1.0",
        components=[ROOT / "config" / "webhook"],
    )
    out = cluster.kubectl("apply", "-k", str(overlay)).stdout
    assert "service/corral-webhook" in out
    assert "role.rbac.authorization.k8s.io/corral:operator:webhook" in out
    assert "validatingwebhookconfiguration.admissionregistration.k8s.io/corral.dev" in out
    assert "mutatingwebhookconfiguration.admissionregistration.k8s.io/corral.dev" in out
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kubeconfig = tmp_path / "operator.kubeconfig"
    write_token_kubeconfig(kubeconfig, kube, kube.request_token(NS, SA), f"{NS}:{SA}")
    op = OperatorProcess(
        cluster,
        tmp_path / "op.log",
        [
            "--peering=corral-e2e-webhook",
            f"--webhook-listen=127.0.0.1:{port}",
            f"--webhook-cert-secret={NS}/corral-webhook-tls",
        ],
    )
    op.cluster = _Shim(cluster, kubeconfig)  # type: ignore[assignment]
    op.start()
    try:
        eventually(
            lambda: (kube.get(*VWC[:2], VWC[2]).get("webhooks") or [{}])[0].get("clientConfig"),
            timeout=60,
            what="the webhook configuration",
        )
        secret = kube.get("v1", "Secret", "corral-webhook-tls", NS)
        assert set(secret["data"]) == {"tls.crt", "tls.key", "ca.crt"}
        bad = profile(
            profiles("bad"), namespace, plugins={"score": {"enabled": [{"name": "Nope"}]}}
        )
        done = cluster.kubectl(
            "apply", "--dry-run=server", "-f", "-", input=json.dumps(bad), check=False
        )
        assert (
            "denied the request: the profile is invalid: spec.plugins.score.enabled[0].name: "
            'unknown plugin "Nope"' in done.stderr
        ), (done.stderr, op.log())
        [hook] = kube.get(VWC[0], "MutatingWebhookConfiguration", VWC[2])["webhooks"]
        assert (hook["name"], hook["failurePolicy"]) == ("pods.corral.dev", "Ignore")
        assert "Forbidden" not in op.log()
    finally:
        op.stop()
        kube.delete(*VWC[:2], VWC[2])
        kube.delete(VWC[0], "MutatingWebhookConfiguration", VWC[2])
        kube.delete("kopf.dev/v1", "ClusterKopfPeering", "corral-e2e-webhook")
        kube.delete("v1", "Secret", "corral-webhook-tls", NS)
        for kind, name in (("Service", "corral-webhook"), ("Deployment", "corral-operator")):
            kube.delete("apps/v1" if kind == "Deployment" else "v1", kind, name, NS)
        cluster.kubectl("delete", "--ignore-not-found", "-k", str(overlay))
