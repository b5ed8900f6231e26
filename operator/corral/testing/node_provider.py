"""What :class:`~corral.testing.controlplane.LocalCluster` needs from a provider of real nodes.

A cluster with kwok's fake nodes only needs none. A provider of real nodes (kubelets that run
containers) is handed to ``LocalCluster.up``/``attach``; the development harness has one for
this machine's real node (``corral_dev.realnode.RealNodes``). The order is fixed by the
control plane: ``claim`` → ``prepare`` → (control plane starts) → ``up``; and on the way down
``down`` → (control plane stops) → ``release``. After a failed start, ``down`` and ``release``
run too, so a provider must undo a partial ``prepare`` or ``up``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

# kubeconfig name -> (user, groups), as corral.testing.credentials.IDENTITIES.
Identities = Mapping[str, tuple[str, tuple[str, ...]]]


class ProvidedNode(Protocol):
    """One cluster directory's real node(s)."""

    def prepare(self) -> None:
        """Before the control plane starts: record and change the host state the node needs."""

    def up(self, kubectl: Sequence[str]) -> None:
        """Once the API server is ready: join, and return when Ready. ``kubectl`` is the admin's."""

    def down(self, kubectl: Sequence[str] | None) -> None:
        """Drain (through ``kubectl`` when the API server still answers) and stop."""

    def release(self) -> None:
        """After the control plane stopped: give back what ``prepare`` took."""


class NodeProvider(Protocol):
    """Real nodes for a :class:`LocalCluster`."""

    @property
    def address(self) -> str:
        """The address the API server listens on, reachable from the nodes and their pods."""

    @property
    def identities(self) -> Identities:
        """The static-token identities the nodes' daemons use (a kubeconfig is written each)."""

    def claim(self, directory: Path, *, progress: bool) -> ProvidedNode:
        """Take the node(s) for the cluster in ``directory`` (may wait for another to go)."""

    def attach(self, directory: Path) -> ProvidedNode | None:
        """The node(s) a cluster in ``directory`` claimed earlier, if any."""
