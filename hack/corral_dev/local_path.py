"""Rancher's local-path provisioner as a host process, for volumes really mounted on the real
node: a claim of its class becomes a hostPath PersistentVolume under ``<directory>/volumes``
of the node the scheduler picked, created and removed by a helper pod on that node.

:meth:`LocalPathStorage.start` creates its namespace, ServiceAccount and least-privilege RBAC
(upstream's deploy/local-path-storage.yaml: helper pods in its namespace, PVs, reads of nodes,
claims, ConfigMaps, StorageClasses), the ConfigMap with the setup/teardown scripts, and starts
``local-path-provisioner start`` with ``helper_image`` (an image the node already has; nothing
is pulled). :meth:`LocalPathStorage.stop` stops it by pid and deletes what ``start`` made; the
volumes directory is the caller's (a test's tmp_path).
"""

from __future__ import annotations

import json
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from corral.k8s import Client
from corral.k8s.kubeconfig import write_token_kubeconfig
from corral.testing import processes
from corral_dev.builds import ensure_local_path_provisioner

_RBAC: Final = "rbac.authorization.k8s.io/v1"
ACCOUNT: Final = "local-path-provisioner"
CLUSTER_RULES: Final[tuple[dict[str, Any], ...]] = (
    {
        "apiGroups": [""],
        "resources": ["nodes", "persistentvolumeclaims", "configmaps", "pods", "pods/log"],
        "verbs": ["get", "list", "watch"],
    },
    {
        "apiGroups": [""],
        "resources": ["persistentvolumes"],
        "verbs": ["get", "list", "watch", "create", "patch", "update", "delete"],
    },
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
    {
        "apiGroups": ["storage.k8s.io"],
        "resources": ["storageclasses"],
        "verbs": ["get", "list", "watch"],
    },
)
HELPER_RULES: Final[tuple[dict[str, Any], ...]] = (
    {
        "apiGroups": [""],
        "resources": ["pods"],
        "verbs": ["get", "list", "watch", "create", "patch", "update", "delete"],
    },
)
SETUP: Final = '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n'
TEARDOWN: Final = '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n'


@dataclass
class LocalPathStorage:
    admin: Client
    directory: Path
    provisioner: str
    namespace: str = field(default_factory=lambda: f"corral-local-path-{uuid.uuid4().hex[:6]}")
    child: subprocess.Popen[bytes] | None = None
    executable: str = ""

    @property
    def volumes(self) -> Path:
        return self.directory / "volumes"

    @classmethod
    def start(cls, admin: Client, directory: Path, helper_image: str) -> LocalPathStorage:
        binary = ensure_local_path_provisioner()
        storage = cls(admin, directory.resolve(), provisioner="")
        storage.provisioner = f"{storage.namespace}.corral.dev/local-path"
        storage.volumes.mkdir(parents=True, exist_ok=True)
        try:
            kubeconfig = storage._identity()
            storage._launch(binary, kubeconfig, helper_image)
        except BaseException:
            storage.stop()
            raise
        return storage

    def _identity(self) -> Path:
        ns = self.namespace
        subject = [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": ns}]
        ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ns}
        for obj in (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": ACCOUNT, "namespace": ns},
            },
            {
                "apiVersion": _RBAC,
                "kind": "ClusterRole",
                "metadata": {"name": ns},
                "rules": list(CLUSTER_RULES),
            },
            {
                "apiVersion": _RBAC,
                "kind": "ClusterRoleBinding",
                "metadata": {"name": ns},
                "roleRef": ref,
                "subjects": subject,
            },
            {
                "apiVersion": _RBAC,
                "kind": "Role",
                "metadata": {"name": "helper", "namespace": ns},
                "rules": list(HELPER_RULES),
            },
            {
                "apiVersion": _RBAC,
                "kind": "RoleBinding",
                "metadata": {"name": "helper", "namespace": ns},
                "roleRef": {**ref, "kind": "Role", "name": "helper"},
                "subjects": subject,
            },
        ):
            self.admin.create(obj)
        path = self.directory / "local-path.kubeconfig"
        token = self.admin.request_token(ns, ACCOUNT, expiration_seconds=24 * 3600)
        write_token_kubeconfig(path, self.admin, token, f"{ns}:{ACCOUNT}")
        return path

    def _launch(self, binary: Path, kubeconfig: Path, helper_image: str) -> None:
        config = {
            "nodePathMap": [
                {"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": [str(self.volumes)]}
            ]
        }
        helper = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "helper-pod"},
            "spec": {
                "containers": [
                    {"name": "helper-pod", "image": helper_image, "imagePullPolicy": "Never"}
                ]
            },
        }
        files = {
            "config.json": json.dumps(config),
            "setup": SETUP,
            "teardown": TEARDOWN,
            "helperPod.yaml": yaml.safe_dump(helper),
        }
        self.admin.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "local-path-config", "namespace": self.namespace},
                "data": files,
            }
        )
        for name, text in files.items():
            (self.directory / name).write_text(text)
        argv = [
            str(binary),
            "--debug",
            "start",
            f"--config={self.directory / 'config.json'}",
            f"--helper-pod-file={self.directory / 'helperPod.yaml'}",
            f"--kubeconfig={kubeconfig}",
            f"--namespace={self.namespace}",
            f"--provisioner-name={self.provisioner}",
            f"--helper-image={helper_image}",
            "--configmap-name=local-path-config",
            f"--service-account-name={ACCOUNT}",
        ]
        self.executable = str(binary)
        self.child = processes.spawn(
            "local-path-provisioner", argv, self.directory / "logs", self.directory
        )

    def storage_class(self, name: str) -> dict[str, Any]:
        body = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": name},
            "provisioner": self.provisioner,
            "volumeBindingMode": "WaitForFirstConsumer",
            "reclaimPolicy": "Delete",
        }
        self.admin.create(body)
        return body

    def log(self) -> str:
        path = self.directory / "logs" / "local-path-provisioner.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.child is not None:
            processes.terminate(self.child.pid, self.executable)
            self.child.wait(timeout=10)
            self.child = None
        self.admin.delete(_RBAC, "ClusterRoleBinding", self.namespace)
        self.admin.delete(_RBAC, "ClusterRole", self.namespace)
        self.admin.delete("v1", "Namespace", self.namespace)
