"""``corral validate -f FILE|DIR...``: check SchedulerProfiles and KubeSchedulerConfigurations
offline, listing every error at once.

A document is valid when it passes its own checks and the engine it configures would start
(:func:`corral.scheduler.engine.preflight.check_startable`): a valid profile always starts. A
``schedulerName`` (or profile name) taken twice anywhere in the input is refused on the later
document, as the operator would stall the later profile. Documents of other kinds are skipped
with one line each (``corral render | corral validate -f -`` checks the profiles among the
objects). Errors are ``source:line:col: path: message``; exit codes as every subcommand
(:mod:`corral.cli.problems`): 0 all valid, 1 invalid input, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from corral.api import Catalog, SchedulerProfile, ValidationError, check_profile, default_catalog
from corral.api.scheduler_config import scheduler_config_data
from corral.cli import inputs
from corral.cli.problems import EXIT_INVALID, EXIT_OK, Problem
from corral.render import dump_yaml
from corral.scheduler.config import FieldError
from corral.scheduler.config.errors import a_or_an, quote, shown, suggest
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.engine.preflight import check_startable

PROFILE: Final = "SchedulerProfile"
CONFIG: Final = "KubeSchedulerConfiguration"
_GROUPS: Final = {PROFILE: "corral.dev/", CONFIG: "kubescheduler.config.k8s.io/"}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check SchedulerProfiles and KubeSchedulerConfigurations offline",
        description="Check SchedulerProfile and KubeSchedulerConfiguration documents without a "
        "cluster; print every error as source:line:col: path: message. Other kinds are "
        "skipped. Exit 0 all valid, 1 invalid input, 2 usage.",
    )
    inputs.add_file_arguments(parser, "SchedulerProfile or KubeSchedulerConfiguration YAML")
    parser.add_argument(
        "-o",
        "--output",
        choices=("text", "json", "yaml"),
        default="text",
        help="text (default): one line per document and per error; json or yaml: one report "
        "on stdout (docs/cli.md has its schema)",
    )
    parser.set_defaults(handler=run)


@dataclass
class Verdict:
    """What ``validate`` found about one document."""

    doc: inputs.Document
    kind: str  # SchedulerProfile, KubeSchedulerConfiguration, or the kind it skipped
    names: list[str] = field(default_factory=list)  # scheduler names it declares
    problems: list[Problem] = field(default_factory=list)
    skipped: bool = False

    def report(self) -> dict[str, Any]:
        return {
            "source": self.doc.source.name,
            "document": self.doc.index + 1,
            **({"item": self.doc.item} if self.doc.item is not None else {}),
            "kind": self.kind,
            "name": self.doc.name,
            "schedulerNames": self.names,
            "result": "skipped" if self.skipped else "invalid" if self.problems else "valid",
            "problems": [
                {
                    "source": p.source,
                    "line": p.line,
                    "column": p.column,
                    "path": p.path,
                    "message": p.message,
                }
                for p in self.problems
            ],
        }


def kind_of(doc: inputs.Document) -> str | None:
    """Which of the two kinds ``validate`` owns a document is meant to be (a misspelt kind and
    a kind-less document count, so that their errors are shown), or ``None``."""
    data = doc.data
    if not isinstance(data, Mapping):
        return PROFILE
    kind, api = data.get("kind"), data.get("apiVersion")
    if kind is None and api is None:
        return PROFILE
    for name, group in _GROUPS.items():
        if kind == name or (isinstance(api, str) and api.startswith(group)):
            return name
    if isinstance(kind, str) and suggest(kind, _GROUPS):
        return next(n for n in _GROUPS if suggest(kind, [n]))
    return None


# Where the rendered KubeSchedulerConfiguration's fields come from in the profile.
_PROFILE_PATHS = (("profiles[0].", "spec."), ("extenders", "spec.extenders"),
                  ("leaderElection", "spec.leaderElection"), ("", "spec."))  # fmt: skip


def _profile_path(config_path: str) -> str:
    for prefix, replacement in _PROFILE_PATHS:
        if config_path.startswith(prefix):
            return replacement + config_path[len(prefix) :]
    return config_path


def startable(profile: SchedulerProfile) -> list[FieldError]:
    """The engine's start-up errors for a profile, with the profile's field paths."""
    try:
        # The tlsSecretRef Secrets are mounted only in the scheduler's pods: their files are
        # checked there, at start (the rest of each extender's TLS settings here).
        config = scheduler_config_data(profile, mounted=False)
        check_startable(load_engine_config(config, profile.gates))
    except ValidationError as exc:
        return [FieldError(_profile_path(e.path), e.message) for e in exc.errors]
    return []


def check(doc: inputs.Document, catalog: Catalog) -> Verdict:
    kind = kind_of(doc)
    if kind is None:
        return Verdict(doc, doc.kind or "<no kind>", skipped=True)
    verdict = Verdict(doc, kind)
    errors: list[FieldError]
    if kind == PROFILE:
        profile, errors = check_profile(doc.data, catalog=catalog)
        if profile is not None:
            errors = startable(profile)
            verdict.names = [profile.spec.scheduler_name or profile.name]
    else:
        try:
            engine = load_engine_config(doc.data)
            check_startable(engine)
            errors = []
            verdict.names = engine.scheduler_names
        except ValidationError as exc:
            errors = list(exc.errors)
    verdict.problems = doc.problems(errors)
    return verdict


def duplicates(verdicts: list[Verdict]) -> None:
    """A schedulerName (or profile name) declared again is refused where it is declared again."""
    first: dict[tuple[str, str], inputs.Document] = {}
    for v in verdicts:
        if v.skipped or v.problems:
            continue
        keys: list[tuple[str, str, str]] = []
        if v.kind == PROFILE:
            keys.append(("profile", v.doc.name, "metadata.name"))
            keys.append(("schedulerName", v.names[0], "spec.schedulerName"))
        else:
            keys += [("schedulerName", n, f"profiles[{i}].schedulerName")
                     for i, n in enumerate(v.names)]  # fmt: skip
        for what, value, path in keys:
            earlier = first.setdefault((what, value), v.doc)
            if earlier is not v.doc:
                v.problems += v.doc.problems(
                    [FieldError(path, f"duplicate {what} {quote(value)}: {earlier.label} has it")]
                )


def run(args: argparse.Namespace) -> int:
    catalog = default_catalog()
    for problem in catalog.problems:
        print(f"warning: {problem}", file=sys.stderr)
    docs = inputs.documents(args.files, recursive=args.recursive)
    verdicts = [check(doc, catalog) for doc in docs]
    duplicates(verdicts)
    files = inputs.expand(args.files, recursive=args.recursive)
    empty = [Problem(name, "contains no document") for name in inputs.empty(files, docs)]
    checked = [v for v in verdicts if not v.skipped]
    if not checked and not empty:
        empty.append(
            Problem(
                ", ".join(inputs.shown(n) for n in args.files),
                f"no {PROFILE} or {CONFIG} in the input",
            )
        )
    failed = bool(empty) or any(v.problems for v in verdicts)
    if args.output != "text":
        report = {
            "valid": not failed,
            "documents": [v.report() for v in verdicts],
            "problems": [{"source": p.source, "message": p.message} for p in empty],
        }
        sys.stdout.write(
            json.dumps(report, indent=2) + "\n" if args.output == "json" else dump_yaml(report)
        )
        return EXIT_INVALID if failed else EXIT_OK
    for v in verdicts:
        if v.skipped:
            note = f"skipped: {a_or_an(shown(v.kind))}, not a {PROFILE} or {CONFIG}"
            print(f"{v.doc.position}: {note}", file=sys.stderr)
        elif v.problems:
            for found in v.problems:
                print(found, file=sys.stderr)
        else:
            what = "" if v.kind == PROFILE else f"{CONFIG}: "
            print(f"{v.doc.label}: valid ({what}{', '.join(v.names)})")
    for missing in empty:
        print(missing, file=sys.stderr)
    return EXIT_INVALID if failed else EXIT_OK
