"""Structured fields on the engine's log lines (upstream's klog key/value pairs).

Contract: a line that names a pod, a node or a reason logs its message alone and the values in
``extra={FIELDS: {...}}`` (:func:`fields`). ``corral scheduler``'s formatters render them: the
text format appends them klog-style (``pod="ns/name" node="n" evaluatedNodes=3``, what upstream
prints and what people grep), the JSON format puts each at the top level of the line's object.
"""

from __future__ import annotations

from typing import Any, Final

FIELDS: Final = "corral_fields"


def fields(**values: object) -> dict[str, Any]:
    """``log.info(msg, extra=fields(pod=..., node=...))``; keys in the order given."""
    return {FIELDS: values}


def klog(values: dict[str, object]) -> str:
    """`` key="value"`` pairs, strings quoted (and escaped) as klog's text format, numbers bare."""
    out = []
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            out.append(f'{key}="{text}"')
        else:
            out.append(f"{key}={value}")
    return (" " + " ".join(out)) if out else ""
