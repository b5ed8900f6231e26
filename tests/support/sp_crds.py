"""scheduler-plugins' CRDs (crds/scheduler-plugins) installed on the local control plane for a
test, and removed after it.

Two tests in one run may both install a CRD: the second can meet the first's CRD still
terminating (create says AlreadyExists, discovery still lists the kind, and the handler then
vanishes under it: a raw "404 page not found"). So the block waits for an earlier deletion to
finish before creating, proves the resource served by listing it (not by discovery, which the
client caches), and waits for its own deletion to finish on the way out."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import yaml

from corral.k8s import JSON, ApiError, Client
from support.engine_process import wait_until

CRDS = Path(__file__).resolve().parents[2] / "crds" / "scheduler-plugins"
POD_GROUP_CRD = CRDS / "podgroups.scheduling.x-k8s.io.yaml"
ELASTIC_QUOTA_CRD = CRDS / "elasticquotas.scheduling.x-k8s.io.yaml"
NRT_CRD = CRDS / "noderesourcetopologies.topology.node.k8s.io.yaml"
SP_SCHEDULING = "scheduling.x-k8s.io/v1alpha1"
NRT_API = "topology.node.k8s.io/v1alpha2"
_CRD_API = "apiextensions.k8s.io/v1"


def _stored_crd(kube: Client, name: str) -> JSON | None:
    """The CRD as the API server holds it, or None once it is gone."""
    try:
        return kube.get(_CRD_API, "CustomResourceDefinition", name)
    except ApiError as exc:
        if exc.not_found:
            return None
        raise


def _terminating(kube: Client, name: str) -> bool:
    crd = _stored_crd(kube, name)
    return crd is not None and bool(crd["metadata"].get("deletionTimestamp"))


def _crd(kube: Client, path: Path) -> AbstractContextManager[None]:
    return served_crd(kube, yaml.safe_load(path.read_text()))


@contextmanager
def served_crd(kube: Client, crd: JSON) -> Iterator[None]:
    """The CRD ``crd`` (an object, e.g. as the chart renders it), served (a cluster-wide list of
    its objects answers) until the block ends; its objects go with it."""
    name, kind = crd["metadata"]["name"], crd["spec"]["names"]["kind"]
    version = next(v["name"] for v in crd["spec"]["versions"] if v.get("served"))
    listing = f"/apis/{crd['spec']['group']}/{version}/{crd['spec']['names']['plural']}"
    wait_until(f"an earlier {kind} CRD deleted", lambda: not _terminating(kube, name), 120)
    try:
        kube.create(crd)
    except ApiError as exc:
        if not exc.conflict:
            raise

    def served() -> bool:
        try:
            kube.request("GET", listing, params={"limit": 1})
        except ApiError:
            return False
        return True

    wait_until(f"the {kind} CRD served", served, timeout=60)
    try:
        yield
    finally:
        kube.delete(_CRD_API, "CustomResourceDefinition", name)
        wait_until(f"the {kind} CRD deleted", lambda: _stored_crd(kube, name) is None, 120)


def absent(kube: Client, path: Path) -> bool:
    """Whether the CRD at ``path`` is gone, once an earlier deletion of it has finished (False:
    something else installed it and holds it)."""
    name = yaml.safe_load(path.read_text())["metadata"]["name"]
    wait_until(f"an earlier {name} deleted", lambda: not _terminating(kube, name), 120)
    return _stored_crd(kube, name) is None


def pod_group_crd(kube: Client) -> AbstractContextManager[None]:
    """The PodGroup CRD (Coscheduling's groups), served until the block ends."""
    return _crd(kube, POD_GROUP_CRD)


def elastic_quota_crd(kube: Client) -> AbstractContextManager[None]:
    """The ElasticQuota CRD (CapacityScheduling's quotas), served until the block ends."""
    return _crd(kube, ELASTIC_QUOTA_CRD)


def node_resource_topology_crd(kube: Client) -> AbstractContextManager[None]:
    """The NodeResourceTopology CRD (NUMA zones per node), served until the block ends."""
    return _crd(kube, NRT_CRD)
