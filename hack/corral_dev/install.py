"""Installing the operator the way a user would (``docs/install.md``), with a local image.

:func:`operator_overlay` writes a kustomize overlay of ``config/default`` that takes the image
through ``images:`` (config/default names both the operator's and the engines' default image
``ghcr.io/corral-dev/corral``, so one entry sets both), optionally turns on Components
(``config/webhook``), moves everything with ``namespace:``, and pins the operator's pods with a
nodeSelector (on a dev cluster only the real node runs containers). The overlay is data dumped
as YAML; no value is spliced into YAML text. :func:`prerequisites` is what the install needs
first: the namespace and the CRDs (``config/crd``), which are not part of ``config/default`` so
that deleting the operator never deletes them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import yaml

RELEASE_IMAGE: Final = "ghcr.io/corral-dev/corral"


def operator_overlay(
    directory: Path,
    base: Path,
    image: str,
    node_selector: Mapping[str, str] | None = None,
    *,
    components: Sequence[Path] = (),
    namespace: str | None = None,
) -> Path:
    """Write ``directory/kustomization.yaml``; ``image`` is ``name:tag``."""
    name, _, tag = image.rpartition(":")
    directory.mkdir(parents=True, exist_ok=True)
    kustomization: dict[str, object] = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(base, directory)],
        "images": [{"name": RELEASE_IMAGE, "newName": name, "newTag": tag}],
    }
    if components:
        kustomization["components"] = [os.path.relpath(c, directory) for c in components]
    if namespace:
        kustomization["namespace"] = namespace
    if node_selector:
        patch = [
            {"op": "add", "path": "/spec/template/spec/nodeSelector", "value": dict(node_selector)}
        ]
        kustomization["patches"] = [
            {
                "target": {"kind": "Deployment", "name": "corral-operator"},
                "patch": yaml.safe_dump(patch),
            }
        ]
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(kustomization, sort_keys=False))
    return directory


def prerequisites(
    kubectl: Callable[..., Any], root: Path, namespace: str = "corral-system"
) -> None:
    """Create ``namespace`` (if missing) and apply ``root/config/crd``, as docs/install.md's
    first two steps; ``kubectl(*args, input=...)`` runs kubectl."""
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    kubectl("apply", "--server-side", "--field-manager=corral-install", "-f", "-",
            input=json.dumps(ns))  # fmt: skip
    kubectl("apply", "--server-side", "-k", str(root / "config" / "crd"))
