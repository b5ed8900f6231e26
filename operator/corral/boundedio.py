"""Bounded reading of user files: the size is capped before reading, and only regular files.

Contract: :func:`read_input` returns the bytes of a regular file, or of stdin for ``-``, or
raises :class:`InputError` with one line (``cannot read NAME: what``; ``too_large`` when the
size is the problem). It never blocks on a FIFO, a socket or a terminal device named as a
file, and never reads more than ``max_bytes + 1`` bytes:

- the file is opened non-blocking (opening a FIFO otherwise waits for a writer for ever), then
  ``fstat``-ed: anything but a regular file (FIFO, character or block device such as
  ``/dev/zero``, socket, directory) is refused before a byte is read;
- a regular file larger than ``max_bytes`` is refused from its size; one that grows while read
  (or a ``/proc`` file, whose size says 0) is cut at ``max_bytes + 1`` and refused;
- ``-`` reads stdin, which the user chose explicitly (a pipe is fine there), under the same cap.

Only the standard library: every layer may use it, like :mod:`corral.yamlload`.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import BinaryIO, Final

STDIN: Final = "-"
_KINDS: Final = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)
_CHUNK: Final = 1 << 16


class InputError(ValueError):
    """An input that was not read: ``where`` is the name as given, ``message`` says why."""

    def __init__(self, where: str, message: str, *, too_large: bool = False) -> None:
        super().__init__(f"cannot read {where}: {message}")
        self.where = where
        self.message = message
        self.too_large = too_large


def read_input(
    name: str, max_bytes: int, *, stdin: BinaryIO | None = None, allow_stdin: bool = True
) -> bytes:
    """The bytes of file ``name`` (or stdin for ``-``), at most ``max_bytes`` of them."""
    if name == STDIN and allow_stdin:
        if stdin is None and not hasattr(sys.stdin, "buffer"):  # a text stream put in its place
            return _capped(name, sys.stdin.read(max_bytes + 1).encode(), max_bytes)
        stream = stdin if stdin is not None else sys.stdin.buffer
        return _capped(name, stream.read(max_bytes + 1), max_bytes)
    try:  # stat first: opening a unix socket fails (ENXIO), and says nothing useful
        _check_regular(name, os.stat(name))
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(name, str(exc.strerror or exc)) from None
    try:
        info = os.fstat(fd)  # what was opened, if the name changed since the stat
        _check_regular(name, info)
        if info.st_size > max_bytes:
            raise InputError(name, _too_big(info.st_size, max_bytes), too_large=True)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            try:
                chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - size))
            except OSError as exc:
                raise InputError(name, str(exc.strerror or exc)) from None
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return _capped(name, b"".join(chunks), max_bytes)
    finally:
        os.close(fd)


def _check_regular(name: str, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = next((k for test, k in _KINDS if test(info.st_mode)), "")
        raise InputError(name, "not a regular file" + (f" ({kind})" if kind else ""))


def _capped(name: str, data: bytes, max_bytes: int) -> bytes:
    if len(data) > max_bytes:
        raise InputError(name, _too_big(None, max_bytes), too_large=True)
    return data


def _too_big(size: int | None, max_bytes: int) -> str:
    what = f"is {size} bytes" if size is not None else f"is more than {max_bytes} bytes"
    return f"{what}; at most {max_bytes} are read"
