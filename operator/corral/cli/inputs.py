"""The ``-f`` inputs of every subcommand, as kubectl reads them.

Contract: ``-f`` is repeatable; ``-f -`` is stdin (at most once); a directory stands for its
``.yaml``, ``.yml`` and ``.json`` files in name order (``-R``: its subdirectories too, depth
first; the walk is iterative, so no depth is too deep, and symlinked directories are not
followed, so no link loops). Only regular files and stdin are read, and never more than
``max_bytes`` of one (the size is checked before reading) nor ``max_total`` bytes of all the
inputs of one call, nor more than :data:`MAX_FILES` files or :data:`MAX_ENTRIES` directory
entries looked at: a name that cannot be read is a :class:`UsageError` (exit 2), input past a
bound or YAML that cannot be loaded an :class:`InvalidInput` listing every file's problem
(exit 1), each one line.
A ``kind: List`` document stands for its items, each a :class:`Document` of its own that
reports its errors under ``items[i]``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from corral.boundedio import InputError, read_input
from corral.cli.problems import (
    InvalidInput,
    Problem,
    UsageError,
    from_yaml,
    located,
    shown_source,
)
from corral.scheduler.config import FieldError
from corral.yamlload import MAX_BYTES, YamlError, load_all

SUFFIXES: Final = (".yaml", ".yml", ".json")
STDIN: Final = "-"
# Bounds over all the -f inputs of one call (one file is bounded by max_bytes): a directory of
# many large files is refused before it fills memory or takes minutes to load.
MAX_TOTAL_BYTES: Final = 4 * MAX_BYTES
MAX_FILES: Final = 10_000  # the files the -f names stand for
MAX_ENTRIES: Final = 200_000  # directory entries looked at under the -f directories


@dataclass(frozen=True, slots=True)
class Source:
    name: str  # as messages print it: the path given, or <stdin>
    text: bytes


@dataclass(frozen=True, slots=True)
class Document:
    """One object of the input: the ``index``-th non-empty document of ``source`` (from 0), or
    item ``item`` of that document when it is a List."""

    source: Source
    index: int
    data: Any
    count: int  # documents in the source, to say "#n" only when there are several
    item: int | None = None

    @property
    def label(self) -> str:
        """``file``, ``file#2`` (the second document) or ``file#2 items[3]``."""
        name = shown_source(self.source.name)
        where = name if self.count == 1 else f"{name}#{self.index + 1}"
        return where if self.item is None else f"{where} items[{self.item}]"

    @property
    def kind(self) -> str:
        kind = self.data.get("kind") if isinstance(self.data, Mapping) else None
        return kind if isinstance(kind, str) else ""

    @property
    def name(self) -> str:
        meta = self.data.get("metadata") if isinstance(self.data, Mapping) else None
        name = meta.get("name") if isinstance(meta, Mapping) else None
        return name if isinstance(name, str) else ""

    def problems(self, errors: Iterable[FieldError]) -> list[Problem]:
        prefix: list[str | int] = [] if self.item is None else ["items", self.item]
        return located(self.source.name, self.source.text, self.index, errors, prefix=prefix)

    def problem(self, message: str, path: str = "") -> Problem:
        return self.problems([FieldError(path or "<root>", message)])[0]

    @property
    def position(self) -> str:
        """``source:line:col`` of the document's first line (of its item, in a List)."""
        p = self.problem("")
        where = shown_source(p.source)
        return where if p.line is None else f"{where}:{p.line}:{p.column}"


def add_file_arguments(
    parser: argparse.ArgumentParser, what: str, *, required: bool = True
) -> None:
    """``-f`` (repeatable) and ``-R``, as kubectl's."""
    parser.add_argument(
        "-f",
        "--filename",
        dest="files",
        action="append",
        required=required,
        default=None if required else [],
        metavar="FILE",
        help=f"{what}: a file, a directory (its .yaml, .yml and .json files) or '-' for "
        "stdin; repeatable; a file may hold several documents and kind: List",
    )
    parser.add_argument(
        "-R",
        "--recursive",
        action="store_true",
        help="with -f DIR, read its subdirectories too",
    )


def expand(names: Sequence[str], *, recursive: bool = False) -> list[str]:
    """The files ``names`` stand for (directories expanded), in order; :class:`InvalidInput`
    past :data:`MAX_FILES` files or :data:`MAX_ENTRIES` directory entries."""
    if sum(1 for n in names if n == STDIN) > 1:
        raise UsageError("-f -: stdin can be read only once")
    out: list[str] = []
    walk = _Walk()
    for name in names:
        if name == STDIN or not _is_dir(Path(name), follow=True):
            out.append(name)
        else:
            out += walk.directory(name, Path(name), recursive)
        if len(out) > MAX_FILES:
            raise InvalidInput(
                [Problem(name, f"more than {MAX_FILES} files; at most {MAX_FILES} are read")]
            )
    return out


def _is_dir(path: Path, *, follow: bool) -> bool:
    """Whether ``path`` is a directory; one that cannot be looked at is a usage error."""
    try:
        return (follow or not path.is_symlink()) and path.is_dir()
    except OSError as exc:  # is_dir() passes on EACCES (a /proc entry's, even for root)
        raise UsageError(f"cannot read {shown_source(str(path))}: {exc.strerror or exc}") from None


class _Walk:
    """The directories of one :func:`expand`, and the entries looked at in all of them."""

    def __init__(self) -> None:
        self.entries = 0

    def directory(self, given: str, root: Path, recursive: bool) -> list[str]:
        """The files of ``root`` with a known suffix, in name order; with ``recursive`` those
        of its directories too, depth first, not of symlinked ones (as kubectl's ``-R``: a
        link to ``..`` would loop). Iterative: a tree 1,000 levels deep is no RecursionError."""
        found: list[str] = []
        stack = [iter(self._entries(given, str(root)))]
        while stack:
            entry = next(stack[-1], None)
            if entry is None:
                stack.pop()
                continue
            suffix = os.path.splitext(entry.name)[1]
            if suffix not in SUFFIXES and not recursive:
                continue
            if _entry_is_dir(entry):
                if recursive:
                    stack.append(iter(self._entries(given, entry.path)))
            elif suffix in SUFFIXES:
                found.append(entry.path)
                if len(found) > MAX_FILES:
                    break  # expand() says so
        return found

    def _entries(self, given: str, path: str) -> list[os.DirEntry[str]]:
        out: list[os.DirEntry[str]] = []
        try:
            with os.scandir(path) as listing:
                for entry in listing:
                    self.entries += 1
                    if self.entries > MAX_ENTRIES:
                        what = f"more than {MAX_ENTRIES} directory entries; at most"
                        what += f" {MAX_ENTRIES} are looked at"
                        raise InvalidInput([Problem(given, what)])
                    out.append(entry)
        except OSError as exc:
            raise UsageError(f"cannot read {shown_source(path)}: {exc.strerror or exc}") from None
        out.sort(key=lambda e: e.name)
        return out


def _entry_is_dir(entry: os.DirEntry[str]) -> bool:
    """A directory, not a link to one; one that cannot be looked at is a usage error."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError as exc:
        raise UsageError(f"cannot read {shown_source(entry.path)}: {exc.strerror or exc}") from None


def read(name: str, *, max_bytes: int = MAX_BYTES) -> Source:
    """The bytes of a regular file or stdin, refused beyond ``max_bytes`` before they are read
    (``-f /dev/zero`` or a FIFO never blocks or fills memory): :func:`corral.boundedio.
    read_input`, the one bounded reader of user files."""
    try:
        data = read_input(name, max_bytes)
    except InputError as exc:
        if exc.too_large:
            raise InvalidInput([Problem(shown(name), exc.message)]) from None
        raise UsageError(f"cannot read {shown_source(exc.where)}: {exc.message}") from None
    return Source(shown(name), data)


def documents(
    names: Sequence[str],
    *,
    recursive: bool = False,
    max_bytes: int = MAX_BYTES,
    max_total: int = MAX_TOTAL_BYTES,
) -> list[Document]:
    """Every object of the inputs, in order; raises :class:`InvalidInput` with every file's
    YAML problem (each file is read in full first, so one bad file hides no other's), and
    once the files read come to more than ``max_total`` bytes (before that file is loaded)."""
    out: list[Document] = []
    problems: list[Problem] = []
    files = expand(names, recursive=recursive)
    _check_total(files, max_total)  # from the sizes, before a byte is read or loaded
    total = 0
    for name in files:
        source = read(name, max_bytes=max_bytes)
        total += len(source.text)  # stdin, or a file that grew since
        if total > max_total:
            raise InvalidInput([*problems, Problem(source.name, _over_total(max_total))])
        try:
            loaded = load_all(source.text, source.name, max_bytes=max_bytes)
        except YamlError as exc:
            problems.append(from_yaml(exc))
            continue
        for index, data in enumerate(loaded):
            doc = Document(source, index, data, len(loaded))
            items = data.get("items") if isinstance(data, Mapping) else None
            if doc.kind != "List" or not isinstance(items, list):
                out.append(doc)
                continue
            out += [Document(source, index, item, len(loaded), i) for i, item in enumerate(items)]
    if problems:
        raise InvalidInput(problems)
    return out


def _check_total(files: Sequence[str], max_total: int) -> None:
    total = 0
    for name in files:
        try:
            total += os.stat(name).st_size if name != STDIN else 0
        except OSError:
            continue  # read() says why
        if total > max_total:
            raise InvalidInput([Problem(name, _over_total(max_total))])


def _over_total(max_total: int) -> str:
    return f"the inputs are more than {max_total} bytes in all; at most {max_total} are read"


def shown(name: str) -> str:
    """A file name as messages print it."""
    return "<stdin>" if name == STDIN else name


def empty(files: Sequence[str], docs: Sequence[Document]) -> list[str]:
    """The files (as :func:`expand` gives them) that hold no document: kubectl refuses them
    ("no objects passed"), and so does every subcommand."""
    used = {d.source.name for d in docs}
    return [shown(f) for f in files if shown(f) not in used]
