"""Label selectors in their string form (``a=b,c in (d,e),!f``), checked as apimachinery's
``labels.Parse`` checks them, before a flag's selector is sent to the API server.

Contract: :func:`problems` returns why ``text`` is not a selector the API server takes (empty
when it is): the grammar (requirements separated by commas; ``KEY``, ``!KEY``, ``KEY=V``,
``KEY==V``, ``KEY!=V``, ``KEY>N``, ``KEY<N``, ``KEY in (V,...)``, ``KEY notin (V,...)``), label
keys as qualified names, values as label values, and integers for ``>`` and ``<``. An empty
string is the selector of everything. What is refused is said as apimachinery says it
closely enough to find the spot, not word for word.
"""

from __future__ import annotations

import re
from typing import Final

from corral.scheduler.config.errors import quote
from corral.scheduler.config.names import check_label_value, check_qualified_name

# One token: an operator, a bracket, a comma, or a run of other characters (a key or value).
_TOKEN: Final = re.compile(r"\s*(==|!=|=|!|>|<|\(|\)|,|[^\s!=<>(),]+)")
_SYMBOLS: Final = frozenset({"==", "!=", "=", "!", ">", "<", "(", ")", ","})


def problems(text: str) -> list[str]:
    try:
        tokens = _tokens(text)
        return _Parser(tokens).selector()
    except _RefusedError as exc:
        return [str(exc)]


class _RefusedError(ValueError):
    pass


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _TOKEN.match(text, at)
        if match is None:  # only whitespace is left unmatched, and that ended the loop
            raise _RefusedError(f"unexpected text at {at}: {quote(text[at:])}")
        out.append(match.group(1))
        at = match.end()
    return out


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self) -> str | None:
        token = self._peek()
        self.at += 1
        return token

    def selector(self) -> list[str]:
        found: list[str] = []
        if not self.tokens:
            return found
        while True:
            found += self._requirement()
            token = self._take()
            if token is None:
                return found
            if token != ",":
                raise _RefusedError(f"found {quote(token)}, expected: ',' or the end")

    def _requirement(self) -> list[str]:
        negated = self._peek() == "!"
        if negated:
            self._take()
        key = self._word("a label key")
        found = [f"key {quote(key)}: {m}" for m in check_qualified_name(key)]
        token = self._peek()
        if negated or token in (None, ","):
            return found  # KEY (exists) or !KEY (does not exist)
        op = self._take()
        if op in ("in", "notin"):
            return found + self._set(key)
        if op not in ("=", "==", "!=", ">", "<"):
            raise _RefusedError(
                f"found {quote(op)}, expected: in, notin, =, ==, !=, gt, lt after {quote(key)}"
            )
        value = self._peek()
        if value is None or value in _SYMBOLS:
            value = ""  # KEY= (an empty value) is allowed
        else:
            self._take()
        if op in (">", "<"):
            if not re.fullmatch(r"[+-]?[0-9]+", value):
                found.append(f"key {quote(key)}: for '{op}', {quote(value)} must be an integer")
            return found
        return found + [f"value {quote(value)}: {m}" for m in check_label_value(value)]

    def _set(self, key: str) -> list[str]:
        if self._take() != "(":
            raise _RefusedError(f"expected '(' after {quote(key)} in/notin")
        found: list[str] = []
        seen = 0
        while True:
            token = self._take()
            if token is None:
                raise _RefusedError(f"the values of {quote(key)} are not closed with ')'")
            if token == ")":
                if not seen and self.tokens[self.at - 2] == "(":
                    raise _RefusedError(
                        f"for 'in', 'notin', the values of {quote(key)} can't be empty"
                    )
                return found
            seen += 1
            if token == ",":
                continue
            if token in _SYMBOLS:
                raise _RefusedError(f"found {quote(token)} among the values of {quote(key)}")
            found += [f"value {quote(token)}: {m}" for m in check_label_value(token)]

    def _word(self, what: str) -> str:
        token = self._take()
        if token is None or token in _SYMBOLS:
            shown = "the end" if token is None else quote(token)
            raise _RefusedError(f"found {shown}, expected: {what}")
        return token
