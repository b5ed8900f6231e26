"""Field paths and the errors that carry them.

Contract: every problem found while decoding, defaulting or validating a configuration is a
:class:`FieldError` whose ``path`` names the offending field in the user's own document
(``profiles[0].plugins.filter.enabled[2].name``). Callers collect them all and raise one
:class:`ValidationError`, so a user sees every mistake at once, never a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class FieldPath:
    """An immutable path to a field: ``FieldPath.root("spec").child("plugins").index(0)``."""

    parts: tuple[str | int, ...] = ()

    @classmethod
    def root(cls, *names: str) -> FieldPath:
        return cls(tuple(names))

    def child(self, *names: str) -> FieldPath:
        return FieldPath(self.parts + names)

    def index(self, i: int) -> FieldPath:
        return FieldPath((*self.parts, i))

    def key(self, key: str) -> FieldPath:
        """A map key; rendered as ``[key]`` so dotted keys stay readable, a long one cut as an
        echoed value is (the error stays one readable line; it is then located at its map)."""
        return FieldPath((*self.parts, f"[{shown(key)}]"))

    def __str__(self) -> str:
        out = ""
        for part in self.parts:
            if isinstance(part, int):
                out += f"[{part}]"
            elif part.startswith("["):
                out += printable(part)
            else:
                out += f".{printable(part)}" if out else printable(part)
        return out or "<root>"


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem with one field; ``str()`` gives ``path: message``."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{printable(self.path)}: {printable(self.message)}"


def field_error(path: FieldPath, message: str) -> FieldError:
    return FieldError(str(path), message)


class ValidationError(ValueError):
    """A document that cannot be used; ``errors`` lists every problem with its field path."""

    def __init__(self, errors: Iterable[FieldError]) -> None:
        self.errors: tuple[FieldError, ...] = tuple(errors)
        super().__init__("\n".join(str(e) for e in self.errors) or "invalid")


def printable(text: str) -> str:
    """``text`` with every character that is not printable escaped (``\\n``, ``\\u2028``):
    an error stays one line whatever keys and values the user wrote."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


# A value echoed back is cut here: the message stays one readable line.
MAX_QUOTED = 120


def shown(text: str) -> str:
    """User text as a message names it (a kind, a map key): printable, long text cut."""
    cut = f"{text[:MAX_QUOTED]}... ({len(text)} characters)" if len(text) > MAX_QUOTED else text
    return printable(cut)


# Vowel letters read as a consonant ("a UserNamespace", "a Unicode name", "a one-off").
_CONSONANT_SOUND: Final = ("uni", "use", "usa", "uti", "ure", "eu", "one", "once")


def a_or_an(word: str) -> str:
    """``word`` after its indefinite article, as messages name a kind: "an ElasticQuota",
    "an Ingress", "a Deployment" (by its first letter's sound; shown as given)."""
    lower = word.lower()
    vowel = lower[:1] in ("a", "e", "i", "o", "u") and not lower.startswith(_CONSONANT_SOUND)
    return f"{'an' if vowel else 'a'} {word}"


def number_text(value: int | float) -> str:
    """A number as a message shows it: long integers cut (a 400-digit one stays readable)."""
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    return text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text)} digits)"


def quote(value: object) -> str:
    """Go-style ``%q`` quoting for values echoed back in messages (long ones are cut)."""
    text = number_text(value) if isinstance(value, int | float) else str(value)
    cut = text[:MAX_QUOTED] + "..." if len(text) > MAX_QUOTED else text
    return '"' + printable(cut.replace("\\", "\\\\").replace('"', '\\"')) + '"'


def suggest(name: str, candidates: Iterable[str]) -> str:
    """``; did you mean "X"?`` for the closest candidate (case-insensitive), or ``""``."""
    pool = {c.lower(): c for c in candidates}
    match = difflib.get_close_matches(name.lower(), list(pool), n=1, cutoff=0.6)
    return f"; did you mean {quote(pool[match[0]])}?" if match else ""
