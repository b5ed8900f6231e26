"""From a document to a valid, defaulted SchedulerProfile, or every reason why not."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from corral.api.catalog import Catalog
from corral.api.defaults import OperatorDefaults, apply_defaults
from corral.api.parse import load_documents, parse_profile
from corral.api.types import SchedulerProfile
from corral.api.validation import validate_profile
from corral.scheduler.config import FieldError, ValidationError


def check_profile(
    data: object,
    *,
    operator: OperatorDefaults | None = None,
    catalog: Catalog | None = None,
) -> tuple[SchedulerProfile | None, list[FieldError]]:
    """Parse, default and validate; the profile is ``None`` unless there are no errors.

    Every error at once: when a document fails to decode only at fields of objects (no error
    inside a list or a map), the rules still run on the document without those fields, and
    report what is not about a field that failed (its default would be judged, not the user's
    value). The rules only ever see a profile that decoded whole.
    """
    profile, errs = parse_profile(data)
    if profile is None or not errs:
        if profile is None:
            return None, errs
        defaulted = apply_defaults(profile, operator)
        rules = validate_profile(defaulted, catalog, allow_system_leases=_allows(operator))
        return (None, rules) if rules else (defaulted, [])
    pruned = _without(data, [e.path for e in errs])
    retry, again = parse_profile(pruned) if pruned is not None else (None, errs)
    if retry is None or again:
        return None, errs
    rules = validate_profile(
        apply_defaults(retry, operator), catalog, allow_system_leases=_allows(operator)
    )
    return None, errs + [e for e in rules if not any(_within(e.path, d.path) for d in errs)]


def _allows(operator: OperatorDefaults | None) -> bool:
    return operator is not None and operator.allow_system_leases


def _without(data: object, paths: list[str]) -> dict[str, Any] | None:
    """``data`` without the fields at ``paths`` (dotted object keys), or ``None`` when a path
    goes through a list or a map key."""
    if not isinstance(data, Mapping):
        return None
    out = copy.deepcopy(dict(data))
    for path in paths:
        if "[" in path or path == "<root>":
            return None
        *parents, leaf = path.split(".")
        node: Any = out
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(leaf, None)
    return out


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith((parent + ".", parent + "["))


def load_profile(
    data: object,
    *,
    operator: OperatorDefaults | None = None,
    catalog: Catalog | None = None,
) -> SchedulerProfile:
    """Like :func:`check_profile`, raising :class:`ValidationError` with every problem."""
    profile, errs = check_profile(data, operator=operator, catalog=catalog)
    if profile is None:
        raise ValidationError(errs)
    return profile


def load_profiles_text(
    text: str | bytes,
    source: str = "<input>",
    *,
    operator: OperatorDefaults | None = None,
    catalog: Catalog | None = None,
) -> list[SchedulerProfile]:
    """Every SchedulerProfile of a (multi-document) YAML text. Errors of document ``n`` (from 1)
    are prefixed ``<source>#n:`` when the text holds more than one document."""
    docs = load_documents(text, source)
    if not docs:
        raise ValidationError([FieldError(source, "contains no document")])
    profiles: list[SchedulerProfile] = []
    errs: list[FieldError] = []
    first: dict[tuple[str, str], int] = {}  # (field, value) -> the document that has it first
    for n, doc in enumerate(docs, start=1):
        profile, problems = check_profile(doc, operator=operator, catalog=catalog)
        prefix = f"#{n} " if len(docs) > 1 else ""
        errs += [FieldError(f"{prefix}{e.path}", e.message) for e in problems]
        if profile is None:
            continue
        profiles.append(profile)
        for path, value in (
            ("metadata.name", profile.name),
            ("spec.schedulerName", profile.spec.scheduler_name or ""),
        ):
            earlier = first.setdefault((path, value), n)
            if earlier != n:
                errs.append(
                    FieldError(
                        f"{prefix}{path}", f'duplicate "{value}": document #{earlier} has it'
                    )
                )
    if errs:
        raise ValidationError(errs)
    return profiles
