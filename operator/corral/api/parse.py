"""Parsing SchedulerProfile documents into the typed model.

Contract: :func:`parse_profile` never raises; it returns the profile (``None`` when the document
is not usable at all; with decoding problems, the parts that decoded, a field of the wrong type
left unset) and every decoding problem with its field path. Server-populated metadata
(resourceVersion, managedFields, ...) and ``status`` are ignored, so a profile fetched from a
cluster parses as well as one from a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from corral.api.types import API_VERSION, KIND, ObjectMeta, SchedulerProfile, SchedulerProfileSpec
from corral.scheduler.config import FieldError, FieldPath
from corral.scheduler.config.decode import decode
from corral.scheduler.config.document import type_meta_errors, yaml_documents
from corral.scheduler.config.errors import field_error

_META_KEYS: Final = ("name", "uid", "labels", "annotations")
_TOP_KEYS: Final = ("apiVersion", "kind", "metadata", "spec", "status")


def parse_profile(data: object) -> tuple[SchedulerProfile | None, list[FieldError]]:
    if not isinstance(data, Mapping):
        return None, [FieldError("<root>", "must be an object (a SchedulerProfile)")]
    errs = type_meta_errors(data, API_VERSION, KIND)
    for key in data:
        if key not in _TOP_KEYS:
            errs.append(
                field_error(
                    FieldPath.root(str(key)),
                    "unknown field; allowed fields: " + ", ".join(_TOP_KEYS),
                )
            )
    raw_meta = data.get("metadata")
    if not isinstance(raw_meta, Mapping):
        errs.append(
            field_error(FieldPath.root("metadata"), "required: an object with at least a name")
        )
        return None, errs
    meta = decode(
        ObjectMeta,
        {k: v for k, v in raw_meta.items() if k in _META_KEYS},
        FieldPath.root("metadata"),
        errs,
    )
    if raw_meta.get("namespace"):
        # The API server drops it silently (the kind is cluster-scoped); say so offline.
        errs.append(
            field_error(
                FieldPath.root("metadata").child("namespace"),
                f"{raw_meta['namespace']!r}: a SchedulerProfile is cluster-scoped and belongs to "
                "no namespace; spec.namespace says where its scheduler runs",
            )
        )
    spec_data: Any = data.get("spec")
    if spec_data is None:  # the CRD requires it (kubectl apply drops a null one)
        errs.append(field_error(FieldPath.root("spec"), "required: an object (it may be {})"))
    spec = decode(
        SchedulerProfileSpec, {} if spec_data is None else spec_data, FieldPath.root("spec"), errs
    )
    if meta is None or spec is None:
        return None, errs
    return SchedulerProfile(metadata=meta, spec=spec), errs


def load_documents(text: str | bytes, source: str = "<input>") -> list[Any]:
    """Every non-empty YAML document; syntax errors become a :class:`ValidationError`."""
    return yaml_documents(text, lambda line, col: f"{source}:{line}:{col}", source)
