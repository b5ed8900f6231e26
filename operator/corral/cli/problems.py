"""One error line and one set of exit codes for every ``corral`` subcommand.

Contract: every problem a user can fix is printed to stderr as one line,
``source:line:col: path: message`` (``source`` alone when no position is known, no ``path``
when the problem is not about a field). The layers below raise their own errors, unchanged:
:class:`~corral.yamlload.YamlError` (a position, no path) and
:class:`~corral.scheduler.config.FieldError` (a field path, no position); :func:`located` joins
a field path to its position in the document it came from, found only when an error is reported.

Exit codes (documented in ``docs/cli.md``):

=====  ===============================================================================
0      everything asked for was done (every file valid, every pod placed)
1      invalid input: YAML, schema or validation errors, an empty input
2      usage: unknown flags, a file or directory that cannot be read, conflicting options
3      ``simulate`` only: some pod could not be placed (unschedulable, not served, no
       profile for its schedulerName, held by a PreEnqueue plugin, preempted)
=====  ===============================================================================
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from corral.scheduler.config import FieldError
from corral.scheduler.config.errors import printable
from corral.yamlload import YamlError, locate

EXIT_OK: Final = 0
EXIT_INVALID: Final = 1
EXIT_USAGE: Final = 2
EXIT_UNSCHEDULABLE: Final = 3
EXIT_BROKEN_PIPE: Final = 141  # 128 + SIGPIPE, as a tool the signal ends (`yes | head`)

SHOWN_SOURCE: Final = 160  # a longer source (a deep tree's path) is shown cut in the middle

# A FieldError path: dotted names, ``[n]`` indexes and ``[key]`` map keys.
_PART: Final = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")


@dataclass(frozen=True, slots=True)
class Problem:
    source: str
    message: str
    path: str = ""
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        source = shown_source(self.source)
        where = source if self.line is None else f"{source}:{self.line}:{self.column}"
        what = printable(self.message)
        return f"{where}: {printable(self.path)}: {what}" if self.path else f"{where}: {what}"


def shown_source(name: str) -> str:
    """``name`` as one line of readable length: a deep tree's path is cut in the middle, with
    its depth, so that every message about it stays one line (machine output keeps it whole)."""
    if len(name) <= SHOWN_SOURCE:
        return name
    keep = SHOWN_SOURCE // 2 - 10
    return f"{name[:keep]}...({name.count(os.sep) + 1} levels)...{name[-keep:]}"


class UsageError(Exception):
    """A problem with the command line: printed as ``corral: <message>``, exit code 2."""


class InvalidInput(Exception):  # noqa: N818 - named for what the user gave, like UsageError
    """Input that was read but cannot be used: every problem is printed, exit code 1."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def path_parts(path: str) -> list[str | int]:
    """``spec.plugins.filter.enabled[0].name`` -> ``["spec", ..., "enabled", 0, "name"]``."""
    if path in ("", "<root>"):
        return []
    parts: list[str | int] = []
    for match in _PART.finditer(path):
        bracket, name = match.groups()
        if name is not None:
            parts.append(name)
        elif bracket is not None and bracket.isdigit():
            parts.append(int(bracket))
        elif bracket is not None:
            parts.append(bracket)
    return parts


def from_yaml(exc: YamlError) -> Problem:
    return Problem(exc.source, exc.message, line=exc.line, column=exc.column)


def located(
    source: str,
    text: str | bytes,
    document: int,
    errors: Iterable[FieldError],
    *,
    prefix: Sequence[str | int] = (),
) -> list[Problem]:
    """Each error of the ``document``-th document (from 0) of ``text`` at its position.
    ``prefix``: where the validated object sits in that document (``items[3]`` of a List)."""
    errors = list(errors)
    positions = locate(text, document, [[*prefix, *path_parts(e.path)] for e in errors])
    out = []
    for err, at in zip(errors, positions, strict=True):
        path = "" if err.path == "<root>" else err.path
        line, column = at if at is not None else (None, None)
        out.append(Problem(source, err.message, path, line, column))
    return out
