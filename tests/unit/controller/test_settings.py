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
        pytest.param({}, {"CORRAL_LOG_FORMAT": "json"}, "log_format", "json", id="json logs"),
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
        pytest.param({}, {"CORRAL_LOCAL_ENGINES": "maybe"}, "boolean", id="bad boolean"),
    ],
)
def test_errors(flags: dict[str, Any], env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        from_sources(flags, env)
