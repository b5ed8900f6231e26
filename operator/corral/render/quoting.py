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
import re
from collections.abc import Mapping
from typing import Final

# Characters YAML forbids raw in a stream (outside its printable set: C0 controls but tab, LF
# and CR, DEL, C1 controls, surrogates, U+FFFE/FFFF); JSON leaves some of them unescaped, so
# they are escaped here as \uXXXX, which both languages read the same way. U+2028/2029 and the
# BOM are printable to YAML, but escaping them keeps output readable. One regular expression,
# not a test per character: every rendered string passes through here (the operator renders on
# every profile change).
_NEEDS_ESCAPE: Final = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u2028\u2029\ufeff]"
)


def _string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    if _NEEDS_ESCAPE.search(encoded) is None:
        return encoded
    return _NEEDS_ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)


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
