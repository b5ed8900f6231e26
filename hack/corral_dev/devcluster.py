"""``hack/dev-cluster``: bring a local control plane up, add fake nodes, take it down.

    up    [--dir DIR] [--nodes N] [--with-kube-scheduler] [--real-node [--image ARCHIVE]...]
                                                            prints `export KUBECONFIG=...`
    down  [--dir DIR]
    load-image [--dir DIR] ARCHIVE...   import docker archives into the real node's containerd
    nodes [--dir DIR] --count N [--cpu C] [--memory M] [--pods P] [--zones Z]
          [--labels k=v,...] [--taints k=v:Effect,...]

Only the ``export`` line goes to stdout (so ``eval "$(hack/dev-cluster up)"`` works); progress
and errors go to stderr. The directory defaults to $CORRAL_DEV_CLUSTER_DIR, else ./.dev-cluster.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from corral.k8s import ApiError
from corral.testing import audit
from corral.testing.binaries import BinariesError
from corral.testing.controlplane import ControlPlaneError, LocalCluster
from corral.testing.nodes import NodeSpecError, parse_labels, parse_taints
from corral.testing.processes import ProcessError
from corral_dev.builds import ensure_control_plane
from corral_dev.hostpackages import HostPackagesError
from corral_dev.images import ImageError
from corral_dev.realnode import RealNode, RealNodeError, RealNodes


def default_dir() -> Path:
    return Path(os.environ.get("CORRAL_DEV_CLUSTER_DIR", ".dev-cluster"))


def _say(message: str) -> None:
    print(f"[dev-cluster] {message}", file=sys.stderr, flush=True)


def cmd_up(args: argparse.Namespace) -> int:
    started = time.monotonic()
    cluster = LocalCluster.up(
        args.dir,
        # Real pods need a scheduler to be placed by when no profile names them.
        with_kube_scheduler=args.with_kube_scheduler or args.real_node,
        progress=True,
        binaries=ensure_control_plane(),
        nodes=RealNodes(images=args.image, lock_timeout=args.wait) if args.real_node else None,
        # The tests' audit log (corral.testing.audit), as the session cluster of the tests has.
        apiserver_args=audit.args(args.dir.resolve()),
    )
    if args.nodes:
        _say(f"adding {args.nodes} fake node(s)")
        cluster.add_nodes(args.nodes)
    _say(f"up in {time.monotonic() - started:.1f}s; logs in {cluster.directory / 'logs'}")
    print(f"export KUBECONFIG={cluster.kubeconfig}")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    try:
        cluster = LocalCluster.attach(args.dir, nodes=RealNodes())
    except ControlPlaneError:
        _say(f"nothing running in {args.dir.resolve()}")
        return 0
    cluster.down()
    _say(f"stopped every component of {cluster.directory}")
    return 0


def cmd_load_image(args: argparse.Namespace) -> int:
    node = RealNode.attach(args.dir.resolve())
    if node is None or not node.state.daemons:
        _say(f"no real node in {args.dir.resolve()} (start one with `up --real-node`)")
        return 1
    for archive in args.archives:
        node.load_image(archive.resolve())
    return 0


def cmd_nodes(args: argparse.Namespace) -> int:
    cluster = LocalCluster.attach(args.dir)
    names = cluster.add_nodes(
        args.count,
        cpu=args.cpu,
        memory=args.memory,
        pods=args.pods,
        zones=args.zones,
        labels=parse_labels(args.labels),
        taints=parse_taints(args.taints),
    )
    span = f"{names[0]} .. {names[-1]}" if names else "none"
    _say(f"{len(names)} node(s) Ready: {span}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dev-cluster",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def with_dir(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument(
            "--dir",
            type=Path,
            default=default_dir(),
            help="work directory (default: $CORRAL_DEV_CLUSTER_DIR or ./.dev-cluster)",
        )
        return p

    up = with_dir(sub.add_parser("up", help="start the control plane; print export KUBECONFIG"))
    up.add_argument("--nodes", type=int, default=0, help="fake nodes to add once it is up")
    up.add_argument(
        "--with-kube-scheduler",
        action="store_true",
        help="also run upstream kube-scheduler as default-scheduler",
    )
    up.add_argument(
        "--real-node",
        action="store_true",
        help="add one real node (containerd, kubelet, kube-proxy; root, one per machine)",
    )
    up.add_argument(
        "--image",
        type=Path,
        action="append",
        default=[],
        help="a docker archive to import into the real node (repeatable)",
    )
    up.add_argument(
        "--wait",
        type=float,
        default=0.0,
        help="seconds to wait for another cluster's real node to go (default: fail at once)",
    )
    up.set_defaults(handler=cmd_up)

    load = with_dir(sub.add_parser("load-image", help="import images into the real node"))
    load.add_argument("archives", nargs="+", type=Path, metavar="ARCHIVE")
    load.set_defaults(handler=cmd_load_image)

    down = with_dir(sub.add_parser("down", help="stop every process the cluster started"))
    down.set_defaults(handler=cmd_down)

    nodes = with_dir(sub.add_parser("nodes", help="add kwok fake nodes"))
    nodes.add_argument("--count", type=int, required=True)
    nodes.add_argument("--cpu", default="32")
    nodes.add_argument("--memory", default="256Gi")
    nodes.add_argument("--pods", type=int, default=110)
    nodes.add_argument(
        "--zones",
        type=int,
        default=0,
        help="spread nodes over zone-0..zone-(Z-1) (topology.kubernetes.io/zone)",
    )
    nodes.add_argument("--labels", default="", help="k=v,... added to every node")
    nodes.add_argument("--taints", default="", help="k=v:Effect,... added to every node")
    nodes.set_defaults(handler=cmd_nodes)
    return parser  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except (
        BinariesError, ControlPlaneError, ProcessError, NodeSpecError, TimeoutError,
        RealNodeError, HostPackagesError, ImageError,
    ) as exc:  # fmt: skip
        _say(f"error: {exc}")
        return 1
    except ApiError as exc:
        _say(f"error from the API server: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
