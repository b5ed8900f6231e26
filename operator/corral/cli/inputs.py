"""The ``-f`` inputs of every subcommand, as kubectl reads them.

Contract: ``-f`` is repeatable; ``-f -`` is stdin (at most once); a directory stands for its
``.yaml``, ``.yml`` and ``.json`` files in name order (``-R``: its subdirectories too, depth
first). Only regular files and stdin are read, and never more than ``max_bytes`` of one (the
size is checked before reading): a name that cannot be read is a :class:`UsageError` (exit 2),
YAML that cannot be loaded an :class:`InvalidInput` listing every file's problem (exit 1).
A ``kind: List`` document stands for its items, each a :class:`Document` of its own that
reports its errors under ``items[i]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from corral.boundedio import InputError, read_input
from corral.cli.problems import InvalidInput, Problem, UsageError, from_yaml, located
from corral.scheduler.config import FieldError
from corral.yamlload import MAX_BYTES, YamlError, load_all

SUFFIXES: Final = (".yaml", ".yml", ".json")
STDIN: Final = "-"


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
        where = self.source.name if self.count == 1 else f"{self.source.name}#{self.index + 1}"
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
        return p.source if p.line is None else f"{p.source}:{p.line}:{p.column}"


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
    """The files ``names`` stand for (directories expanded), in order."""
    if sum(1 for n in names if n == STDIN) > 1:
        raise UsageError("-f -: stdin can be read only once")
    out: list[str] = []
    for name in names:
        if name == STDIN or not _is_dir(Path(name), follow=True):
            out.append(name)
            continue
        out += _directory(Path(name), recursive)
    return out


def _is_dir(path: Path, *, follow: bool) -> bool:
    """Whether ``path`` is a directory; one that cannot be looked at is a usage error."""
    try:
        return (follow or not path.is_symlink()) and path.is_dir()
    except OSError as exc:  # is_dir() passes on EACCES (a /proc entry's, even for root)
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def _directory(root: Path, recursive: bool) -> list[str]:
    """The files of ``root`` with a known suffix; with ``recursive`` those of its directories
    too, not of symlinked ones (as kubectl's ``-R``: a link to ``..`` would loop)."""
    found: list[str] = []
    try:
        entries = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise UsageError(f"cannot read {root}: {exc.strerror or exc}") from None
    for entry in entries:
        if entry.suffix not in SUFFIXES and not recursive:
            continue
        if _is_dir(entry, follow=False):
            if recursive:
                found += _directory(entry, recursive)
        elif entry.suffix in SUFFIXES:
            found.append(str(entry))
    return found


def read(name: str, *, max_bytes: int = MAX_BYTES) -> Source:
    """The bytes of a regular file or stdin, refused beyond ``max_bytes`` before they are read
    (``-f /dev/zero`` or a FIFO never blocks or fills memory): :func:`corral.boundedio.
    read_input`, the one bounded reader of user files."""
    try:
        data = read_input(name, max_bytes)
    except InputError as exc:
        if exc.too_large:
            raise InvalidInput([Problem(shown(name), exc.message)]) from None
        raise UsageError(str(exc)) from None
    return Source(shown(name), data)


def documents(
    names: Sequence[str], *, recursive: bool = False, max_bytes: int = MAX_BYTES
) -> list[Document]:
    """Every object of the inputs, in order; raises :class:`InvalidInput` with every file's
    YAML problem (each file is read in full first, so one bad file hides no other's)."""
    out: list[Document] = []
    problems: list[Problem] = []
    for name in expand(names, recursive=recursive):
        source = read(name, max_bytes=max_bytes)
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


def shown(name: str) -> str:
    """A file name as messages print it."""
    return "<stdin>" if name == STDIN else name


def empty(files: Sequence[str], docs: Sequence[Document]) -> list[str]:
    """The files (as :func:`expand` gives them) that hold no document: kubectl refuses them
    ("no objects passed"), and so does every subcommand."""
    used = {d.source.name for d in docs}
    return [shown(f) for f in files if shown(f) not in used]
