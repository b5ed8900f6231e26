"""``corral render -f PROFILE [-o DIR|-]``: render a SchedulerProfile offline.

Writes every object — one file each into DIR, or one multi-document YAML stream to stdout
(``-o -``, the default). Output is byte-for-byte deterministic. An invalid profile prints every
error with its field path and exits 1; nothing is written then.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from corral.api import OperatorDefaults, ValidationError, default_catalog, load_profiles_text
from corral.cli import UsageError
from corral.cli.validate import read_source
from corral.render import dump, dump_yaml, file_name, render


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "render",
        help="render a SchedulerProfile to Kubernetes objects offline",
        description="Render SchedulerProfiles to the objects the operator would apply "
        "(ConfigMap, ServiceAccount, RBAC, Deployment, PodDisruptionBudget, Service). "
        "No cluster needed.",
    )
    parser.add_argument(
        "-f",
        "--filename",
        dest="file",
        required=True,
        metavar="FILE",
        help="a SchedulerProfile YAML file ('-' for stdin); may hold several profiles",
    )
    parser.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="DIR",
        help="directory to write one file per object into, or '-' for stdout (default)",
    )
    parser.add_argument(
        "--namespace",
        default=None,
        metavar="NS",
        help="namespace for profiles that set none (the operator's default: corral-system)",
    )
    parser.add_argument(
        "--image",
        default=None,
        metavar="IMAGE",
        help="engine image for profiles that set none (the operator's default)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    source = "<stdin>" if args.file == "-" else args.file
    defaults = OperatorDefaults()
    operator = OperatorDefaults(
        namespace=args.namespace or defaults.namespace, image=args.image or defaults.image
    )
    catalog = default_catalog()
    for problem in catalog.problems:
        print(f"warning: {problem}", file=sys.stderr)
    try:
        profiles = load_profiles_text(
            read_source(args.file), source, operator=operator, catalog=catalog
        )
    except ValidationError as exc:
        for err in exc.errors:
            print(f"{source}: {err}", file=sys.stderr)
        return 1
    objects = [obj for profile in profiles for obj in render(profile, catalog).objects]
    if args.output == "-":
        sys.stdout.write(dump(objects))
        return 0
    out = Path(args.output)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for i, obj in enumerate(objects, start=1):
            (out / file_name(i, obj)).write_text(dump_yaml(obj), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write to {out}: {exc}") from None
    print(f"wrote {len(objects)} objects to {out}", file=sys.stderr)
    return 0
