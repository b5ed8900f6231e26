"""Installing the operator from ``config/default`` the way a user would, with a local image.

:func:`operator_overlay` writes a kustomize overlay of ``config/default`` that takes the image
through ``images:`` (config/default names both the operator's and the engines' default image
``ghcr.io/corral-dev/corral``, so one entry sets both) and, optionally, pins the operator's pods
with a nodeSelector (on a dev cluster only the real node runs containers). The overlay is data
dumped as YAML; no value is spliced into YAML text.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import yaml

RELEASE_IMAGE: Final = "ghcr.io/corral-dev/corral"


def operator_overlay(
    directory: Path, base: Path, image: str, node_selector: Mapping[str, str] | None = None
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
