"""Operator settings: flags over environment over defaults; readable errors."""

from __future__ import annotations

from typing import Any

import pytest

from corral.controller.settings import SettingsError, from_sources


@pytest.mark.parametrize(
    ("flags", "env", "field", "want"),
    [
        pytest.param({}, {}, "namespace", "corral-system", id="default namespace"),
        pytest.param({}, {"CORRAL_NAMESPACE": "ops"}, "namespace", "ops", id="env"),
        pytest.param(
            {"namespace": "x"}, {"CORRAL_NAMESPACE": "ops"}, "namespace", "x", id="flag wins"
        ),
        pytest.param(
            {},
            {"CORRAL_PENDING_THRESHOLD_SECONDS": "5"},
            "pending_threshold",
            5.0,
            id="threshold from env",
        ),
        pytest.param(
            {}, {"CORRAL_LOCAL_ENGINES": "true"}, "local_engines", True, id="local engines from env"
        ),
        pytest.param(
            {"reserved": "a, b"}, {}, "reserved_scheduler_names", ("a", "b"), id="reserved names"
        ),
        pytest.param({}, {}, "allow_system_leases", False, id="no system Leases by default"),
        pytest.param(
            {"allow_system_leases": True},
            {},
            "allow_system_leases",
            True,
            id="system Leases allowed by the flag",
        ),
        pytest.param(
            {},
            {"CORRAL_ALLOW_SYSTEM_LEASES": "true"},
            "allow_system_leases",
            True,
            id="system Leases allowed from env",
        ),
        pytest.param({}, {"CORRAL_LOG_FORMAT": "json"}, "log_format", "json", id="json logs"),
        pytest.param(
            {"webhook_listen": "0.0.0.0:9443"},
            {"CORRAL_WEBHOOK_SERVICE": "ns/svc:8443"},
            "webhook_service",
            "ns/svc:8443",
            id="webhook service from env",
        ),
        pytest.param(
            {"webhook_listen": ":9443", "webhook_service": "svc"},
            {"POD_NAMESPACE": "platform"},
            "webhook_service",
            "platform/svc",
            id="webhook service alone is in the operator's namespace",
        ),
        pytest.param(
            {"webhook_listen": ":9443", "webhook_service": "svc:8443", "namespace": "engines"},
            {},
            "webhook_service",
            "engines/svc:8443",
            id="webhook service alone without POD_NAMESPACE",
        ),
        pytest.param(
            {"webhook_cert_secret": "tls"},
            {"POD_NAMESPACE": "platform"},
            "webhook_cert_secret",
            "platform/tls",
            id="cert secret alone is in the operator's namespace",
        ),
        pytest.param(
            {"webhook_cert_secret": "ns/tls"},
            {"POD_NAMESPACE": "platform"},
            "webhook_cert_secret",
            "ns/tls",
            id="cert secret with its namespace",
        ),
    ],
)
def test_sources(flags: dict[str, Any], env: dict[str, str], field: str, want: Any) -> None:
    assert getattr(from_sources(flags, env), field) == want


@pytest.mark.parametrize(
    ("flags", "env", "message"),
    [
        pytest.param({"log_format": "xml"}, {}, "log format", id="bad log format"),
        pytest.param({}, {"CORRAL_RESYNC_SECONDS": "soon"}, "not a number", id="bad number"),
        pytest.param({"workers": 0}, {}, "greater than 0", id="zero workers"),
        pytest.param(
            {"resync": "nan"},
            {},
            "resync: must be a finite number of seconds, got nan",
            id="resync nan",
        ),
        pytest.param(
            {}, {"CORRAL_PENDING_THRESHOLD_SECONDS": "inf"}, "must be a finite number", id="inf"
        ),
        pytest.param({}, {"CORRAL_LOCAL_ENGINES": "maybe"}, "boolean", id="bad boolean"),
        pytest.param(
            {"image": ":"},
            {},
            r"^engine image \(--image, \$CORRAL_ENGINE_IMAGE\): ':': invalid reference format",
            id="image flag not a reference",
        ),
        pytest.param(
            {},
            {"CORRAL_ENGINE_IMAGE": "Corral:1"},
            "'Corral:1': invalid reference format: repository name must be lowercase",
            id="image env uppercase",
        ),
        pytest.param({"webhook_listen": "9443"}, {}, "is not HOST:PORT", id="webhook no host"),
        pytest.param({"webhook_listen": ":0"}, {}, "is not HOST:PORT", id="webhook port 0"),
        pytest.param(
            {"webhook_listen": ":9443", "webhook_service": "ns/svc:https"},
            {},
            r"^webhook service: 'ns/svc:https' is not \[NAMESPACE/\]NAME\[:PORT\]$",
            id="webhook service port",
        ),
        pytest.param(
            {"webhook_listen": ":9443", "webhook_service": "a/b/c"},
            {},
            r"^webhook service: 'a/b/c' is not \[NAMESPACE/\]NAME\[:PORT\]$",
            id="webhook service two slashes",
        ),
        pytest.param(
            {"webhook_cert_secret": "/tls"},
            {},
            r"^webhook cert secret: '/tls' is not \[NAMESPACE/\]NAME$",
            id="cert secret empty namespace",
        ),
        pytest.param(
            {},
            {"CORRAL_WEBHOOK_SERVICE": "ns/svc"},
            "give the webhook listen address too",
            id="webhook service alone",
        ),
    ],
)
def test_errors(flags: dict[str, Any], env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        from_sources(flags, env)
