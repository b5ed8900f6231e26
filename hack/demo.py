"""`make demo`: a real local control plane, the Corral operator and a tenant scheduler at work.

Where the machine allows (root; the packages installable; no other real node running) it runs
the real path: the image built from this checkout (`make image`), one real node beside the kwok
nodes, the operator installed from config/default with kustomize as real pods, and the tenant
profile's engine pods running there and placing the workload on the team-a kwok nodes. Otherwise
it says why and falls back to the local engines:

Brings up (or reuses) the cluster in --dir with upstream kube-scheduler and kwok nodes (three
general ones and two in the ``pool=team-a`` node pool), installs the SchedulerProfile CRD, starts
``corral operator --local-engines`` in the background (the engine runs as local processes with
the profile's own ServiceAccount token, since kwok nodes run no containers), applies the tenant
profile ``team-a``, then a small Deployment in namespace team-a that names the tenant scheduler,
and shows the profile's status and where each pod landed. Then two gang Jobs (docs/gang.md: the
control plane runs with GenericWorkload and the Job controller's WorkloadWithJob, the profile
with ``featureGates: {GenericWorkload: true}``): one placed whole at once, one too wide for
the pool that waits with no pod bound; both are printed with their PodGroup's condition.
Idempotent: running it again reuses what is there. ``make demo-down`` stops everything (the
operator included).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from corral import __version__
from corral.k8s import JSON, ApiError, Client
from corral.testing import ControlPlaneError, LocalCluster
from corral.testing.binaries import BinariesError
from corral.testing.controlplane import STATE_FILE
from corral.testing.nodes import FAKE_NODE_LABEL, ZONE_LABEL
from corral_dev.builds import load_node_pins
from corral_dev.hostpackages import HostPackagesError, ensure_packages
from corral_dev.images import ImageError, build_image
from corral_dev.install import operator_overlay, prerequisites
from corral_dev.realnode import NODE_NAME, RealNode, RealNodeError, RealNodes, lock

ROOT = Path(__file__).resolve().parents[1]
TENANT = "team-a"
DEPLOYMENT = "hello"
# The API server serves Workloads and PodGroups; the Job controller makes a Job's.
GATES = {"GenericWorkload": True, "WorkloadWithJob": True}
GROUPS = "scheduling.k8s.io/v1beta1"
# Each gang's cpu per pod. The team-a pool is 2 nodes of 4 cpu: "train" (4 x 1 cpu) fits at
# once; "wide" (4 x 3 cpu) finds room for one pod per node, 2 of its 4, and so waits whole. (Not
# room taken by "train": kwok completes a Job's pods as soon as they run.)
GANGS = {"train": "1", "wide": "3"}
API, KIND = "corral.dev/v1alpha1", "SchedulerProfile"


def say(message: str) -> None:
    print(f"[demo] {message}", flush=True)


def tenant_profile() -> JSON:
    """config/samples/tenant.yaml as it is, but for the scheduler pods' priorityClassName: the
    local engines run as processes here, and the demo cluster has no such PriorityClass."""
    body: JSON = yaml.safe_load((ROOT / "config/samples/tenant.yaml").read_text())
    body["spec"].get("deployment", {}).pop("priorityClassName", None)
    body["spec"]["featureGates"] = {"GenericWorkload": True}  # the gang Jobs' pod-group cycle
    return body


def workload() -> JSON:
    labels = {"app": DEPLOYMENT}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": DEPLOYMENT, "namespace": TENANT},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "schedulerName": TENANT,
                    "containers": [
                        {
                            "name": "app",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        }
                    ],
                },
            },
        },
    }


def gang_job(name: str, cpu: str) -> JSON:
    """A Job asking for gang scheduling (minCount defaults to its parallelism, 4)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": TENANT},
        "spec": {
            "parallelism": 4,
            "completions": 4,
            "scheduling": {"schedulingPolicy": {"gang": {}}},
            "template": {
                "spec": {
                    "schedulerName": TENANT,
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "worker",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
                        }
                    ],
                },
            },
        },
    }


def wait(what: str, check: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not done after {timeout:.0f}s")
        time.sleep(0.5)


def ensure_namespace(kube: Client, name: str) -> None:
    try:
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    except ApiError as exc:
        if not exc.conflict:
            raise


def start_operator(cluster: LocalCluster) -> int:
    pid_file = cluster.directory / "operator.pid"
    if pid_file.exists():
        pid = int(pid_file.read_text())
        try:
            os.kill(pid, 0)
            say(f"operator already running (pid {pid})")
            return pid
        except ProcessLookupError:
            pass
    log = cluster.directory / "logs" / "operator.log"
    cmd = [
        sys.executable,
        "-m",
        "corral",
        "operator",
        # dev-cluster down stops every process whose command line names the work directory.
        f"--kubeconfig={cluster.kubeconfig}",
        "--local-engines",
        f"--engine-dir={cluster.directory / 'engines'}",
        "--pending-threshold=10",
    ]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "operator")},
        )
    pid_file.write_text(str(proc.pid))
    say(f"started corral operator --local-engines (pid {proc.pid}, log {log})")
    return proc.pid


def condition(obj: JSON, type_: str) -> JSON:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == type_), {})


def _served(kube: Client, path: str) -> bool:
    try:
        kube.request("GET", path)
    except ApiError:
        return False
    return True


def main() -> int:
    try:
        return run()
    except (ApiError, ControlPlaneError, TimeoutError, RuntimeError, *REAL_ERRORS) as exc:
        say(f"error: {exc} (logs: .dev-cluster/logs; stop with make demo-down)")
        return 1


def real_node_blocker(directory: Path) -> str | None:
    """Why the real path cannot run here, or None."""
    if (directory / STATE_FILE).exists():
        running = LocalCluster.attach(directory)
        if not running.state.real_node:
            return f"a cluster without a real node is already running in {directory}"
        return None
    if os.geteuid() != 0:
        return "a real node needs root (kubelet, containerd, iptables, cgroups)"
    owner = lock.current_owner()
    node = RealNode.attach(owner) if owner is not None else None
    if owner is not None and owner != directory.resolve() and node and node.state.alive():
        return f"this machine's one real node is in use by {owner}"
    return None


REAL_ERRORS = (RealNodeError, HostPackagesError, BinariesError, ImageError)


def run() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path(".dev-cluster"))
    args = parser.parse_args()

    blocker = real_node_blocker(args.dir)
    if blocker is None:
        try:
            return run_real(args.dir)
        except REAL_ERRORS as exc:
            blocker = str(exc)
            if (args.dir / STATE_FILE).exists():
                LocalCluster.attach(args.dir, nodes=RealNodes()).down()
    say(f"the real path cannot run here: {blocker}")
    say("falling back to the operator with local engines (kwok nodes run no containers)")
    return run_local(args.dir)


def add_kwok_nodes(cluster: LocalCluster) -> None:
    kube = cluster.admin
    if not kube.list_items("v1", "Node", label_selector="=".join(FAKE_NODE_LABEL)):
        say("adding 3 kwok nodes over 3 zones")
        cluster.add_nodes(3, cpu="4", memory="8Gi", zones=3)
    if not kube.list_items("v1", "Node", label_selector=f"pool={TENANT}"):
        say("adding 2 kwok nodes in the team-a pool (label pool=team-a)")
        cluster.add_nodes(2, cpu="4", memory="8Gi", labels={"pool": TENANT}, prefix="team-a")


def run_real(directory: Path) -> int:
    started = time.monotonic()
    ensure_packages(load_node_pins().image_packages)
    say("building the image from this checkout (make image)")
    image = build_image(ROOT, ROOT / "dist", __version__)
    say(f"starting the control plane and the real node in {directory}")
    cluster = LocalCluster.up(
        directory,
        with_kube_scheduler=True,
        progress=True,
        nodes=RealNodes(images=[image.archive]),
        feature_gates=GATES,
    )
    kube = cluster.admin
    add_kwok_nodes(cluster)
    on_real_node = {"kubernetes.io/hostname": NODE_NAME}
    overlay = operator_overlay(
        directory / "operator-overlay", ROOT / "config" / "default", image.tag, on_real_node
    )
    prerequisites(cluster.kubectl, ROOT)  # the namespace and config/crd
    cluster.kubectl("apply", "--server-side", "-k", str(overlay))
    say(f"installed the operator from config/crd and config/default (kustomize, image {image.tag})")
    cluster.kubectl(
        "rollout", "status", "-n", "corral-system", "deploy/corral-operator", "--timeout=240s"
    )
    operators = kube.list_items(
        "v1", "Pod", "corral-system", label_selector="app.kubernetes.io/name=corral-operator"
    )
    for ns in (TENANT, "team-a-batch"):
        ensure_namespace(kube, ns)
    profile = tenant_profile()
    profile["spec"].setdefault("deployment", {})["nodeSelector"] = on_real_node
    kube.apply(profile, field_manager="corral-demo")
    say("applied SchedulerProfile team-a (engine pods pinned to the real node)")
    status = wait(
        "profile Ready with a leader",
        lambda: _ready_with_leader(kube.get(API, KIND, TENANT)),
        240,
    )
    kube.apply(workload(), field_manager="corral-demo")
    say(f"applied Deployment {TENANT}/{DEPLOYMENT} (schedulerName: {TENANT}, 3 replicas)")
    pods = wait("pods bound by the team-a scheduler", lambda: _all_bound(kube), 120)
    show_pods(kube, pods)
    namespace = profile["spec"]["namespace"]
    engines = kube.list_items(
        "v1", "Pod", namespace, label_selector=f"app.kubernetes.io/instance={TENANT}"
    )
    leader_log = cluster.kubectl("logs", "-n", namespace, status["leader"]).stdout
    bound_by_leader = sum(f'pod="{TENANT}/{p["metadata"]["name"]}"' in leader_log for p in pods)
    print("\nVerified on the real node:")
    for pod in operators:
        print(f"  operator pod {pod['metadata']['name']}: {pod['status'].get('phase')} "
              f"on {pod['spec'].get('nodeName')}")  # fmt: skip
    for pod in engines:
        print(f"  engine pod {pod['metadata']['name']}: {pod['status'].get('phase')} "
              f"on {pod['spec'].get('nodeName')}")  # fmt: skip
    print(f"  status.leader: {status['leader']}; its log shows {bound_by_leader} of "
          f"{len(pods)} bindings")  # fmt: skip
    print(f"  all of it in {time.monotonic() - started:.0f}s")
    gangs = show_gangs(kube)
    explore(cluster, real=True)
    return 0 if gangs else 1


def _ready_with_leader(obj: JSON) -> JSON | None:
    status: JSON = obj.get("status") or {}
    ready = condition(obj, "Ready").get("status") == "True"
    return status if ready and status.get("leader") else None


def show_pods(kube: Client, pods: list[JSON]) -> None:
    nodes = {
        n["metadata"]["name"]: n["metadata"].get("labels", {})
        for n in kube.list_items("v1", "Node")
    }
    print(f"\n{'POD':<28} {'NODE':<16} {'POOL':<8} {'ZONE':<8} PHASE")
    for pod in sorted(pods, key=lambda p: str(p["metadata"]["name"])):
        node = pod["spec"]["nodeName"]
        labels = nodes.get(node, {})
        print(
            f"{pod['metadata']['name']:<28} {node:<16} {labels.get('pool', '-'):<8} "
            f"{labels.get(ZONE_LABEL, '-'):<8} {pod['status'].get('phase')}"
        )
    say("the team-a scheduler placed every pod on the team-a pool")


def run_local(directory: Path) -> int:
    started = time.monotonic()
    say(f"starting the local control plane in {directory} (reused if already running)")
    cluster = LocalCluster.up(
        directory, with_kube_scheduler=True, progress=True, feature_gates=GATES
    )
    kube = cluster.admin
    add_kwok_nodes(cluster)
    say(f"control plane ready in {time.monotonic() - started:.1f}s")

    cluster.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    # A new CRD's API group is served a moment after the object is created.
    wait("the SchedulerProfile API", lambda: _served(kube, f"/apis/{API}"), 60)
    for ns in ("corral-system", TENANT, "team-a-batch"):
        ensure_namespace(kube, ns)
    start_operator(cluster)
    kube.apply(tenant_profile(), field_manager="corral-demo")
    say("applied SchedulerProfile team-a; waiting for it to be Ready")
    try:
        wait(
            "profile Ready",
            lambda: condition(kube.get(API, KIND, TENANT), "Ready").get("status") == "True",
            90,
        )
    except TimeoutError as exc:
        say(f"{exc}; status: {kube.get(API, KIND, TENANT).get('status')}")
        say(f"operator log: {cluster.directory / 'logs' / 'operator.log'}")
        return 1
    print()
    print(cluster.kubectl("get", "schedulerprofiles").stdout)
    engines = cluster.directory / "engines" / TENANT
    try:
        wait(
            "a local engine to take the Lease",
            lambda: kube.get(API, KIND, TENANT).get("status", {}).get("leader"),
            60,
        )
    except TimeoutError:
        # The engine is still being built: the operator side is shown, the scheduling is not.
        say("the profile is Ready (its objects are applied and its Deployment is available),")
        say("but this engine build does not run it yet; last engine log line:")
        say("    " + _last_line(engines / f"corral-{TENANT}-local-0.log"))
        explore(cluster)
        return 0

    kube.apply(workload(), field_manager="corral-demo")
    say(f"applied Deployment {TENANT}/{DEPLOYMENT} (schedulerName: {TENANT}, 3 replicas)")
    try:
        pods = wait("pods bound by the team-a scheduler", lambda: _all_bound(kube), 60)
    except TimeoutError as exc:
        say(f"{exc}; see the engine logs under {engines}")
        explore(cluster)
        return 1
    show_pods(kube, pods)
    gangs = show_gangs(kube)
    explore(cluster)
    return 0 if gangs else 1


def _owned_by(obj: JSON, owner: JSON) -> bool:
    return any(
        ref.get("uid") == owner["metadata"]["uid"] and ref.get("controller")
        for ref in obj["metadata"].get("ownerReferences") or []
    )


def _gang(kube: Client, job: JSON) -> tuple[JSON, JSON, dict[str, str]] | None:
    """The Job's PodGroup, its PodGroupInitiallyScheduled condition and each pod's node (""
    while unbound); None until the scheduler wrote the condition."""
    groups = [g for g in kube.list_items(GROUPS, "PodGroup", TENANT) if _owned_by(g, job)]
    if not groups:
        return None
    cond = condition(groups[0], "PodGroupInitiallyScheduled")
    if not cond:
        return None
    name = job["metadata"]["name"]
    pods = kube.list_items("v1", "Pod", TENANT, label_selector=f"job-name={name}")
    return groups[0], cond, {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods}


def _verdict(kube: Client, job: JSON, *, whole: bool) -> tuple[JSON, JSON, dict[str, str]]:
    """What ``_gang`` shows once the scheduler decided (``whole``: once every pod is bound)."""

    def check() -> tuple[JSON, JSON, dict[str, str]] | None:
        gang = _gang(kube, job)
        return gang if gang is not None and (not whole or all(gang[2].values())) else None

    name = job["metadata"]["name"]
    what = f"Job {name}'s pods all bound" if whole else f"the team-a scheduler's verdict on {name}"
    found: tuple[JSON, JSON, dict[str, str]] = wait(what, check, 120)
    return found


def show_gangs(kube: Client) -> bool:
    """Two gang Jobs, one after the other: the first placed whole at once, the second waiting
    whole (no pod bound) because the pool cannot hold all four of its pods. Prints both; says
    whether that is what happened."""
    first_name, second_name = GANGS
    shown = []
    for name, cpu in GANGS.items():
        job = kube.apply(gang_job(name, cpu), field_manager="corral-demo")
        say(f"applied gang Job {TENANT}/{name} (parallelism 4, {cpu} cpu each; minCount 4)")
        shown.append((name, *_verdict(kube, job, whole=name == first_name)))
    for name, group, cond, placed in shown:
        bound = sum(1 for node in placed.values() if node)
        print(f"\nJob {name}: PodGroup {group['metadata']['name']} "
              f"(minCount {group['spec']['schedulingPolicy']['gang']['minCount']}), "
              f"{bound} of {len(placed)} pods bound")  # fmt: skip
        print(f"  PodGroupInitiallyScheduled: {cond['status']} ({cond['reason']})"
              + (f": {cond['message']}" if cond.get("message") else ""))  # fmt: skip
        for pod, node in sorted(placed.items()):
            print(f"  {pod:<24} {node or '(waiting, not bound)'}")
    (_, _, first, first_pods), (_, _, second, second_pods) = shown
    whole = first["status"] == "True" and all(first_pods.values())
    if whole and second["status"] == "False" and not any(second_pods.values()):
        say(f"gang {first_name} was placed whole at once; gang {second_name} waits whole, no pod "
            "bound: the pool lacks room for all four")  # fmt: skip
        return True
    say(f"unexpected: gang {first_name} {first['status']}, gang {second_name} {second['status']} "
        f"with {sum(1 for n in second_pods.values() if n)} pods bound")  # fmt: skip
    return False


def explore(cluster: LocalCluster, *, real: bool = False) -> None:
    kubectl = cluster.binaries / "kubectl"
    wide = list(GANGS)[-1]
    logs = (
        f"""Operator logs: kubectl logs -n corral-system deploy/corral-operator
Engine logs:   kubectl logs -n corral-system -l app.kubernetes.io/instance={TENANT}"""
        if real
        else f"""Operator log:  {cluster.directory / "logs" / "operator.log"}
Engine logs:   {cluster.directory / "engines" / TENANT}"""
    )
    print(
        f"""
Keep exploring:
    export KUBECONFIG={cluster.kubeconfig}
    alias kubectl={kubectl}
    kubectl get schedulerprofiles                      # or: kubectl get sp
    kubectl describe schedulerprofile {TENANT}              # conditions, events
    kubectl get all,cm,sa,role,rolebinding,pdb -n corral-system
    kubectl run stray -n default --image=x --overrides='{{"spec":{{"schedulerName":"{TENANT}"}}}}'
        # not a team-a namespace: stays Pending, and gets an Event saying why after 10 s
    kubectl get podgroups -n {TENANT} -o yaml              # the gangs' conditions
    hack/dev-cluster nodes --dir {cluster.directory} --count 2 --cpu 4 --memory 8Gi \\
        --labels pool={TENANT}                         # room for gang {wide}: placed whole
{logs}
Stop it all:   make demo-down
"""
    )


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log yet)"
    return lines[-1] if lines else "(empty log)"


def _all_bound(kube: Client) -> list[JSON] | None:
    pods = kube.list_items("v1", "Pod", TENANT, label_selector=f"app={DEPLOYMENT}")
    running = [
        p for p in pods if p["spec"].get("nodeName") and p["status"].get("phase") == "Running"
    ]
    return running if len(running) >= 3 else None


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
