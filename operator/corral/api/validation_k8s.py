"""Checks of the Kubernetes-shaped parts of a profile: label selectors, node selectors,
tolerations, resource quantities, names.

Contract: each function returns field errors that say what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from corral.api.types import LabelSelector, ResourceRequirements, Toleration
from corral.scheduler.config import quantity
from corral.scheduler.config.errors import FieldError, FieldPath, field_error, quote
from corral.scheduler.config.names import check_label_value, check_qualified_name

SELECTOR_OPERATORS: Final = ("DoesNotExist", "Exists", "In", "NotIn")
TOLERATION_OPERATORS: Final = ("Equal", "Exists")
TAINT_EFFECTS: Final = ("NoExecute", "NoSchedule", "PreferNoSchedule")
_Errs = list[FieldError]


def check_name(path: FieldPath, value: str, checker: Any) -> _Errs:
    return [field_error(path, f"{quote(value)}: {m}") for m in checker(value)]


def check_labels(path: FieldPath, labels: Mapping[str, str]) -> _Errs:
    errs: _Errs = []
    for key, value in labels.items():
        errs += check_name(path.key(key), key, check_qualified_name)
        errs += check_name(path.key(key), value, check_label_value)
    return errs


def check_label_selector(path: FieldPath, sel: LabelSelector) -> _Errs:
    errs = check_labels(path.child("matchLabels"), sel.match_labels)
    for i, req in enumerate(sel.match_expressions):
        p = path.child("matchExpressions").index(i)
        errs += check_name(p.child("key"), req.key, check_qualified_name)
        if req.operator not in SELECTOR_OPERATORS:
            errs.append(
                field_error(
                    p.child("operator"),
                    f"{quote(req.operator)}: must be one of " + ", ".join(SELECTOR_OPERATORS),
                )
            )
        elif req.operator in ("In", "NotIn") and not req.values:
            errs.append(field_error(p.child("values"), f"required when operator is {req.operator}"))
        elif req.operator in ("Exists", "DoesNotExist") and req.values:
            errs.append(
                field_error(p.child("values"), f"must be empty when operator is {req.operator}")
            )
        for j, v in enumerate(req.values):
            errs += check_name(p.child("values").index(j), v, check_label_value)
    if not sel.match_labels and not sel.match_expressions:
        errs.append(
            field_error(
                path,
                "an empty selector matches every namespace; give matchLabels or matchExpressions",
            )
        )
    return errs


def check_tolerations(path: FieldPath, tolerations: list[Toleration]) -> _Errs:
    errs: _Errs = []
    for i, t in enumerate(tolerations):
        p = path.index(i)
        op = t.operator or "Equal"
        if op not in TOLERATION_OPERATORS:
            errs.append(field_error(p.child("operator"), f"{quote(op)}: must be Equal or Exists"))
        if t.key:
            errs += check_name(p.child("key"), t.key, check_qualified_name)
        elif op != "Exists":
            errs.append(field_error(p.child("operator"), "must be Exists when key is empty"))
        if op == "Exists" and t.value:
            errs.append(field_error(p.child("value"), "must be empty when operator is Exists"))
        if t.value:
            errs += check_name(p.child("value"), t.value, check_label_value)
        if t.effect and t.effect not in TAINT_EFFECTS:
            errs.append(
                field_error(
                    p.child("effect"),
                    f"{quote(t.effect)}: must be one of " + ", ".join(TAINT_EFFECTS),
                )
            )
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            errs.append(
                field_error(p.child("tolerationSeconds"), "only allowed with effect NoExecute")
            )
    return errs


def check_quantity(path: FieldPath, value: object) -> _Errs:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return [field_error(path, "must be a quantity such as 100m, 64Mi or 2")]
    text = str(value)
    try:
        quantity.parse(text if text == text.strip() else "?")  # the engine's grammar, untrimmed
    except quantity.QuantityError:
        return [field_error(path, f"{quote(text)}: must be a quantity such as 100m, 64Mi or 2")]
    if text.startswith("-"):
        return [field_error(path, f"{quote(text)}: must not be negative")]
    return []


def check_resources(path: FieldPath, res: ResourceRequirements) -> _Errs:
    errs: _Errs = []
    for kind, values in (("requests", res.requests), ("limits", res.limits)):
        for name, q in values.items():
            p = path.child(kind).key(name)
            errs += check_name(p, name, check_qualified_name)
            errs += check_quantity(p, q)
    return errs
