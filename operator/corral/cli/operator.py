"""``corral operator``: run the SchedulerProfile operator against a cluster.

Exit codes: 0 after a clean shutdown (SIGINT/SIGTERM), 2 for settings or credentials that
cannot work (one message, no traceback).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

import kopf

from corral.cli import UsageError
from corral.controller import MetricsServing, PeeringError, SettingsError, from_sources, run
from corral.controller.metrics_server import split_address
from corral.controller.settings import ENV, LOG_FORMATS
from corral.k8s import Client


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "operator",
        help="run the operator (reconciles SchedulerProfiles)",
        description="Reconcile SchedulerProfiles into schedulers: ConfigMap, RBAC, Deployment, "
        "PodDisruptionBudget; report status and events. Settings come from flags, else the "
        "CORRAL_* environment variables shown, else the defaults.",
    )
    add = parser.add_argument
    add("--kubeconfig", help="kubeconfig file (default: in-cluster, else $KUBECONFIG/~/.kube)")
    add("--context", help="kubeconfig context")
    add("--namespace", help=f"namespace for profiles that set none [{ENV['namespace']}]")
    add("--image", help=f"engine image for profiles that set none [{ENV['image']}]")
    add("--log-format", choices=LOG_FORMATS, help=f"log format [{ENV['log_format']}]")
    add("--verbose", action="store_true", help="debug logging")
    add(
        "--pending-threshold",
        type=float,
        metavar="SECONDS",
        help=f"report pods Pending longer than this [{ENV['pending_threshold']}; 60]",
    )
    add("--resync", type=float, metavar="SECONDS", help=f"resync period [{ENV['resync']}; 30]")
    add("--workers", type=int, help=f"concurrent reconciles [{ENV['workers']}; 4]")
    add(
        "--reserved-scheduler-names",
        dest="reserved",
        metavar="A,B",
        help="schedulers running outside Corral that profiles may not name "
        f"[{ENV['reserved']}; default-scheduler]",
    )
    add(
        "--local-engines",
        action="store_true",
        default=None,
        help=f"also run each profile's engine as local processes [{ENV['local_engines']}]",
    )
    add("--engine-dir", help=f"work directory of local engines [{ENV['engine_dir']}]")
    add(
        "--allow-system-leases",
        action="store_true",
        default=None,
        help="let profiles put their Lease in kube-system or kube-node-lease, among other "
        "components' Leases (a Corral engine replacing kube-scheduler) "
        f"[{ENV['allow_system_leases']}]",
    )
    add(
        "--peering",
        metavar="NAME",
        help="kopf ClusterKopfPeering for a hot standby (default: standalone)",
    )
    add("--priority", type=int, help="peering priority (default: random)")
    add("--liveness", metavar="URL", help="liveness endpoint, e.g. http://0.0.0.0:8080/healthz")
    add(
        "--metrics-address",
        metavar="HOST:PORT",
        help="serve /metrics here: HTTPS, for tokens allowed `get` on /metrics (delegated "
        "authentication and authorization, as the engines'); off unless given",
    )
    add(
        "--metrics-cert-dir",
        metavar="DIR",
        help="tls.crt and tls.key to serve /metrics with (default: self-signed at start)",
    )
    add(
        "--metrics-insecure",
        action="store_true",
        help="serve /metrics over plain HTTP to anyone (a local dev run only)",
    )
    add(
        "--webhook-listen",
        metavar="HOST:PORT",
        help="serve the validating admission webhook here (HTTPS) and register it "
        f"[{ENV['webhook_listen']}; off]",
    )
    add(
        "--webhook-host",
        metavar="HOST",
        help=f"host the API server calls in the webhook URL [{ENV['webhook_host']}]",
    )
    add(
        "--webhook-service",
        metavar="[NAMESPACE/]NAME[:PORT]",
        help="reach the webhook through this Service (port 443 unless given; without a "
        f"namespace, the operator's own) instead [{ENV['webhook_service']}]",
    )
    add(
        "--webhook-cert-dir",
        metavar="DIR",
        help="tls.crt, tls.key and ca.crt to serve with (default: self-signed, renewed by the "
        f"operator) [{ENV['webhook_cert_dir']}]",
    )
    add(
        "--webhook-cert-secret",
        metavar="[NAMESPACE/]NAME",
        help="keep the self-signed pair in this Secret, shared by all replicas (without a "
        f"namespace, in the operator's own) [{ENV['webhook_cert_secret']}]",
    )
    parser.set_defaults(handler=main)


def client_for(args: argparse.Namespace) -> Client:
    try:
        if args.kubeconfig or args.context:
            return Client.from_kubeconfig(args.kubeconfig, args.context)
        try:
            return Client.in_cluster()
        except Exception:
            return Client.from_kubeconfig()
    except Exception as exc:  # the loaders raise a family of errors for unusable configs
        raise UsageError(f"cannot load cluster credentials: {exc}") from None


def main(args: argparse.Namespace) -> int:
    try:
        settings = from_sources(vars(args))
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    metrics = None
    if args.metrics_address:
        try:
            split_address(args.metrics_address)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        cert_dir = Path(args.metrics_cert_dir) if args.metrics_cert_dir else None
        if cert_dir is not None and not all(
            (cert_dir / name).is_file() for name in ("tls.crt", "tls.key")
        ):
            raise UsageError(f"--metrics-cert-dir: {cert_dir} lacks tls.crt and tls.key")
        metrics = MetricsServing(args.metrics_address, not args.metrics_insecure, cert_dir)
    client = client_for(args)
    fmt = kopf.LogFormat.JSON if settings.log_format == "json" else kopf.LogFormat.FULL
    kopf.configure(verbose=args.verbose, log_format=fmt)
    if not args.verbose:
        # kopf logs every successful handler call at INFO; the operator logs what it does.
        logging.getLogger("kopf.objects").setLevel(logging.WARNING)
    try:
        run(
            settings,
            client,
            peering=args.peering,
            priority=args.priority,
            liveness=args.liveness,
            metrics=metrics,
        )
    except PeeringError as exc:
        raise UsageError(str(exc)) from None
    return 0
