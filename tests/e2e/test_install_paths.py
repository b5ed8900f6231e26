"""The two install paths users expect render the same operator: kustomize (``config/crd``,
``config/default`` and its Components) and ``helm template charts/corral``, with the images set
each one's way (kustomize ``images:``, Helm values); a ``namespace:`` overlay moves every part,
the chart passes ``helm lint`` and its package stands alone. The real-node tests install both for
real (tests/e2e/realnode/test_real_lifecycle.py)."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import tarfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral import __version__
from corral.k8s import Client
from corral.testing import LocalCluster
from corral.testing.binaries import ensure_binaries
from corral_dev.builds import ensure_helm
from support import sp_crds

# Waiting for the machine's real node (the lock) and cold builds take minutes on two cores.
pytestmark = pytest.mark.timeout(1800)


ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "corral"
Key = tuple[str, str, str]
# Labels only Helm sets (the chart's own are the install's).
HELM_LABELS = (
    "helm.sh/chart",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/managed-by",
)


def objects(text: str) -> dict[Key, dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(text) if d]
    return {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in docs}


def kustomize(directory: Path) -> dict[Key, dict[str, Any]]:
    kubectl = ensure_binaries().kubectl
    result = subprocess.run(
        [str(kubectl), "kustomize", str(directory)], capture_output=True, text=True, check=True
    )
    return objects(result.stdout)


def overlay(
    directory: Path,
    resources: list[Path],
    components: list[str] | None = None,
    namespace: str | None = None,
) -> Path:
    """An overlay of ``resources`` with config/'s ``components``; data dumped as YAML."""
    directory.mkdir(parents=True, exist_ok=True)
    body: dict[str, Any] = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(r, directory) for r in resources],
        "components": [os.path.relpath(ROOT / "config" / c, directory) for c in components or []],
    }
    if namespace:
        body["namespace"] = namespace
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(body))
    return directory


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ensure_helm()), *args], capture_output=True, text=True, check=False)


def helm_template(*values: str, chart: Path = CHART, namespace: str = "corral-system") -> Any:
    args = [arg for value in values for arg in ("--set", value)]
    result = helm("template", "corral", str(chart), "--namespace", namespace, *args)
    assert result.returncode == 0, result.stderr
    return objects(result.stdout)


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` without what only one install path sets: Helm's labels and the pull policy it
    states; kustomize's GitOps annotations and Helm's keep policy on the CRDs; the order of
    list entries that are merged by name (env, ports, volumes)."""
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    for labels in (meta.get("labels"), *_pod_labels(out)):
        for key in HELM_LABELS:
            (labels or {}).pop(key, None)
    if out["kind"] == "CustomResourceDefinition":
        meta.pop("annotations", None)
    if not meta.get("labels"):
        meta.pop("labels", None)
    if out["kind"] == "Deployment":
        pod = out["spec"]["template"]["spec"]
        pod["volumes"] = sorted(pod.get("volumes", []), key=lambda v: v["name"])
        for c in pod["containers"]:
            c.pop("imagePullPolicy", None)
            for field in ("env", "ports", "volumeMounts"):
                c[field] = sorted(c.get(field, []), key=lambda e: e["name"])
    return out


def _pod_labels(obj: dict[str, Any]) -> list[dict[str, str]]:
    if obj["kind"] != "Deployment":
        return []
    return [obj["spec"]["template"]["metadata"].setdefault("labels", {})]


def assert_same(from_kustomize: dict[Key, Any], from_helm: dict[Key, Any]) -> None:
    assert sorted(from_helm) == sorted(from_kustomize)
    for key, obj in from_kustomize.items():
        assert comparable(from_helm[key]) == comparable(obj), key


def container(objs: dict[Key, dict[str, Any]], namespace: str = "corral-system") -> dict[str, Any]:
    deployment = objs[("Deployment", namespace, "corral-operator")]
    first: dict[str, Any] = deployment["spec"]["template"]["spec"]["containers"][0]
    return first


def engine_image(objs: dict[Key, dict[str, Any]]) -> str:
    env = {e["name"]: e.get("value") for e in container(objs)["env"]}
    return str(env["CORRAL_ENGINE_IMAGE"])


@pytest.mark.parametrize(
    ("components", "values"),
    [
        pytest.param([], [], id="default"),
        pytest.param(["webhook"], ["webhook.enabled=true"], id="webhook"),
        pytest.param(
            ["webhook", "certmanager"],
            ["webhook.enabled=true", "webhook.certManager.enabled=true"],
            id="webhook with cert-manager",
        ),
        pytest.param(["prometheus"], ["metrics.enabled=true"], id="prometheus"),
    ],
)
def test_helm_and_kustomize_render_the_same_operator(
    tmp_path: Path, components: list[str], values: list[str]
) -> None:
    base = overlay(tmp_path / "install", [ROOT / "config" / "crd", ROOT / "config" / "default"],
                   components)  # fmt: skip
    assert_same(kustomize(base), helm_template(*values))


def test_the_crds_are_kept_the_gitops_way_and_helms() -> None:
    for obj in kustomize(ROOT / "config" / "crd").values():
        assert obj["metadata"]["annotations"] == {
            "argocd.argoproj.io/sync-options": "Delete=false",
            "kustomize.toolkit.fluxcd.io/prune": "disabled",
        }
    crds = [o for o in helm_template().values() if o["kind"] == "CustomResourceDefinition"]
    assert {o["metadata"]["name"] for o in crds} == {
        "schedulerprofiles.corral.dev",
        "clusterkopfpeerings.kopf.dev",
    }
    assert all(o["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep" for o in crds)
    unkept = helm_template("crds.keep=false")
    assert not [o for o in unkept.values() if o["metadata"].get("annotations")]
    assert not [
        k for k in helm_template("crds.install=false") if k[0] == "CustomResourceDefinition"
    ]


SP_CRDS = {
    "podgroups.scheduling.x-k8s.io",
    "elasticquotas.scheduling.x-k8s.io",
    "noderesourcetopologies.topology.node.k8s.io",
}
CORRAL_CRDS = {"schedulerprofiles.corral.dev", "clusterkopfpeerings.kopf.dev"}


def crds(objs: dict[Key, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {n: o for (kind, _, n), o in objs.items() if kind == "CustomResourceDefinition"}


@pytest.mark.parametrize(
    ("values", "names", "kept"),
    [
        pytest.param([], CORRAL_CRDS, True, id="default renders no scheduler-plugins CRD"),
        pytest.param(
            ["crds.schedulerPlugins=true"],
            CORRAL_CRDS | SP_CRDS,
            True,
            id="true renders the three, labelled and kept",
        ),
        pytest.param(
            ["crds.schedulerPlugins=true", "crds.keep=false"],
            CORRAL_CRDS | SP_CRDS,
            False,
            id="true with keep=false renders them unkept",
        ),
        # crds.install is the one switch of the chart's CRDs: off, the release renders none (the
        # CRDs are installed some other way) and NOTES.txt says the value was ignored.
        pytest.param(
            ["crds.install=false", "crds.schedulerPlugins=true"],
            set(),
            True,
            id="install=false renders none, schedulerPlugins or not",
        ),
    ],
)
def test_scheduler_plugins_crds_value(values: list[str], names: set[str], kept: bool) -> None:
    rendered = crds(helm_template(*values))
    assert set(rendered) == names
    # Helm's labels, as the chart's own CRDs have them (the rest of theirs are in their sources).
    own = crds(helm_template())["schedulerprofiles.corral.dev"]["metadata"]["labels"]
    helm_labels = {k: v for k, v in own.items() if k in HELM_LABELS}
    assert sorted(helm_labels) == sorted(HELM_LABELS)
    for name, obj in rendered.items():
        labels = obj["metadata"]["labels"]
        assert {k: v for k, v in labels.items() if k in HELM_LABELS} == helm_labels, name
        annotations = obj["metadata"].get("annotations") or {}
        assert (annotations.get("helm.sh/resource-policy") == "keep") is kept, name
    for name in names & SP_CRDS:
        # The chart's copy as crds/scheduler-plugins has it, only Helm's labels and keep added.
        source = yaml.safe_load((ROOT / "crds" / "scheduler-plugins" / f"{name}.yaml").read_text())
        got = copy.deepcopy(rendered[name])
        assert got["metadata"].pop("labels") == helm_labels, name
        got["metadata"]["annotations"].pop("helm.sh/resource-policy", None)
        assert got == source, name


def test_scheduler_plugins_crds_are_the_kustomize_components(tmp_path: Path) -> None:
    """``crds/scheduler-plugins`` as a Component over config/crd and the Helm value install the
    same CRDs."""
    base = tmp_path / "crds"
    base.mkdir()
    (base / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(ROOT / "config" / "crd", base)],
        "components": [os.path.relpath(ROOT / "crds" / "scheduler-plugins", base)],
    }))  # fmt: skip
    from_kustomize = kustomize(base)
    from_helm = {k: o for k, o in helm_template("crds.schedulerPlugins=true").items()
                 if k[0] == "CustomResourceDefinition"}  # fmt: skip
    assert {n for _, _, n in from_kustomize} == CORRAL_CRDS | SP_CRDS
    assert_same(from_kustomize, from_helm)


def test_the_scheduler_plugins_crds_the_chart_renders_are_established(kube: Client) -> None:
    """The three as ``crds.schedulerPlugins=true`` renders them (Helm's labels, the keep policy)
    are accepted by the API server and become Established. (Created directly, not by
    ``helm install``: the chart's other objects would collide with this control plane's.)"""
    rendered = crds(helm_template("crds.schedulerPlugins=true"))
    with ExitStack() as stack:
        for name in sorted(SP_CRDS):
            stack.enter_context(sp_crds.served_crd(kube, rendered[name]))
        for name in sorted(SP_CRDS):
            stored = kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
            conditions = {c["type"]: c["status"] for c in stored["status"]["conditions"]}
            assert conditions["Established"] == "True", (name, conditions)
            assert conditions["NamesAccepted"] == "True", (name, conditions)
            assert stored["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
            assert stored["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"


def test_the_notes_say_what_became_of_the_scheduler_plugins_crds(cluster: LocalCluster) -> None:
    # `helm install --dry-run=client` still asks a cluster for its version, and refuses objects
    # that exist there unowned by the release: the local one, where earlier tests of the session
    # left Corral's CRDs (CI: "CustomResourceDefinition clusterkopfpeerings.kopf.dev ... exists
    # and cannot be imported"). --take-ownership skips that check; a dry run writes nothing.
    def notes(*values: str) -> str:
        args = [arg for value in values for arg in ("--set", value)]
        result = helm("install", "corral", str(CHART), "-n", "corral-system", "--dry-run=client",
                      "--take-ownership", f"--kubeconfig={cluster.kubeconfig}", *args)  # fmt: skip
        assert result.returncode == 0, result.stderr
        return result.stdout.partition("NOTES:")[2]

    assert "scheduler-plugins" not in notes()
    assert "scheduler-plugins' CRDs: installed" in notes("crds.schedulerPlugins=true")
    ignored = notes("crds.install=false", "crds.schedulerPlugins=true")
    assert "WARNING: crds.schedulerPlugins=true is ignored with crds.install=false" in ignored
    unkept = notes("crds.keep=false", "crds.schedulerPlugins=true")
    assert (
        "scheduler-plugins' CRDs with every PodGroup, ElasticQuota and NodeResourceTopology"
        in unkept
    )


def test_neither_install_owns_a_namespace() -> None:
    for objs in (kustomize(ROOT / "config" / "default"), helm_template("webhook.enabled=true")):
        assert not [k for k in objs if k[0] == "Namespace"]


@pytest.mark.parametrize(
    ("components", "helm"),
    [
        pytest.param([], [], id="default"),
        pytest.param(["webhook"], ["webhook.enabled=true"], id="webhook"),
        pytest.param(
            ["webhook", "prometheus"],
            ["webhook.enabled=true", "metrics.enabled=true"],
            id="webhook and prometheus",
        ),
    ],
)
def test_a_namespace_overlay_moves_every_part(
    tmp_path: Path, components: list[str], helm: list[str]
) -> None:
    moved = overlay(tmp_path / "moved", [ROOT / "config" / "default"], components, "platform-sched")
    text = subprocess.run(
        [str(ensure_binaries().kubectl), "kustomize", str(moved)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "corral-system" not in text
    objs = objects(text)
    for (kind, namespace, name), obj in objs.items():
        for subject in obj.get("subjects", []):
            assert subject["namespace"] == "platform-sched", (kind, name)
        if kind in ("ServiceAccount", "Deployment", "Service", "Role", "RoleBinding"):
            assert namespace == "platform-sched", (kind, name)
    # The same objects as Helm installs with -n platform-sched.
    assert_same(objs, helm_template("crds.install=false", *helm, namespace="platform-sched"))


def test_cert_manager_over_a_namespace_overlay(tmp_path: Path) -> None:
    moved = overlay(
        tmp_path / "moved", [ROOT / "config" / "default"], ["webhook"], "platform-sched"
    )
    top = overlay(tmp_path / "top", [moved], ["certmanager"])
    objs = kustomize(top)
    cert = objs[("Certificate", "platform-sched", "corral-webhook")]
    assert cert["spec"]["dnsNames"] == [
        "corral-webhook.platform-sched.svc",
        "corral-webhook.platform-sched.svc.cluster.local",
    ]
    assert ("Issuer", "platform-sched", "corral-selfsigned") in objs
    assert not [k for k in objs if k[0] in ("Role", "RoleBinding")]  # no Secret rights needed
    env = {e["name"]: e.get("value") for e in container(objs, "platform-sched")["env"]}
    assert env["CORRAL_WEBHOOK_CERT_DIR"] == "/etc/corral/webhook-certs"
    assert "CORRAL_WEBHOOK_CERT_SECRET" not in env
    assert_same(
        objs,
        helm_template("crds.install=false", "webhook.enabled=true",
                      "webhook.certManager.enabled=true", namespace="platform-sched"),
    )  # fmt: skip


def test_default_images_are_the_release() -> None:
    objs = kustomize(ROOT / "config" / "default")
    assert container(objs)["image"] == f"ghcr.io/corral-dev/corral:{__version__}"
    assert engine_image(objs) == f"ghcr.io/corral-dev/corral:{__version__}"
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
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
    for part in ("default", "rbac", "manager"):
        shutil.copytree(ROOT / "config" / part, tmp_path / "config" / part)
    kustomization = tmp_path / "config" / "default" / "kustomization.yaml"
    data = yaml.safe_load(kustomization.read_text())
    by_name = {i["name"]: i for i in data["images"]}
    for image in images:
        by_name[image["name"]] = image
    data["images"] = list(by_name.values())
    kustomization.write_text(yaml.safe_dump(data))
    objs = kustomize(tmp_path / "config" / "default")
    assert (container(objs)["image"], engine_image(objs)) == (operator, engine)


def test_helm_values_reach_the_operator() -> None:
    objs = helm_template(
        "image.repository=registry.example/op", "image.tag=3",
        "engineImage=registry.example/engine:2", "replicas=3",
        "nodeSelector.pool=system", "imagePullSecrets[0].name=pull", "priorityClassName=ops",
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].key=pool",
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
        "podLabels.team=platform", "podLabels.app\\.kubernetes\\.io/name=mine",
        "podAnnotations.note=x", "extraArgs[0]=--pending-threshold=120",
        "extraEnv[0].name=CORRAL_LOG_FORMAT", "extraEnv[0].value=text",
        "podSecurityContext.runAsUser=1000", "securityContext.privileged=false",
        "rbac.profileReaders[0].kind=Group", "rbac.profileReaders[0].name=tenants",
        namespace="ops",
    )  # fmt: skip
    deployment = objs[("Deployment", "ops", "corral-operator")]
    template = deployment["spec"]["template"]
    pod = template["spec"]
    c = pod["containers"][0]
    assert c["image"] == "registry.example/op:3"
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["CORRAL_ENGINE_IMAGE"] == "registry.example/engine:2"
    assert [e for e in c["env"] if e["name"] == "CORRAL_LOG_FORMAT"][-1]["value"] == "text"
    assert c["command"][-1] == "--pending-threshold=120"
    assert c["securityContext"] == {"privileged": False}
    assert deployment["spec"]["replicas"] == 3
    assert deployment["spec"]["selector"] == {
        "matchLabels": {"app.kubernetes.io/name": "corral-operator"}
    }
    assert pod["nodeSelector"] == {"pool": "system"}
    assert pod["imagePullSecrets"] == [{"name": "pull"}]
    assert pod["priorityClassName"] == "ops"
    assert pod["securityContext"] == {"runAsUser": 1000}
    assert "nodeAffinity" in pod["affinity"]
    assert template["metadata"]["labels"]["team"] == "platform"
    # The selector's label is the install's, whatever podLabels say.
    assert template["metadata"]["labels"]["app.kubernetes.io/name"] == "corral-operator"
    assert template["metadata"]["annotations"] == {"note": "x"}
    assert ("ServiceAccount", "ops", "corral-operator") in objs
    binding = objs[("ClusterRoleBinding", "", "corral:operator")]
    assert binding["subjects"][0]["namespace"] == "ops"
    readers = objs[("ClusterRoleBinding", "", "corral:schedulerprofiles:readers")]
    assert readers["roleRef"]["name"] == "corral:schedulerprofiles:viewer"
    assert readers["subjects"] == [{"kind": "Group", "name": "tenants"}]
    labels = deployment["metadata"]["labels"]
    assert labels["app.kubernetes.io/managed-by"] == "Helm"
    assert labels["app.kubernetes.io/instance"] == "corral"
    assert labels["helm.sh/chart"] == "corral-0.2.0"


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        pytest.param("replica=2", "additional properties 'replica' not allowed", id="typo"),
        pytest.param("replicas=0", "replicas", id="no replica"),
        pytest.param("image.pullPolicy=Sometimes", "pullPolicy", id="pull policy"),
        pytest.param("webhook.enable=true", "'enable' not allowed", id="nested typo"),
        pytest.param(
            "extraEnv[0].name=X,extraEnv[0].value=60",
            "/extraEnv/0/value': got number, want string",
            id="an environment value the API server would refuse",
        ),
        pytest.param(
            "crds.schedulerPlugins=yes",
            "/crds/schedulerPlugins': got string, want boolean",
            id="scheduler-plugins CRDs not a boolean",
        ),
    ],
)
def test_the_schema_refuses_bad_values(value: str, fragment: str) -> None:
    result = helm("template", "corral", str(CHART), "-n", "corral-system", "--set", value)
    assert result.returncode != 0
    assert fragment in result.stderr, result.stderr


def test_the_namespace_value_moves_every_part() -> None:
    # Releases of charts up to 0.1.0 ran the operator in `namespace`, the release elsewhere.
    objs = helm_template("namespace=corral-system", "webhook.enabled=true", namespace="default")
    assert {ns for _, ns, _ in objs} == {"", "corral-system"}
    for obj in objs.values():
        for subject in obj.get("subjects", []):
            assert subject["namespace"] == "corral-system", obj["metadata"]["name"]


def test_helm_lint_passes() -> None:
    for values in (
        [],
        ["--set", "webhook.enabled=true,webhook.certManager.enabled=true"],
        ["--set", "crds.schedulerPlugins=true"],
    ):
        result = helm("lint", "--strict", str(CHART), *values)
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_package_stands_alone(tmp_path: Path) -> None:
    result = helm("package", str(CHART), "--destination", str(tmp_path))
    assert result.returncode == 0, result.stderr
    package = tmp_path / "corral-0.2.0.tgz"
    with tarfile.open(package) as archive:
        members = archive.getmembers()
        assert not [m.name for m in members if m.issym() or m.islnk()]
        archive.extractall(tmp_path / "unpacked", filter="data")
    unpacked = tmp_path / "unpacked" / "corral"
    # The chart vendored without the repository renders what it renders from the repository.
    for values in ([], ["webhook.enabled=true"]):
        assert helm_template(*values, chart=package) == helm_template(*values)
        assert helm_template(*values, chart=unpacked) == helm_template(*values)
