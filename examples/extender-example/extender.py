"""An example scheduler extender built with ``corral.extender``.

- filter: keeps the nodes labelled ``example.corral.dev/allowed=true``; the others are reported
  in ``FailedNodes`` (they show up in the pod's FailedScheduling message).
- prioritize: gives ``MAX_EXTENDER_PRIORITY`` (10) to nodes labelled
  ``example.corral.dev/preferred=true`` and 0 to the rest.
- bind (with ``--bind``): binds the pod itself by creating a ``pods/binding`` through the API
  (in-cluster credentials, or ``$KUBECONFIG``), the way an extender binder must.

Labels are read from full Node objects, so configure the extender with ``nodeCacheCapable:
false`` (the default). Run: ``python extender.py --port 8888 [--bind]``.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from corral.extender import (
    MAX_EXTENDER_PRIORITY,
    Extender,
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderFilterResult,
    HostPriority,
    node_name,
)

ALLOWED = "example.corral.dev/allowed"
PREFERRED = "example.corral.dev/preferred"
NOT_ALLOWED = "node(s) not allowed by the example extender"


def _label(node: dict[str, Any], key: str) -> str:
    return str((node.get("metadata") or {}).get("labels", {}).get(key, ""))


def build(*, binder: Any = None) -> Extender:
    """The extender; ``binder(namespace, name, uid, node)`` enables the bind verb."""
    ext = Extender()

    @ext.filter
    def allowed_nodes(args: ExtenderArgs) -> ExtenderFilterResult:
        nodes = args.nodes or []
        keep = [node_name(n) for n in nodes if _label(n, ALLOWED) == "true"]
        failed = {node_name(n): NOT_ALLOWED for n in nodes if node_name(n) not in keep}
        return ExtenderFilterResult.keep(args, keep, failed=failed)

    @ext.prioritize
    def preferred_nodes(args: ExtenderArgs) -> list[HostPriority]:
        return [
            HostPriority(
                node_name(n), MAX_EXTENDER_PRIORITY if _label(n, PREFERRED) == "true" else 0
            )
            for n in args.nodes or []
        ]

    if binder is not None:

        @ext.bind
        def bind(args: ExtenderBindingArgs) -> None:
            binder(args.pod_namespace, args.pod_name, args.pod_uid, args.node)

    return ext


def api_binder() -> Any:
    """Binds through the Kubernetes API with the official client (the example's only extra)."""
    # Imported here so the filter/prioritize example runs without the Kubernetes client.
    from kubernetes import client, config  # noqa: PLC0415

    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    core = client.CoreV1Api()

    def bind(namespace: str, name: str, uid: str, node: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        # _preload_content=False: the client cannot deserialize the Status it gets back.
        core.create_namespaced_binding(namespace, body, _preload_content=False)

    return bind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8888)
    parser.add_argument("--prefix", default="", help="URL path prefix, e.g. /scheduler")
    parser.add_argument("--bind", action="store_true", help="also serve the bind verb")
    opts = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    ext = build(binder=api_binder() if opts.bind else None)
    ext.run(host=opts.host, port=opts.port, prefix=opts.prefix)


if __name__ == "__main__":
    main()
