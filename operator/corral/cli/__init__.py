"""The ``corral`` command.

Each sub-command is a module in this package exposing ``register(subparsers)``, which adds its
parser and sets ``handler`` (a callable taking the parsed namespace and returning an exit code).
Errors a user can fix are reported as one readable message and exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from corral import __version__

# Sub-command modules, in the order `corral --help` lists them.
COMMANDS: tuple[str, ...] = ("render", "validate", "scheduler", "operator", "simulate")


class UsageError(Exception):
    """A problem with the user's input: printed as ``corral: <message>``, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="corral",
        description="Declarative custom Kubernetes schedulers.",
    )
    parser.add_argument("--version", action="version", version=f"corral {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"corral.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        code: int = handler(args)
    except UsageError as exc:
        print(f"corral: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return code
