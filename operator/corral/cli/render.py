"""``corral render -f PROFILE|DIR... [-o yaml|json] [--output-dir DIR [--prune]]``: render
SchedulerProfiles offline to the objects the operator would apply.

Output is byte-for-byte deterministic: one multi-document YAML stream (``-o yaml``, the
default) or one ``kind: List`` (``-o json``) on stdout, or one file per object in
``--output-dir`` (``.yaml`` files, or ``.json`` ones with ``-o json``). A directory that already
holds files is refused, as those could be stale objects ``kubectl apply -f DIR`` would
re-create; ``--prune`` first removes the files an earlier render wrote there (and still refuses
anything else). Documents of other kinds in the input are skipped with a line each. Any invalid
profile prints every error (``source:line:col: path: message``) and exits 1; nothing is written
then. Exit codes: :mod:`corral.cli.problems`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Final

from corral.api import OperatorDefaults, SchedulerProfile, check_profile, default_catalog
from corral.api.image_reference import check_image_reference
from corral.api.scheduler_config import scheduler_config_data
from corral.cli import inputs
from corral.cli.problems import EXIT_OK, InvalidInput, Problem, UsageError
from corral.cli.validate import PROFILE, Verdict, duplicates, kind_of
from corral.render import dump, dump_yaml, file_name, render
from corral.scheduler.config.errors import a_or_an, quote, shown

FORMATS: Final = ("yaml", "json")
# What render writes into --output-dir: "<NN>-<kind>-<namespace>-<name>.yaml" (or ".json").
_RENDERED: Final = re.compile(r"[0-9]{2,}-[a-z0-9]+-[a-z0-9.-]+\.(yaml|json)")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "render",
        help="render SchedulerProfiles to Kubernetes objects offline",
        description="Render SchedulerProfiles to the objects the operator would apply "
        "(ConfigMap, ServiceAccount, RBAC, Deployment, PodDisruptionBudget, Service). "
        "No cluster needed.",
    )
    inputs.add_file_arguments(parser, "SchedulerProfile YAML")
    parser.add_argument(
        "-o",
        "--output",
        default="yaml",
        metavar="FORMAT",
        help="yaml (default: a multi-document stream) or json (a kind: List) on stdout",
    )
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write one file per object into DIR instead, YAML or with -o json JSON (DIR must be "
        "empty or new)",
    )
    parser.add_argument(
        "--prune",
        action="store_true",
        help="with --output-dir: first remove the files an earlier render wrote there",
    )
    parser.add_argument(
        "--scheduler-config",
        action="store_true",
        help="print only each profile's KubeSchedulerConfiguration (what `corral scheduler "
        "--config` reads; tenancy is the engine's --namespaces/--namespace-selector flags)",
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


def _check_arguments(args: argparse.Namespace) -> None:
    if args.output not in FORMATS:
        hint = f"; to write files use --output-dir {args.output}" if args.output != "-" else ""
        raise UsageError(f"-o {args.output}: the output format is yaml or json{hint}")
    if args.prune and not args.output_dir:
        raise UsageError("--prune goes with --output-dir")
    if args.scheduler_config and args.output_dir:
        raise UsageError("--scheduler-config prints to stdout; it does not go with --output-dir")
    for reason in check_image_reference(args.image) if args.image is not None else ():
        raise UsageError(f"--image {quote(args.image)}: {reason}")


def profiles(docs: list[inputs.Document], operator: OperatorDefaults) -> list[SchedulerProfile]:
    """The valid profiles among ``docs``; raises :class:`InvalidInput` with every problem."""
    catalog = default_catalog()
    out: list[SchedulerProfile] = []
    verdicts: list[Verdict] = []
    for doc in docs:
        if kind_of(doc) != PROFILE:
            kind = a_or_an(shown(doc.kind) or "<no kind>")
            print(f"{doc.position}: skipped: {kind}, not a {PROFILE}", file=sys.stderr)
            continue
        profile, errors = check_profile(doc.data, operator=operator, catalog=catalog)
        verdict = Verdict(doc, PROFILE, problems=doc.problems(errors))
        if profile is not None:
            out.append(profile)
            verdict.names = [profile.spec.scheduler_name or profile.name]
        verdicts.append(verdict)
    duplicates(verdicts)
    problems = [p for v in verdicts for p in v.problems]
    if problems:
        raise InvalidInput(problems)
    return out


def run(args: argparse.Namespace) -> int:
    _check_arguments(args)
    defaults = OperatorDefaults()
    operator = OperatorDefaults(
        namespace=args.namespace or defaults.namespace, image=args.image or defaults.image
    )
    for problem in default_catalog().problems:
        print(f"warning: {problem}", file=sys.stderr)
    docs = inputs.documents(args.files, recursive=args.recursive)
    files = inputs.expand(args.files, recursive=args.recursive)
    empty = [Problem(name, "contains no document") for name in inputs.empty(files, docs)]
    if empty:
        raise InvalidInput(empty)
    found = profiles(docs, operator)
    if not found:
        raise InvalidInput([Problem(", ".join(map(inputs.shown, args.files)), f"no {PROFILE}")])
    if args.scheduler_config:
        configs = [scheduler_config_data(profile) for profile in found]
        if args.output == "json":
            sys.stdout.write("".join(json.dumps(c, indent=2) + "\n" for c in configs))
        else:
            sys.stdout.write(dump(configs))
        return EXIT_OK
    catalog = default_catalog()
    objects = [obj for profile in found for obj in render(profile, catalog).objects]
    if args.output_dir is None:
        if args.output == "json":
            body = {"apiVersion": "v1", "kind": "List", "items": objects}
            sys.stdout.write(json.dumps(body, indent=2) + "\n")
        else:
            sys.stdout.write(dump(objects))
        return EXIT_OK
    out = Path(args.output_dir)
    _prepare(out, prune=args.prune)
    try:
        for i, obj in enumerate(objects, start=1):
            name = file_name(i, obj)
            if args.output == "json":
                name = name.removesuffix(".yaml") + ".json"
                text = json.dumps(obj, indent=2) + "\n"
            else:
                text = dump_yaml(obj)
            (out / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--output-dir {out}: cannot write: {exc}") from None
    print(f"wrote {len(objects)} objects to {out}", file=sys.stderr)
    return EXIT_OK


def _prepare(out: Path, *, prune: bool) -> None:
    """``out`` exists and is empty (after ``prune`` removed what render wrote there)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--output-dir {out}: not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        present = sorted(out.iterdir())
    except OSError as exc:
        raise UsageError(f"--output-dir {out}: {exc.strerror or exc}") from None
    if not present:
        return
    if not prune:
        raise UsageError(
            f"--output-dir {out}: not empty ({len(present)} entries); files left there would be "
            "applied again with the new ones: use --prune to remove an earlier render's files, "
            "or a new directory"
        )
    try:  # an entry may be unreadable (a /proc directory's): is_file() raises then
        ours = [p for p in present if _RENDERED.fullmatch(p.name) and p.is_file()]
    except OSError as exc:
        raise UsageError(f"--output-dir {out}: {exc.strerror or exc}") from None
    others = [p.name for p in present if p not in ours]
    if others:
        raise UsageError(
            f"--output-dir {out}: --prune removes only files render wrote; remove these first: "
            + ", ".join(others[:5])
            + (" ..." if len(others) > 5 else "")
        )
    try:
        for p in ours:
            p.unlink()
    except OSError as exc:
        raise UsageError(
            f"--output-dir {out}: cannot remove {p.name}: {exc.strerror or exc}"
        ) from None
