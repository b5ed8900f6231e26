"""The ``corral`` command.

Each sub-command is a module in this package exposing ``register(subparsers)``, which adds its
parser and sets ``handler`` (a callable taking the parsed namespace and returning an exit code).
Errors a user can fix are reported as one readable line each and one of the exit codes of
:mod:`corral.cli.problems`, the same for every subcommand, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from corral import KUBERNETES_VERSION, __version__
from corral.cli.problems import (
    EXIT_BROKEN_PIPE,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_UNSCHEDULABLE,
    EXIT_USAGE,
    InvalidInput,
    UsageError,
)

__all__ = [
    "COMMANDS",
    "EXIT_BROKEN_PIPE",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_UNSCHEDULABLE",
    "EXIT_USAGE",
    "InvalidInput",
    "UsageError",
    "build_parser",
    "main",
]

# Sub-command modules, in the order `corral --help` lists them.
COMMANDS: tuple[str, ...] = (
    "render",
    "validate",
    "scheduler",
    "operator",
    "simulate",
    "explain",
    "shadow",
    "completion",
)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: when it names a sub-command, only that one is imported.

    Each sub-command's module imports what it runs on, and a process keeps what it imported:
    ``corral scheduler`` would otherwise carry the operator's kopf, cryptography and jinja2
    (about 14 MB of resident memory) for its whole life. ``--help``, no command or an unknown
    one get every sub-command, so usage and errors list them all."""
    chosen = _command_in(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="corral",
        description="Declarative custom Kubernetes schedulers.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"corral {__version__} (decides like kube-scheduler {KUBERNETES_VERSION})",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if chosen is None or name == chosen:
            importlib.import_module(f"corral.cli.{name}").register(subparsers)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The sub-command ``argv`` names: its first word that is not an option, if a known one.
    The top-level options (``--help``, ``--version``) take no value, so no option's value can
    be mistaken for it."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code: int = handler(args)
        sys.stdout.flush()  # here, so that a reader gone away is seen below, not at exit
    except BrokenPipeError:
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except UsageError as exc:
        print(f"corral: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except InvalidInput as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        return 130
    return code


def _drop_stdout() -> None:
    """The reader of stdout went away (``corral render | head``): what it did not read is
    dropped without a word, as a tool that SIGPIPE ends; stdout goes to /dev/null so that the
    interpreter's own flush at exit does not fail again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (tests capture it)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
