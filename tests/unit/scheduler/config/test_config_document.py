"""The document helpers shared by KubeSchedulerConfiguration and SchedulerProfile: the YAML
syntax error and the apiVersion/kind messages are the same for both, only the position differs."""

from __future__ import annotations

import pytest

from corral.api.parse import load_documents, parse_profile
from corral.scheduler.config import FieldError, ValidationError, decode_config, parse_yaml

BAD_YAML = "a: 1\nb: [unclosed\n"


def _errors(exc: pytest.ExceptionInfo[ValidationError]) -> list[str]:
    return [str(e) for e in exc.value.errors]


def test_yaml_syntax_error_positions() -> None:
    with pytest.raises(ValidationError) as config_exc:
        parse_yaml(BAD_YAML)
    with pytest.raises(ValidationError) as profile_exc:
        load_documents(BAD_YAML, "p.yaml")
    [config_err] = _errors(config_exc)
    [profile_err] = _errors(profile_exc)
    assert config_err.startswith("line 3, column 1: invalid YAML: ")
    assert profile_err.startswith("p.yaml:3:1: invalid YAML: ")
    assert config_err.split(": ", 1)[1] == profile_err.split(": ", 1)[1]


def test_empty_documents_are_dropped() -> None:
    assert load_documents("---\n---\na: 1\n") == [{"a": 1}]
    with pytest.raises(ValidationError, match="expected exactly one thing, found 0"):
        parse_yaml("---\n", "thing")


def test_type_meta_messages() -> None:
    _, config_errs = decode_config({"kind": "Other"})
    assert config_errs[:2] == [
        FieldError("apiVersion", 'required: must be "kubescheduler.config.k8s.io/v1"'),
        FieldError("kind", '"Other": must be "KubeSchedulerConfiguration"'),
    ]
    _, profile_errs = parse_profile({"apiVersion": "v1", "metadata": {"name": "a"}})
    assert profile_errs[:2] == [
        FieldError("apiVersion", '"v1": must be "corral.dev/v1alpha1"'),
        FieldError("kind", 'required: must be "SchedulerProfile"'),
    ]
