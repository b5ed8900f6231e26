"""``corral scheduler --config FILE``: run the embedded scheduler engine.

Exit codes: 0 after a graceful stop (SIGTERM/SIGINT), 1 when the configuration is invalid
(each error ``file:line:col: path: message``; a SchedulerProfile is one line naming ``corral
render --scheduler-config``) or the leader lost its Lease (the restart policy
brings it back as a candidate), 2 for usage errors (a ``--config`` that cannot be read).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import logging
import os
import signal
import ssl
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from corral.cli import inputs
from corral.cli.problems import InvalidInput, Problem, UsageError
from corral.k8s import Client
from corral.k8s.client import KubeconfigError
from corral.k8s.secure_serving import server_context
from corral.scheduler.config import (
    FeatureGates,
    FieldError,
    ValidationError,
    features,
    selector_text,
)
from corral.scheduler.config.defaults import DEFAULT_LOCK_NAME, DEFAULT_LOCK_NAMESPACE
from corral.scheduler.config.errors import quote
from corral.scheduler.config.names import check_dns1123_label
from corral.scheduler.engine import gc_tuning
from corral.scheduler.engine.app import Engine, EngineOptions
from corral.scheduler.engine.frameworks import EngineConfig, load_engine_config
from corral.scheduler.engine.leaderelection import default_identity
from corral.scheduler.engine.logfields import FIELDS, klog
from corral.scheduler.engine.preflight import check_startable
from corral.scheduler.engine.server import ListenError
from corral.yamlload import YamlError

LOG_LEVELS = {"Normal": logging.INFO, "Debug": logging.DEBUG, "Trace": 5}
VERBOSITY_DEBUG = 4  # -v: kube-scheduler's level of debugging detail


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scheduler",
        help="run the scheduler engine",
        description="Run Corral's scheduler engine from a KubeSchedulerConfiguration v1 file.",
    )
    parser.add_argument(
        "--config",
        required=True,
        type=Path,
        metavar="FILE",
        help="KubeSchedulerConfiguration v1 (YAML or JSON)",
    )
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="kubeconfig to use (default: clientConnection.kubeconfig, then the "
        "in-cluster ServiceAccount)",
    )
    parser.add_argument("--context", metavar="NAME", help="the kubeconfig context to use")
    parser.add_argument(
        "--namespaces", metavar="NS[,NS...]", help="tenancy: schedule only pods in these namespaces"
    )
    parser.add_argument(
        "--namespace-selector",
        metavar="SELECTOR",
        help="tenancy: also schedule pods in namespaces matching this label selector",
    )
    parser.add_argument(
        "--bind-address",
        default="0.0.0.0:10259",
        metavar="HOST:PORT",
        help="where /healthz, /readyz and /metrics are served "
        "(default 0.0.0.0:10259; port 0 picks a free one)",
    )
    parser.add_argument(
        "--secure-serving",
        action="store_true",
        help="serve HTTPS; every path but /healthz, /readyz and /livez needs a token the API "
        "server authenticates and authorizes (TokenReview, SubjectAccessReview)",
    )
    parser.add_argument("--tls-cert-file", metavar="PATH", help="with --secure-serving")
    parser.add_argument(
        "--tls-private-key-file",
        metavar="PATH",
        help="with --secure-serving (default: a self-signed pair made at start)",
    )
    parser.add_argument(
        "--feature-gates",
        default="",
        metavar="NAME=BOOL[,...]",
        help="kube-scheduler's gates of the pinned release (its names, defaults, locks and "
        "dependencies); a gate at its default is accepted, another value only for one the "
        "engine implements (GenericWorkload)",
    )
    parser.add_argument(
        "--queueing-hints",
        choices=("true", "false"),
        default="true",
        help="false: retry a rejected pod on every event its rejectors registered, without "
        "asking their hints (upstream's old SchedulerQueueingHints=false, gone in 1.37; kept "
        "to measure what hints save)",
    )
    parser.add_argument(
        "--pod-watch-encoding",
        choices=("json", "protobuf"),
        default="json",
        help="how the pod watch travels (default json): protobuf costs the API server about "
        "half as much per event and this process more to decode",
    )
    parser.add_argument("--log-level", choices=sorted(LOG_LEVELS), default=None,
                        help="Normal (default), Debug or Trace")  # fmt: skip
    parser.add_argument(
        "-v",
        "--v",
        type=int,
        metavar="N",
        help="kube-scheduler's verbosity instead of --log-level: up to 3 Normal, 4 Debug, 5 and "
        "more Trace",
    )
    parser.add_argument(
        "--shadow-of",
        metavar="SCHEDULER_NAME",
        help="run as a shadow of this live scheduler: decide its pods as the profile would and "
        "compare with its bindings, writing nothing (corral_shadow_decisions_total, and a log "
        "line per disagreement; docs/engine.md)",
    )
    parser.add_argument(
        "--shadow-profile",
        metavar="NAME",
        help="with --shadow-of: the SchedulerProfile whose status.shadow gets the counts",
    )
    parser.add_argument("--log-format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run)  # fmt: skip


class _JsonFormatter(logging.Formatter):
    """One object per line: ``ts``, ``level``, ``logger``, ``msg``, then the line's structured
    fields (``pod``, ``node``, ...: :mod:`corral.scheduler.engine.logfields`) as keys."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in (getattr(record, FIELDS, None) or {}).items():
            entry.setdefault(key, value)
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class _TextFormatter(logging.Formatter):
    """klog's text shape: the message, then the structured fields as ``key="value"``."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        return super().formatMessage(record) + klog(getattr(record, FIELDS, None) or {})


def setup_logging(level: str, fmt: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(_JsonFormatter())
    else:
        formatter = _TextFormatter(
            "%(asctime)s.%(msecs)03d %(levelname).1s %(name)s] %(message)s", "%Y-%m-%dT%H:%M:%S"
        )
        formatter.converter = time.gmtime
        handler.setFormatter(formatter)
    logging.basicConfig(level=LOG_LEVELS[level], handlers=[handler], force=True)
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)


def parse_feature_gates(text: str) -> FeatureGates:
    """``--feature-gates`` refused as kube-scheduler refuses it, then where Corral's engine does
    not implement a gate's non-default value."""
    try:
        settings = features.parse_flag(text)
    except features.FeatureGateError as exc:
        raise UsageError(f"--feature-gates: {exc}") from None
    refused = features.problems(settings)
    if refused:
        raise UsageError("; ".join(f"--feature-gates: {p.message}" for p in refused))
    return FeatureGates(settings)


def parse_bind_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--bind-address: {text!r} is not HOST:PORT")
    if host.startswith("[") and host.endswith("]"):  # [::1]:10259
        host = host[1:-1]
    if "[" in host or "]" in host:
        raise UsageError(f"--bind-address: {text!r} is not HOST:PORT (an IPv6 host is [ADDRESS])")
    return host or "0.0.0.0", int(port)


def make_client(flag: str | None, from_config: str | None, context: str | None = None) -> Client:
    path = flag or from_config
    try:
        if path or context:
            return Client.from_kubeconfig(path, context)
        return Client.in_cluster()
    except (KubeconfigError, YamlError, OSError) as exc:
        raise UsageError(f"cannot load credentials: {exc}") from None


def config_document(name: str) -> inputs.Document:
    """The one document of ``--config`` (read as every ``-f`` is: bounded, a regular file).
    A SchedulerProfile is refused with one line naming the command that renders its
    KubeSchedulerConfiguration (not with the schema errors of the wrong kind)."""
    docs = inputs.documents([name])
    if not docs:  # the words of every subcommand's empty input
        raise InvalidInput([Problem(name, "contains no document")])
    for doc in docs:
        if _is_profile(doc):
            raise InvalidInput([doc.problem(
                "a SchedulerProfile, not a KubeSchedulerConfiguration: `corral render "
                f"--scheduler-config -f {inputs.shown(name)}` prints the configuration to run"
            )])  # fmt: skip
    if len(docs) != 1:
        raise InvalidInput([Problem(
            name, f"holds {len(docs)} documents; --config takes one KubeSchedulerConfiguration"
        )])  # fmt: skip
    return docs[0]


def _is_profile(doc: inputs.Document) -> bool:
    """A SchedulerProfile by its kind or by its group (``corral.dev``), as validate tells."""
    api = doc.data.get("apiVersion") if isinstance(doc.data, Mapping) else None
    return doc.kind == "SchedulerProfile" or str(api).startswith("corral.dev/")


def log_level(args: argparse.Namespace) -> str:
    if args.v is not None and args.log_level is not None:
        raise UsageError("-v and --log-level go alone: give one")
    if args.v is None:
        return str(args.log_level or "Normal")
    if args.v < 0:
        raise UsageError(f"-v {args.v}: must be 0 or more")
    if args.v < VERBOSITY_DEBUG:
        return "Normal"
    return "Debug" if args.v == VERBOSITY_DEBUG else "Trace"


def check_shadow(engine_config: EngineConfig) -> None:
    """What a shadow's configuration must not be: more than one profile (one candidate is
    compared), or an elector on the default Lease, which is the live kube-scheduler's own (a
    shadow holding it would stop the live scheduler from scheduling)."""
    errors = []
    if len(engine_config.profiles) != 1:
        errors.append(FieldError("profiles", f"a shadow runs one profile, not "
                                 f"{len(engine_config.profiles)}"))  # fmt: skip
    le = engine_config.config.leader_election
    if le.leader_elect and (le.resource_namespace, le.resource_name) == (
        DEFAULT_LOCK_NAMESPACE,
        DEFAULT_LOCK_NAME,
    ):
        errors.append(FieldError("leaderElection.resourceName", f"{le.resource_name!r} in "
                                 f"{le.resource_namespace} is the live scheduler's Lease: give "
                                 "the shadow its own, or leaderElect: false"))  # fmt: skip
    if errors:
        raise ValidationError(errors)


def run(args: argparse.Namespace) -> int:
    setup_logging(log_level(args), args.log_format)
    gates = parse_feature_gates(args.feature_gates)
    doc = config_document(str(args.config))
    try:  # the whole configuration, before credentials are loaded
        engine_config = load_engine_config(doc.data, gates)
        check_startable(engine_config)
        if args.shadow_of:
            check_shadow(engine_config)
    except ValidationError as exc:
        raise InvalidInput(doc.problems(exc.errors)) from None
    if args.shadow_profile and not args.shadow_of:
        raise UsageError("--shadow-profile goes with --shadow-of")
    host, port = parse_bind_address(args.bind_address)
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        raise UsageError("--tls-cert-file and --tls-private-key-file go together")
    if args.secure_serving:
        try:
            server_context(args.tls_cert_file, args.tls_private_key_file)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"--tls-cert-file: cannot load the pair: {exc}") from None
    namespaces = (
        frozenset(n.strip() for n in args.namespaces.split(",") if n.strip())
        if args.namespaces
        else None
    )
    for namespace in sorted(namespaces or ()):
        for message in check_dns1123_label(namespace):
            raise UsageError(f"--namespaces: {quote(namespace)}: {message}")
    if args.namespace_selector is not None:  # else the API server refuses it, for ever
        for message in selector_text.problems(args.namespace_selector):
            raise UsageError(f"--namespace-selector {quote(args.namespace_selector)}: {message}")
    client = make_client(
        args.kubeconfig, engine_config.config.client_connection.kubeconfig, args.context
    )
    options = EngineOptions(
        identity=default_identity(),
        namespaces=namespaces,
        namespace_selector=args.namespace_selector,
        bind_host=host,
        bind_port=port,
        secure_serving=args.secure_serving,
        tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file,
        queueing_hints=args.queueing_hints == "true",
        freeze_gc_after_sync=True,
        pod_watch_protobuf=args.pod_watch_encoding == "protobuf",
        shadow_of=args.shadow_of or None,
        shadow_profile=args.shadow_profile or None,
        config_hash=hashlib.sha256(
            json.dumps(doc.data, sort_keys=True).encode("utf-8")
        ).hexdigest(),
    )
    gc_tuning.configure()  # this process is the engine's own
    try:
        engine = Engine(engine_config, client, options)
    except ValidationError as exc:
        raise InvalidInput(doc.problems(exc.errors)) from None
    return asyncio.run(_serve(engine))


async def _serve(engine: Engine) -> int:
    main = asyncio.create_task(engine.run())
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, main.cancel)
    try:
        return await main
    except ListenError as exc:
        raise UsageError(f"--bind-address: {exc}") from None
    except asyncio.CancelledError:
        logging.getLogger("corral.scheduler").info("stopped (pid %d)", os.getpid())
        return 0
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)
