"""The real node's kubelet allows no anonymous access: an anonymous caller gets 401, a
ServiceAccount the API server does not authorize for ``nodes/proxy`` gets 403 (the kubelet's
webhook authorizer asks the real API server), and the API server itself, by its client
certificate, still reads the kubelet's pods."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator

import pytest

from corral.k8s import Client
from corral.testing import LocalCluster
from corral_dev.builds import ensure_node_binaries
from corral_dev.images import python_base
from corral_dev.realnode import NODE_NAME, RealNodes
from corral_dev.realnode.daemons import KUBELET_PORT
from corral_dev.realnode.host import API_ADDRESS

pytestmark = pytest.mark.timeout(1800)  # the real node's lock and its start
KUBELET = f"https://{API_ADDRESS}:{KUBELET_PORT}"


@pytest.fixture(scope="module")
def real_cluster(
    tmp_path_factory: pytest.TempPathFactory, lock_wait: Callable[[], float]
) -> Iterator[LocalCluster]:
    ensure_node_binaries()
    cluster = LocalCluster.up(
        tmp_path_factory.mktemp("real-kubelet"),
        nodes=RealNodes(images=[python_base()], lock_timeout=lock_wait()),
        progress=True,
    )
    try:
        yield cluster
    finally:
        cluster.down()


def _kubelet(path: str, token: str | None = None) -> int:
    """The status of a GET to the kubelet's API (its serving certificate is its own)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(KUBELET + path)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


@pytest.mark.parametrize("path", ["/pods", "/runningpods/", "/configz", "/logs/"])
def test_an_anonymous_caller_is_refused(kube: Client, path: str) -> None:
    assert _kubelet(path) == 401


def test_a_service_account_without_rights_is_forbidden(kube: Client) -> None:
    ns = f"t-{uuid.uuid4().hex[:6]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    try:
        kube.create({"apiVersion": "v1", "kind": "ServiceAccount",
                     "metadata": {"name": "nobody", "namespace": ns}})  # fmt: skip
        token = kube.request_token(ns, "nobody")
        assert _kubelet("/pods", token) == 403  # the real API server's SubjectAccessReview
    finally:
        kube.request("DELETE", f"/api/v1/namespaces/{ns}")


def test_the_api_server_reads_the_kubelet_by_its_client_certificate(kube: Client) -> None:
    pods = kube.request("GET", f"/api/v1/nodes/{NODE_NAME}/proxy/pods")
    assert pods["kind"] == "PodList", json.dumps(pods)[:200]
