"""``corral validate -f FILE...``: check SchedulerProfiles offline, listing every error.

A profile is valid when it passes the profile's own checks and the engine it renders to would
start (:func:`corral.scheduler.engine.preflight.check_startable`): a valid profile always starts.

Exit codes: 0 all valid, 1 some file invalid (each error printed as ``FILE: path: message``),
2 usage problems (a file that cannot be read).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from corral.api import SchedulerProfile, ValidationError, default_catalog, load_profiles_text
from corral.api.scheduler_config import scheduler_config_data
from corral.cli import UsageError
from corral.scheduler.config import FieldError
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.engine.preflight import check_startable


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check SchedulerProfile files offline",
        description="Check SchedulerProfile files without a cluster; print every error with "
        "its field path. Exit 1 if any file is invalid.",
    )
    parser.add_argument(
        "-f",
        "--filename",
        dest="files",
        action="append",
        required=True,
        metavar="FILE",
        help="a SchedulerProfile YAML file ('-' for stdin); repeat for several; a file may "
        "hold several documents",
    )
    parser.set_defaults(handler=run)


def read_source(name: str) -> str:
    """The text of a file or of stdin (``-``); unreadable input is a :class:`UsageError`."""
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {name}: {exc}") from None


# Where the rendered KubeSchedulerConfiguration's fields come from in the profile.
_PROFILE_PATHS = (("profiles[0].", "spec."), ("extenders", "spec.extenders"),
                  ("leaderElection", "spec.leaderElection"), ("", "spec."))  # fmt: skip


def _profile_path(config_path: str) -> str:
    for prefix, replacement in _PROFILE_PATHS:
        if config_path.startswith(prefix):
            return replacement + config_path[len(prefix) :]
    return config_path


def startable(profiles: list[SchedulerProfile]) -> None:
    """Raise the engine's start-up errors of each profile, with the profile's field paths."""
    errors: list[FieldError] = []
    for n, profile in enumerate(profiles, start=1):
        prefix = f"#{n} " if len(profiles) > 1 else ""
        try:
            check_startable(load_engine_config(scheduler_config_data(profile)))
        except ValidationError as exc:
            errors += [FieldError(prefix + _profile_path(e.path), e.message) for e in exc.errors]
    if errors:
        raise ValidationError(errors)


def run(args: argparse.Namespace) -> int:
    catalog = default_catalog()
    for problem in catalog.problems:
        print(f"warning: {problem}", file=sys.stderr)
    failed = 0
    for name in args.files:
        source = "<stdin>" if name == "-" else name
        try:
            profiles = load_profiles_text(read_source(name), source, catalog=catalog)
            startable(profiles)
        except ValidationError as exc:
            failed += 1
            for err in exc.errors:
                print(f"{source}: {err}", file=sys.stderr)
            continue
        names = ", ".join(p.name for p in profiles)
        print(f"{source}: valid ({names})")
    return 1 if failed else 0
