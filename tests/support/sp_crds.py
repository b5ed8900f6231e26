"""scheduler-plugins' CRDs (crds/scheduler-plugins) installed on the local control plane for a
test, and removed after it.

Two tests in one run may both install the CRD: the second can meet the first's CRD still
terminating (create says AlreadyExists, discovery still lists PodGroup, and the handler then
vanishes under it: a raw "404 page not found"). So the block waits for an earlier deletion to
finish before creating, proves the resource served by listing it (not by discovery, which the
client caches), and waits for its own deletion to finish on the way out."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from corral.k8s import JSON, ApiError, Client
from support.engine_process import wait_until

CRDS = Path(__file__).resolve().parents[2] / "crds" / "scheduler-plugins"
POD_GROUP_CRD = CRDS / "podgroups.scheduling.x-k8s.io.yaml"
SP_SCHEDULING = "scheduling.x-k8s.io/v1alpha1"
_CRD_API = "apiextensions.k8s.io/v1"
_POD_GROUPS = f"/apis/{SP_SCHEDULING}/podgroups"


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


@contextmanager
def pod_group_crd(kube: Client) -> Iterator[None]:
    """The PodGroup CRD, served (a list of podgroups answers) until the block ends."""
    crd = yaml.safe_load(POD_GROUP_CRD.read_text())
    name = crd["metadata"]["name"]
    wait_until("an earlier PodGroup CRD deleted", lambda: not _terminating(kube, name), 120)
    try:
        kube.create(crd)
    except ApiError as exc:
        if not exc.conflict:
            raise

    def served() -> bool:
        try:
            kube.request("GET", _POD_GROUPS, params={"limit": 1})
        except ApiError:
            return False
        return True

    wait_until("the PodGroup CRD served", served, timeout=60)
    try:
        yield
    finally:
        kube.delete(_CRD_API, "CustomResourceDefinition", name)
        wait_until("the PodGroup CRD deleted", lambda: _stored_crd(kube, name) is None, 120)
