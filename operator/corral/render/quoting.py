"""Quoting values for YAML templates.

Contract: :func:`tojson` turns any JSON-shaped value into one line of text that is valid YAML
(1.1 and 1.2) — and valid JSON too, except for non-finite floats and map keys over 1000
characters, which take YAML's own forms — and parses back to exactly the same value,
whatever the strings hold: quotes, newlines, ``{{ }}``, ``&anchors``, ``!!tags``, non-ASCII,
control characters.
Templates pass every value through it, so no user string is ever spliced into YAML unquoted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Final

# Characters YAML forbids raw in a stream (outside its printable set); JSON leaves some of them
# unescaped, so they are escaped here as \uXXXX, which both languages read the same way.
_YAML_PRINTABLE_EXTRA: Final = frozenset("\t\n\r")


def _needs_escape(ch: str) -> bool:
    code = ord(ch)
    if ch in _YAML_PRINTABLE_EXTRA:
        return False
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return True
    if 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
        return True
    # U+2028/2029 and the BOM are printable to YAML, but escaping them keeps output readable.
    return code in (0x2028, 0x2029, 0xFEFF)


def _string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    if not any(_needs_escape(c) for c in encoded):
        return encoded
    return "".join(f"\\u{ord(c):04x}" if _needs_escape(c) else c for c in encoded)


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    # YAML 1.1 reads "1e-05" as a string: its floats need a dot in the mantissa.
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent if exponent[0] in '+-' else '+' + exponent}"
    return text


# YAML limits implicit keys to 1024 characters; longer ones need the explicit "? " form.
_MAX_IMPLICIT_KEY: Final = 1000


def _key(text: str) -> str:
    quoted = _string(text)
    return f"? {quoted} " if len(quoted) > _MAX_IMPLICIT_KEY else quoted


def tojson(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        items = ", ".join(f"{_key(str(k))}: {tojson(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(tojson(v) for v in value) + "]"
    raise TypeError(f"cannot quote a {type(value).__name__} for YAML")
