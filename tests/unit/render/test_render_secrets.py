"""Extender TLS material comes from a Secret mounted into the scheduler pods: the rendered
config names the mounted files, the ConfigMap holds no key, and inline keys are refused with
a message that says where they go instead."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from corral.api import check_profile, load_profile
from corral.render import render

PEM_KEY = base64.b64encode(b"-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n")


def profile(extender: dict[str, Any]) -> dict[str, Any]:
    base = {"urlPrefix": "https://ext.example:8443", "filterVerb": "filter"}
    return {
        "apiVersion": "corral.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "p", "uid": "u"},
        "spec": {"namespace": "ns", "extenders": [{**base, **extender}]},
    }


def test_secret_is_mounted_and_named_by_path() -> None:
    objects = render(load_profile(profile({"tlsSecretRef": {"name": "ext-tls"}}))).objects
    (cm,) = [o for o in objects if o["kind"] == "ConfigMap"]
    config = cm["data"]["config.yaml"]
    where = "/var/run/corral/extender-tls/0"
    for name in ("tls.crt", "tls.key", "ca.crt"):
        assert f"{where}/{name}" in config
    assert "tlsSecretRef" not in config
    assert "keyData" not in config
    (deploy,) = [o for o in objects if o["kind"] == "Deployment"]
    pod = deploy["spec"]["template"]["spec"]
    assert {
        "name": "extender-tls-0",
        "secret": {"secretName": "ext-tls", "defaultMode": 0o440},
    } in pod["volumes"]
    mounts = pod["containers"][0]["volumeMounts"]
    assert {"name": "extender-tls-0", "mountPath": where, "readOnly": True} in mounts
    assert pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsUser"]


@pytest.mark.parametrize(
    ("extender", "path", "fragment"),
    [
        pytest.param(
            {"tlsConfig": {"keyData": PEM_KEY.decode()}},
            "spec.extenders[0].tlsConfig.keyData",
            "would be stored in the scheduler's ConfigMap: put tls.crt, tls.key and ca.crt in a "
            "Secret",
            id="inline key",
        ),
        pytest.param(
            {"tlsConfig": {"certData": PEM_KEY.decode()}},
            "spec.extenders[0].tlsConfig.certData",
            "spec.extenders[0].tlsSecretRef.name",
            id="inline cert",
        ),
        pytest.param(
            {"tlsSecretRef": {"name": "Bad_Name"}},
            "spec.extenders[0].tlsSecretRef.name",
            "RFC 1123 subdomain",
            id="secret name",
        ),
        pytest.param(
            {"tlsSecretRef": {"name": "ok"}, "tlsConfig": {"keyFile": "/k"}},
            "spec.extenders[0].tlsConfig.keyFile",
            "set by tlsSecretRef",
            id="both",
        ),
    ],
)
def test_inline_material_is_refused(extender: dict[str, Any], path: str, fragment: str) -> None:
    result, errs = check_profile(profile(extender))
    assert result is None
    found = [e for e in errs if e.path == path]
    assert found, [str(e) for e in errs]
    assert fragment in found[0].message
