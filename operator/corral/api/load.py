"""From a document to a valid, defaulted SchedulerProfile, or every reason why not."""

from __future__ import annotations

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
    """Parse, default and validate; the profile is ``None`` unless there are no errors."""
    profile, errs = parse_profile(data)
    if profile is None or errs:
        return None, errs
    defaulted = apply_defaults(profile, operator)
    errs = validate_profile(defaulted, catalog)
    return (None, errs) if errs else (defaulted, [])


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
