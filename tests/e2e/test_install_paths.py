"""The two install paths users expect render the same operator: `kubectl kustomize
config/default` and `helm template charts/corral`, with the images set each one's way (kustomize
``images:``, Helm values). The real-node tests install both for real."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral import __version__
from corral.testing.binaries import ensure_binaries
from corral_dev.builds import ensure_helm

# Waiting for the machine's real node (the lock) and cold builds take minutes on two cores.
pytestmark = pytest.mark.timeout(1800)


ROOT = Path(__file__).resolve().parents[2]
Key = tuple[str, str, str]


def objects(text: str) -> dict[Key, dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(text) if d]
    return {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in docs}


def kustomize(directory: Path) -> dict[Key, dict[str, Any]]:
    kubectl = ensure_binaries().kubectl
    result = subprocess.run(
        [str(kubectl), "kustomize", str(directory)], capture_output=True, text=True, check=True
    )
    return objects(result.stdout)


def helm_template(*values: str) -> dict[Key, dict[str, Any]]:
    args = [arg for value in values for arg in ("--set", value)]
    result = subprocess.run(
        [str(ensure_helm()), "template", "corral", str(ROOT / "charts" / "corral"),
         "--include-crds", *args],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return objects(result.stdout)


def container(objs: dict[Key, dict[str, Any]]) -> dict[str, Any]:
    deployment = objs[("Deployment", "corral-system", "corral-operator")]
    first: dict[str, Any] = deployment["spec"]["template"]["spec"]["containers"][0]
    return first


def engine_image(objs: dict[Key, dict[str, Any]]) -> str:
    env = {e["name"]: e.get("value") for e in container(objs)["env"]}
    return str(env["CORRAL_ENGINE_IMAGE"])


def test_helm_and_kustomize_render_the_same_operator() -> None:
    from_kustomize = kustomize(ROOT / "config" / "default")
    from_helm = helm_template()
    assert sorted(from_helm) == sorted(from_kustomize)
    for key, obj in from_kustomize.items():
        other = from_helm[key]
        if key[0] == "Deployment":
            # Helm states the pull policy its values carry; kustomize leaves the default.
            other["spec"]["template"]["spec"]["containers"][0].pop("imagePullPolicy")
        assert other == obj, key


def test_default_images_are_the_release() -> None:
    objs = kustomize(ROOT / "config" / "default")
    assert container(objs)["image"] == f"ghcr.io/corral-dev/corral:{__version__}"
    assert engine_image(objs) == f"ghcr.io/corral-dev/corral:{__version__}"
    chart = yaml.safe_load((ROOT / "charts" / "corral" / "Chart.yaml").read_text())
    assert chart["appVersion"] == __version__


@pytest.mark.parametrize(
    ("images", "operator", "engine"),
    [
        pytest.param(
            [{"name": "corral-engine", "newName": "registry.example/engine", "newTag": "2"}],
            f"ghcr.io/corral-dev/corral:{__version__}", "registry.example/engine:2",
            id="engine only",
        ),
        pytest.param(
            [{"name": "corral-operator", "newName": "registry.example/op", "newTag": "3"}],
            "registry.example/op:3", f"ghcr.io/corral-dev/corral:{__version__}",
            id="operator only",
        ),
    ],
)  # fmt: skip
def test_kustomize_images_set_operator_and_engine_apart(
    tmp_path: Path, images: list[dict[str, str]], operator: str, engine: str
) -> None:
    # What `kustomize edit set image corral-engine=...` in config/default does.
    for part in ("default", "crd", "rbac", "manager"):
        shutil.copytree(ROOT / "config" / part, tmp_path / "config" / part)
    shutil.copytree(ROOT / "crds", tmp_path / "crds")
    kustomization = tmp_path / "config" / "default" / "kustomization.yaml"
    data = yaml.safe_load(kustomization.read_text())
    by_name = {i["name"]: i for i in data["images"]}
    for image in images:
        by_name[image["name"]] = image
    data["images"] = list(by_name.values())
    kustomization.write_text(yaml.safe_dump(data))
    objs = kustomize(tmp_path / "config" / "default")
    assert (container(objs)["image"], engine_image(objs)) == (operator, engine)


def test_helm_values_set_operator_and_engine_apart() -> None:
    objs = helm_template(
        "image.repository=registry.example/op", "image.tag=3",
        "engineImage=registry.example/engine:2", "replicas=3", "namespace=ops",
        "nodeSelector.pool=system",
    )  # fmt: skip
    deployment = objs[("Deployment", "ops", "corral-operator")]
    pod = deployment["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "registry.example/op:3"
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["CORRAL_ENGINE_IMAGE"] == "registry.example/engine:2"
    assert deployment["spec"]["replicas"] == 3
    assert pod["nodeSelector"] == {"pool": "system"}
    assert ("ServiceAccount", "ops", "corral-operator") in objs
    binding = objs[("ClusterRoleBinding", "", "corral:operator")]
    assert binding["subjects"][0]["namespace"] == "ops"
