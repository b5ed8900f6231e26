"""A field of an API object read from its JSON that must itself be an object (``metadata``,
``spec``, ``status``): shared by the plugins' readers of scheduler-plugins' CRD kinds and the
operator's status controllers of the same kinds, which may both import ``scheduler.config``.

Contract: a missing or null field reads as empty; any other non-object value raises ``error``
(each reader's own type, so its callers catch what they did) naming the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def object_field(
    obj: Mapping[str, Any], key: str, error: type[Exception] = TypeError
) -> Mapping[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise error(f"{key}: must be an object")
    return value
