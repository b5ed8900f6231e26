"""``corral shadow report PROFILE``: what a shadow profile found against the live scheduler.

Reads the SchedulerProfile's ``status.shadow`` (written by its engine) with the caller's
credentials and prints the counts, the breakdown by deciding plugin and the newest
disagreements with each plugin's scores on both nodes; ``-o json|yaml`` prints the status
itself, ``--html FILE`` writes one self-contained page. Exit codes: 0, 1 when the profile is
not a shadow or has no status yet, 2 usage (credentials, a profile that cannot be read).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from corral.cli import html_report
from corral.cli.clusterread import client_of, forbidden_text
from corral.cli.problems import EXIT_OK, InvalidInput, Problem, UsageError
from corral.cli.shadow_table import report
from corral.k8s import ApiError
from corral.render import dump_yaml
from corral.scheduler.config import ValidationError
from corral.scheduler.engine.shadow import tally as t
from corral.scheduler.engine.shadow.status_writer import PROFILES


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "shadow",
        help="read what a shadow profile found against the live scheduler",
        description="Shadow profiles (spec.shadow) decide the live scheduler's pods as they "
        "would and compare; these commands read the results.",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    rep = verbs.add_parser(
        "report",
        help="counts, the breakdown by plugin and the newest disagreements of a shadow",
        description="Print a shadow profile's status.shadow: agreed, ties and disagreements, "
        "one at a time and under a burst, the deciding plugin of each disagreement, and the "
        "newest ones with every plugin's scores on both nodes.",
    )
    rep.add_argument("profile", metavar="PROFILE", help="the SchedulerProfile's name")
    rep.add_argument("--kubeconfig", metavar="PATH", help="kubeconfig (default: $KUBECONFIG)")
    rep.add_argument("--context", metavar="NAME", help="the kubeconfig context to use")
    rep.add_argument(
        "-o",
        "--output",
        choices=("text", "json", "yaml"),
        default="text",
        help="text (default), or status.shadow as json or yaml",
    )
    rep.add_argument(
        "--html",
        metavar="FILE",
        type=Path,
        help="also write the report as one self-contained HTML page",
    )
    rep.set_defaults(handler=run)


def read_status(client: Any, profile: str) -> t.ShadowStatus:
    try:
        body = client.request("GET", f"{PROFILES}/{profile}")
    except ApiError as exc:
        if exc.not_found:
            raise UsageError(f"SchedulerProfile {profile!r} not found") from None
        if exc.forbidden:
            raise UsageError(forbidden_text(f"SchedulerProfile {profile!r}", exc)) from None
        raise UsageError(f"reading SchedulerProfile {profile!r}: {exc}") from None
    spec = body.get("spec") or {}
    raw = (body.get("status") or {}).get("shadow")
    if not spec.get("shadow"):
        raise InvalidInput(
            [
                Problem(
                    f"SchedulerProfile {profile}",
                    "is not a shadow (it has no spec.shadow)",
                    "spec.shadow",
                )
            ]
        )
    if not raw:
        raise InvalidInput(
            [
                Problem(
                    f"SchedulerProfile {profile}",
                    "no status.shadow yet: its engine has not decided any pod, or is not running",
                )
            ]
        )
    try:
        return t.from_json(raw)
    except ValidationError as exc:
        raise InvalidInput(
            [Problem(f"SchedulerProfile {profile}", e.message, e.path) for e in exc.errors]
        ) from None


def run(args: argparse.Namespace) -> int:
    client = client_of(args.kubeconfig, args.context)
    status = read_status(client, args.profile)
    if args.output == "json":
        sys.stdout.write(json.dumps(t.to_json(status), indent=2) + "\n")
    elif args.output == "yaml":
        sys.stdout.write(dump_yaml(t.to_json(status)))
    else:
        sys.stdout.write(report(args.profile, status))
    if args.html is not None:
        html_report.write(args.html, html_report.shadow_page(args.profile, status))
    return EXIT_OK
