"""The machine's one real node (containerd, kubelet, kube-proxy), split by concern:

- :mod:`.lock`: the machine-wide ownership (one real node per machine);
- :mod:`.host`: the host state a node changes (bridges, routes, sysctls, mounts, cgroups,
  iptables), recorded and restored;
- :mod:`.daemons`: the daemons' configurations and how they are named and stopped;
- :mod:`.node`: :class:`RealNode`, which brings one up and down;
- :mod:`.provider`: :class:`RealNodes`, the node provider a ``LocalCluster`` takes.
"""

from corral_dev.realnode.daemons import NODE_NAME, Daemon
from corral_dev.realnode.host import RealNodeError
from corral_dev.realnode.node import STATE_FILE, NodeState, RealNode, wait_until_free
from corral_dev.realnode.provider import RealNodes

__all__ = [
    "NODE_NAME",
    "STATE_FILE",
    "Daemon",
    "NodeState",
    "RealNode",
    "RealNodeError",
    "RealNodes",
    "wait_until_free",
]
