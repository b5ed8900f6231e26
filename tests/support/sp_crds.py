"""scheduler-plugins' CRDs (crds/scheduler-plugins) installed on the local control plane for a
test, and removed after it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from corral.k8s import ApiError, Client
from support.engine_process import wait_until

CRDS = Path(__file__).resolve().parents[2] / "crds" / "scheduler-plugins"
POD_GROUP_CRD = CRDS / "podgroups.scheduling.x-k8s.io.yaml"
SP_SCHEDULING = "scheduling.x-k8s.io/v1alpha1"


@contextmanager
def pod_group_crd(kube: Client) -> Iterator[None]:
    """The PodGroup CRD, served (discovery lists PodGroup) until the block ends."""
    crd = yaml.safe_load(POD_GROUP_CRD.read_text())
    try:
        kube.create(crd)
    except ApiError as exc:
        if not exc.conflict:
            raise

    def served() -> bool:
        try:
            kube.resource(SP_SCHEDULING, "PodGroup")
        except ApiError:
            return False
        return True

    wait_until("the PodGroup CRD served", served, timeout=60)
    try:
        yield
    finally:
        kube.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd["metadata"]["name"])
