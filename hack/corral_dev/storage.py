"""Dynamic provisioning for the volume tests: the real CSI external-provisioner driving
``csi-capacity-driver`` (assets/), as host processes against the local control plane.

- :meth:`CsiStorage.start` creates the provisioner's ServiceAccount with least-privilege RBAC
  (upstream's deploy/kubernetes/rbac.yaml without snapshots, leases, pods and replicasets:
  no snapshots, no leader election, CSIStorageCapacity objects without an owner), the
  CSIDriver object (``storageCapacity: true``, no attach), and starts the driver and
  ``csi-provisioner --enable-capacity`` (capacity polled every second, strict topology: a
  WaitForFirstConsumer volume goes to the selected node's segment). Logs are in
  ``<directory>/logs``.
- Topology is :data:`TOPOLOGY_KEY` (the zone label ``hack/dev-cluster nodes --zones`` sets).
  :meth:`CsiStorage.register_nodes` creates each node's CSINode entry for the driver, as the
  node-driver-registrar does on a kubelet node (kwok nodes have none); the provisioner
  publishes capacity only for segments of registered nodes.
- :meth:`CsiStorage.set_capacity` rewrites the driver's per-zone totals; the provisioner
  republishes the CSIStorageCapacity objects at its next poll.
- :meth:`CsiStorage.stop` stops both processes (by pid) and deletes what ``start`` and
  ``register_nodes`` created (the CSIStorageCapacity objects go with the namespace).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from corral.k8s import Client
from corral.k8s.kubeconfig import write_token_kubeconfig
from corral.testing import processes
from corral_dev.builds import StorageBinaries, ensure_storage_binaries

DRIVER: Final = "capacity.csi.corral.dev"
TOPOLOGY_KEY: Final = "topology.kubernetes.io/zone"
READY_TIMEOUT: Final = 60.0
_RBAC: Final = "rbac.authorization.k8s.io/v1"
_STORAGE: Final = "storage.k8s.io/v1"

PROVISIONER_RULES: Final[tuple[dict[str, Any], ...]] = (
    {
        "apiGroups": [""],
        "resources": ["persistentvolumes"],
        "verbs": ["get", "list", "watch", "create", "patch", "delete"],
    },
    {
        "apiGroups": [""],
        "resources": ["persistentvolumeclaims"],
        "verbs": ["get", "list", "watch", "update"],
    },
    {
        "apiGroups": ["storage.k8s.io"],
        "resources": ["storageclasses", "csinodes"],
        "verbs": ["get", "list", "watch"],
    },
    {
        "apiGroups": [""],
        "resources": ["events"],
        "verbs": ["list", "watch", "create", "update", "patch"],
    },
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
    {
        "apiGroups": ["storage.k8s.io"],
        "resources": ["volumeattachments"],
        "verbs": ["get", "list", "watch"],
    },
)
CAPACITY_RULES: Final[tuple[dict[str, Any], ...]] = (
    {
        "apiGroups": ["storage.k8s.io"],
        "resources": ["csistoragecapacities"],
        "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
    },
)


@dataclass
class CsiStorage:
    admin: Client
    directory: Path
    namespace: str
    pids: list[tuple[int, str]] = field(default_factory=list)
    children: list[subprocess.Popen[bytes]] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The prefix of every object ``start`` created (unique per instance)."""
        return self.namespace

    @property
    def capacity_file(self) -> Path:
        return self.directory / "capacity.json"

    @classmethod
    def start(
        cls,
        admin: Client,
        directory: Path,
        capacity: Mapping[str, int],
        binaries: StorageBinaries | None = None,
    ) -> CsiStorage:
        binaries = binaries or ensure_storage_binaries()
        storage = cls(admin, directory.resolve(), f"corral-storage-{uuid.uuid4().hex[:6]}")
        storage.directory.mkdir(parents=True, exist_ok=True)
        storage.set_capacity(capacity)
        try:
            kubeconfig = storage._provisioner_identity()
            admin.create(
                {
                    "apiVersion": _STORAGE,
                    "kind": "CSIDriver",
                    "metadata": {"name": DRIVER},
                    "spec": {
                        "attachRequired": False,
                        "storageCapacity": True,
                        "podInfoOnMount": False,
                    },
                }
            )
            storage._launch(binaries, kubeconfig)
        except BaseException:
            storage.stop()
            raise
        return storage

    def _provisioner_identity(self) -> Path:
        ns, account = self.namespace, "csi-provisioner"
        subject = [{"kind": "ServiceAccount", "name": account, "namespace": ns}]
        self.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        self.admin.create(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": account, "namespace": ns},
            }
        )
        self.admin.create(
            {
                "apiVersion": _RBAC,
                "kind": "ClusterRole",
                "metadata": {"name": ns},
                "rules": list(PROVISIONER_RULES),
            }
        )
        ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ns}
        self.admin.create(
            {
                "apiVersion": _RBAC,
                "kind": "ClusterRoleBinding",
                "metadata": {"name": ns},
                "roleRef": ref,
                "subjects": subject,
            }
        )
        self.admin.create(
            {
                "apiVersion": _RBAC,
                "kind": "Role",
                "metadata": {"name": "capacity", "namespace": ns},
                "rules": list(CAPACITY_RULES),
            }
        )
        self.admin.create(
            {
                "apiVersion": _RBAC,
                "kind": "RoleBinding",
                "metadata": {"name": "capacity", "namespace": ns},
                "roleRef": {**ref, "kind": "Role", "name": "capacity"},
                "subjects": subject,
            }
        )
        path = self.directory / "csi-provisioner.kubeconfig"
        token = self.admin.request_token(ns, account, expiration_seconds=24 * 3600)
        write_token_kubeconfig(path, self.admin, token, f"{ns}:{account}")
        return path

    def _launch(self, binaries: StorageBinaries, kubeconfig: Path) -> None:
        socket = self.directory / "csi.sock"
        driver = str(binaries["csi-capacity-driver"])
        argv = [
            driver,
            f"--endpoint=unix://{socket}",
            f"--name={DRIVER}",
            f"--topology-key={TOPOLOGY_KEY}",
            f"--capacity-file={self.capacity_file}",
        ]
        self._spawn("csi-capacity-driver", argv, driver)
        processes.wait_for(
            "the CSI driver's socket", socket.exists, timeout=READY_TIMEOUT, alive=self._dead
        )
        provisioner = str(binaries["csi-provisioner"])
        argv = [
            provisioner,
            f"--csi-address={socket}",
            f"--kubeconfig={kubeconfig}",
            "--enable-capacity",
            "--capacity-ownerref-level=-1",
            "--capacity-poll-interval=1s",
            "--strict-topology",
            "--v=3",
        ]
        # env(1) execs the provisioner in place: the pid and argv[0] are the provisioner's.
        env_argv = ["env", f"NAMESPACE={self.namespace}", *argv]
        self._spawn("csi-provisioner", env_argv, provisioner)

    def _spawn(self, name: str, argv: list[str], executable: str) -> None:
        child = processes.spawn(name, argv, self.directory / "logs", self.directory)
        self.children.append(child)
        self.pids.append((child.pid, executable))

    def _dead(self) -> str | None:
        for pid, executable in self.pids:
            if not processes.is_running(pid):
                name = Path(executable).name
                return f"{name} exited:\n{processes.log_tail(self.directory / 'logs', name)}"
        return None

    def set_capacity(self, capacity: Mapping[str, int]) -> None:
        """Per zone, the driver's total bytes (what its volumes there use is subtracted)."""
        tmp = self.capacity_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(dict(capacity)))
        tmp.replace(self.capacity_file)

    def register_nodes(self, names: Iterable[str]) -> None:
        for node in names:
            body = {
                "apiVersion": _STORAGE,
                "kind": "CSINode",
                "metadata": {"name": node},
                "spec": {
                    "drivers": [{"name": DRIVER, "nodeID": node, "topologyKeys": [TOPOLOGY_KEY]}]
                },
            }
            self.admin.create(body)
            self.nodes.append(node)

    def storage_class(self, name: str, binding_mode: str = "WaitForFirstConsumer") -> None:
        """A StorageClass of the driver (deleted by :meth:`stop`)."""
        self.admin.create(
            {
                "apiVersion": _STORAGE,
                "kind": "StorageClass",
                "metadata": {"name": name, "labels": {"corral.dev/storage": self.name}},
                "provisioner": DRIVER,
                "volumeBindingMode": binding_mode,
                "reclaimPolicy": "Delete",
            }
        )

    def capacities(self) -> list[dict[str, Any]]:
        """The CSIStorageCapacity objects the provisioner published."""
        return self.admin.list_items(_STORAGE, "CSIStorageCapacity", self.namespace)

    def stop(self) -> None:
        for pid, executable in reversed(self.pids):
            processes.terminate(pid, executable)
        for child in self.children:  # reap them
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=5)
        self.pids.clear()
        self.children.clear()
        doomed = [(_STORAGE, "CSINode", n, None) for n in self.nodes]
        doomed += [
            (_STORAGE, "StorageClass", sc["metadata"]["name"], None)
            for sc in self.admin.list_items(
                _STORAGE, "StorageClass", label_selector=f"corral.dev/storage={self.name}"
            )
        ]
        doomed += [
            (_STORAGE, "CSIDriver", DRIVER, None),
            (_RBAC, "ClusterRoleBinding", self.name, None),
            (_RBAC, "ClusterRole", self.name, None),
            ("v1", "Namespace", self.namespace, None),
        ]
        for api_version, kind, name, namespace in doomed:
            self.admin.delete(api_version, kind, name, namespace)
