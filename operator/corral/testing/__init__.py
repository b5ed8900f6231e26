"""Testing against a real local control plane (kube-apiserver, etcd, kube-controller-manager,
upstream kube-scheduler, kwok), for Corral's own tests and for users testing their plugins."""

from corral.testing.binaries import Binaries, BinariesError, ensure_binaries, load_versions
from corral.testing.controlplane import ControlPlaneError, LocalCluster
from corral.testing.node_provider import NodeProvider, ProvidedNode
from corral.testing.nodes import add_nodes, fake_node, parse_labels, parse_taints

__all__ = [
    "Binaries",
    "BinariesError",
    "ControlPlaneError",
    "LocalCluster",
    "NodeProvider",
    "ProvidedNode",
    "add_nodes",
    "ensure_binaries",
    "fake_node",
    "load_versions",
    "parse_labels",
    "parse_taints",
]
