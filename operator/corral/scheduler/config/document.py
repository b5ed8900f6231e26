"""What every typed Kubernetes-style document shares: YAML text and its apiVersion/kind header.

Contract: both helpers report problems as :class:`FieldError` values with the same messages for
every document type (KubeSchedulerConfiguration here, SchedulerProfile in ``corral.api``); only
the caller's wording of where a YAML syntax error stands differs, so that is a parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from corral.scheduler.config.errors import (
    FieldError,
    FieldPath,
    ValidationError,
    field_error,
    quote,
)
from corral.yamlload import YamlError, load_all


def yaml_documents(
    text: str | bytes, position: Callable[[int, int], str], unplaced: str
) -> list[Any]:
    """Every non-empty YAML document of ``text``, loaded within :mod:`corral.yamlload`'s bounds.

    Unusable YAML raises :class:`ValidationError` with one ``invalid YAML`` error (or a bound
    exceeded) whose path is ``position(line, column)`` (both counted from 1), or ``unplaced``
    when YAML gives no position.
    """
    try:
        return load_all(text, unplaced)
    except YamlError as exc:
        path = unplaced if exc.line is None else position(exc.line, exc.column or 0)
        raise ValidationError([FieldError(path, exc.message)]) from None


def type_meta_errors(data: Mapping[Any, Any], api_version: str, kind: str) -> list[FieldError]:
    """The errors of a document's ``apiVersion`` and ``kind`` (apiVersion first; none if both
    are the expected values). A missing field is "required", a wrong one is echoed back."""
    errs: list[FieldError] = []
    if data.get("apiVersion") != api_version:
        errs.append(
            field_error(
                FieldPath.root("apiVersion"),
                _got(data.get("apiVersion")) + f"must be {quote(api_version)}",
            )
        )
    if data.get("kind") != kind:
        errs.append(
            field_error(FieldPath.root("kind"), _got(data.get("kind")) + f"must be {quote(kind)}")
        )
    return errs


def _got(value: object) -> str:
    return "required: " if value is None else f"{quote(value)}: "
