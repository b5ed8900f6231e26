"""This machine's one real node as a :class:`corral.testing.NodeProvider`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from corral.testing.node_provider import Identities
from corral_dev.realnode.daemons import NODE_IDENTITIES
from corral_dev.realnode.host import API_ADDRESS
from corral_dev.realnode.node import RealNode


@dataclass(frozen=True)
class RealNodes:
    """``images``: docker archives imported into the node's containerd when it joins;
    ``lock_timeout``: seconds to wait for another cluster's real node to go."""

    images: Sequence[Path] = ()
    lock_timeout: float = 0.0

    @property
    def address(self) -> str:
        return API_ADDRESS

    @property
    def identities(self) -> Identities:
        return NODE_IDENTITIES

    def claim(self, directory: Path, *, progress: bool) -> _Joined:
        return _Joined(RealNode.claim(directory, timeout=self.lock_timeout, progress=progress),
                       self.images)  # fmt: skip

    def attach(self, directory: Path) -> _Joined | None:
        node = RealNode.attach(directory)
        return None if node is None else _Joined(node, self.images)


@dataclass(frozen=True)
class _Joined:
    node: RealNode
    images: Sequence[Path]

    def prepare(self) -> None:
        self.node.prepare_host()

    def up(self, kubectl: Sequence[str]) -> None:
        self.node.up(kubectl, self.images)

    def down(self, kubectl: Sequence[str] | None) -> None:
        self.node.down(cluster_kubectl=kubectl)

    def release(self) -> None:
        self.node.release_host()
