"""A real local Kubernetes control plane: etcd, kube-apiserver, kube-controller-manager,
optionally upstream kube-scheduler (as ``default-scheduler``), and kwok playing the kubelets.
A *lean* control plane (for benchmarks, as upstream's scheduler_perf) is etcd and
kube-apiserver only, with the admission plugins that need a controller turned off.

Everything lives in one work directory::

    <dir>/state.json            what is running (pids, start times, executables, ports);
                                written last on up
    <dir>/admin.kubeconfig      system:masters token
    <dir>/{controller-manager,scheduler}.kubeconfig   the components' own identities
    <dir>/pki/                  ServiceAccount signing key, static tokens, the serving certificate
    <dir>/logs/<component>.log  every component's output
    <dir>/etcd/                 etcd's data

``LocalCluster.up`` returns once every component is ready; ``LocalCluster.attach`` finds a
running one by its directory; ``down`` stops every process it started and checks none is left.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from corral.k8s import JSON, ApiError, Client
from corral.testing import nodes as fake_nodes
from corral.testing import statefile
from corral.testing.binaries import Binaries, ensure_binaries
from corral.testing.credentials import (
    IDENTITIES,
    Credentials,
    create_credentials,
    create_kubelet_client_pair,
    write_kubeconfig,
)
from corral.testing.node_provider import NodeProvider, ProvidedNode
from corral.testing.processes import (
    ProcessError,
    boot_id,
    free_port,
    is_running,
    kill,
    log_tail,
    processes_mentioning,
    recorded_alive,
    spawn,
    start_time,
    terminate,
    wait_for,
)

STATE_FILE: Final = "state.json"
SERVICE_CIDR: Final = "10.96.0.0/16"
POD_CIDR: Final = "10.244.0.0/16"
# Off in a lean control plane, as in scheduler_perf: each needs a controller that is not there.
LEAN_DISABLED_ADMISSION: Final = ("ServiceAccount", "TaintNodesByCondition")
READY_TIMEOUT: Final = float(os.environ.get("CORRAL_READY_TIMEOUT", "120"))


class ControlPlaneError(RuntimeError):
    """The control plane could not be started, found or stopped."""


@dataclass
class Component:
    """One running component. ``started`` is its start time (:func:`processes.start_time`);
    None in a record written before start times were kept."""

    name: str
    executable: str
    pid: int
    port: int
    argv: list[str] = field(default_factory=list)
    started: int | None = None

    def alive(self, boot: str | None) -> bool:
        """Whether the recorded process still runs (:func:`processes.recorded_alive`). A record
        without a start time or boot (written by older code) is judged by pid and executable
        alone, whatever its boot."""
        if self.started is None or boot is None:
            return is_running(self.pid, self.executable)
        return recorded_alive(self.pid, self.started, self.executable, boot)

    def stop(self, boot: str | None) -> None:
        """Stop the recorded process if it still runs, as :meth:`alive` judges it.
        :func:`processes.terminate` checks the pid, executable and start time itself (pid and
        executable alone without a start time), so only the boot is checked here."""
        if self.started is not None and boot is not None and boot != boot_id():
            return  # a pid recorded under another boot names nothing now
        terminate(self.pid, self.executable, started=self.started)

    def kill(self, boot: str | None) -> None:
        """SIGKILL the recorded process (a crash), as :meth:`stop` judges it."""
        if self.started is not None and boot is not None and boot != boot_id():
            return
        kill(self.pid, self.executable, started=self.started)


@dataclass
class State:
    """What ``state.json`` records; ``boot`` is the boot id its pids belong to (None in a
    record written before it was kept)."""

    directory: str
    server: str
    binaries: str
    with_kube_scheduler: bool
    components: list[Component] = field(default_factory=list)
    real_node: bool = False
    boot: str | None = None
    # kube-apiserver's and kube-controller-manager's --feature-gates ({} for none).
    feature_gates: dict[str, bool] = field(default_factory=dict)

    def save(self, directory: Path) -> None:
        statefile.write(directory / STATE_FILE, asdict(self))

    @classmethod
    def load(cls, directory: Path) -> State:
        data = statefile.read(directory / STATE_FILE)
        components = [Component(**c) for c in data.pop("components")]
        return cls(components=components, **data)


class LocalCluster:
    """A handle on a running local control plane."""

    def __init__(self, directory: Path, state: State, nodes: NodeProvider | None = None) -> None:
        self.directory = directory
        self.state = state
        self.nodes = nodes
        self._admin: Client | None = None
        # Components restarted by this handle: kept so that their Popen objects outlive them
        # (dropped while the process runs, each warns that it is still running).
        self._restarted: list[subprocess.Popen[bytes]] = []

    # --- lifecycle ------------------------------------------------------------------------------

    @classmethod
    def up(
        cls,
        directory: Path,
        *,
        with_kube_scheduler: bool = False,
        binaries: Binaries | None = None,
        scheduler_args: Sequence[str] = (),
        progress: bool = False,
        nodes: NodeProvider | None = None,
        lean: bool = False,
        apiserver_profiling: bool = False,
        feature_gates: Mapping[str, bool] | None = None,
        apiserver_args: Sequence[str] = (),
        controller_manager_args: Sequence[str] = (),
    ) -> LocalCluster:
        """Start a control plane in ``directory``, or return the one already running there.

        With ``nodes`` (a :class:`NodeProvider`) the API server listens on its ``address``
        (reachable from pod network namespaces), the ``kubernetes`` Service gets that endpoint,
        and the provider's real nodes join (see :mod:`corral.testing.node_provider` for the
        order of its calls). Without, kwok plays every kubelet.

        ``lean``: etcd and kube-apiserver only (no kube-controller-manager, no kwok, no
        scheduler), with the ServiceAccount and TaintNodesByCondition admission plugins off as
        in upstream's scheduler_perf: pods need no ServiceAccount, and nodes created with a
        Ready condition in their status are schedulable at once (nothing would lift the
        not-ready taint). Nothing plays the kubelets: bound pods stay Pending.

        ``apiserver_profiling``: kube-apiserver serves Go's ``/debug/pprof`` (to the admin; off
        otherwise, as a profiled server is not what tests should run against).

        ``feature_gates``: given to kube-apiserver and kube-controller-manager (a scheduler gets
        its own through ``scheduler_args``); with GenericWorkload the API server also serves
        ``scheduling.k8s.io/v1beta1`` (Workloads, PodGroups). A running control plane started
        with other gates is restarted.

        ``apiserver_args``: more kube-apiserver flags, after the harness's own (e.g. an audit
        policy and log for the fault tests); :meth:`restart` keeps them.
        ``controller_manager_args`` likewise for kube-controller-manager (e.g. its client's
        ``--kube-api-qps`` for the soak's churn of claims and volumes).
        """
        directory = directory.resolve()
        gates = dict(feature_gates or {})
        if (directory / STATE_FILE).exists():
            existing = cls.attach(directory, nodes=nodes)
            if existing.healthy() and existing.state.feature_gates == gates:
                return existing
            existing.down()
        binaries = binaries or ensure_binaries()
        directory.mkdir(parents=True, exist_ok=True)
        node: ProvidedNode | None = None
        if nodes is not None:
            node = nodes.claim(directory, progress=progress)
        starter = _Starter(directory, binaries, progress=progress, nodes=nodes, feature_gates=gates)
        try:
            if node is not None:
                node.prepare()
            state = starter.start(
                with_kube_scheduler,
                list(scheduler_args),
                lean=lean,
                profiling=apiserver_profiling,
                apiserver_extra=list(apiserver_args),
                controller_manager_extra=list(controller_manager_args),
            )
            cluster = cls(directory, state, nodes)
            if node is not None:
                node.up(cluster.kubectl_argv())
        except BaseException:
            if node is not None:
                node.down(starter.kubectl_argv())
            starter.stop_all()
            if node is not None:
                node.release()
            raise
        return cluster

    @classmethod
    def attach(cls, directory: Path, *, nodes: NodeProvider | None = None) -> LocalCluster:
        """The cluster running in ``directory``; ``nodes`` is the provider it was started with
        (needed to take down one with real nodes)."""
        directory = directory.resolve()
        try:
            state = State.load(directory)
        except FileNotFoundError:
            raise ControlPlaneError(f"no local cluster in {directory} (no {STATE_FILE})") from None
        return cls(directory, state, nodes)

    def healthy(self) -> bool:
        return all(c.alive(self.state.boot) for c in self.state.components)

    def down(self) -> None:
        """Stop every component (newest first), then make sure none is left. Real nodes are
        drained and stopped first and released last, by the provider the cluster was attached
        with; without one, a cluster with real nodes is left running (ControlPlaneError)."""
        node: ProvidedNode | None = None
        if self.state.real_node:
            if self.nodes is None:
                raise ControlPlaneError(
                    f"the cluster in {self.directory} has a real node; take it down with "
                    f"`hack/dev-cluster down --dir {self.directory}`"
                )
            node = self.nodes.attach(self.directory)
        if node is not None:
            node.down(self.kubectl_argv())
        for component in reversed(self.state.components):
            component.stop(self.state.boot)
        leftovers = processes_mentioning(str(self.directory) + "/")
        for pid in leftovers:
            terminate(pid, None, grace=2.0)
        (self.directory / STATE_FILE).unlink(missing_ok=True)
        shutil.rmtree(self.directory / "etcd", ignore_errors=True)
        if node is not None:
            node.release()

    # --- using it -------------------------------------------------------------------------------

    @property
    def kubeconfig(self) -> Path:
        return self.directory / "admin.kubeconfig"

    @property
    def binaries(self) -> Path:
        return Path(self.state.binaries)

    @property
    def admin(self) -> Client:
        if self._admin is None:
            self._admin = Client.from_kubeconfig(str(self.kubeconfig))
        return self._admin

    def kubectl_argv(self) -> list[str]:
        return [str(self.binaries / "kubectl"), f"--kubeconfig={self.kubeconfig}"]

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run the matching kubectl as the admin user."""
        argv = [*self.kubectl_argv(), *args]
        result = subprocess.run(argv, input=input, capture_output=True, text=True, check=False)
        if check and result.returncode != 0:
            raise ControlPlaneError(
                f"kubectl {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}"
            )
        return result

    def add_nodes(self, count: int, **options: Any) -> list[str]:
        """Create ``count`` kwok nodes and wait until they are Ready (see ``nodes.add_nodes``)."""
        return fake_nodes.add_nodes(self.admin, count, **options)

    def compact_etcd(self) -> int:
        """Compact etcd's history up to now (as the API server does every 5 minutes), so that
        watches from older resourceVersions get 410 Gone. Returns the compacted revision."""
        base = f"http://127.0.0.1:{self.component('etcd').port}/v3/kv"
        current = _post_json(f"{base}/range", {"key": base64.b64encode(b"/").decode()})
        revision = int(current["header"]["revision"])
        _post_json(f"{base}/compaction", {"revision": revision, "physical": True})
        return revision

    def restart(self, name: str, *, timeout: float = READY_TIMEOUT, crash: bool = False) -> None:
        """Stop one component and start it again with the same arguments (same port), e.g. to
        prove clients survive an API server restart. ``crash``: SIGKILL instead of a graceful
        stop (requests in flight are cut, answered or not). Waits for kube-apiserver's
        ``/readyz`` or etcd's ``/health`` when it is one of those."""
        component = self.component(name)
        if crash:
            component.kill(self.state.boot)
        else:
            component.stop(self.state.boot)
        process = spawn(name, component.argv, self.directory / "logs", self.directory)
        self._restarted.append(process)
        component.pid, component.started = process.pid, start_time(process.pid)
        self.state.boot = boot_id()  # where the new start time belongs
        self.state.save(self.directory)
        if name == "kube-apiserver":
            token = (self.admin.authorization() or "").removeprefix("Bearer ")

            def died() -> str | None:
                if is_running(process.pid):
                    return None
                return "kube-apiserver exited:\n" + log_tail(self.directory / "logs", name)

            wait_for("kube-apiserver /readyz after restart",
                     lambda: _http_ok(f"{self.state.server}/readyz", token=token),
                     timeout=timeout, alive=died)  # fmt: skip
        elif name == "etcd":
            wait_for("etcd /health after restart",
                     lambda: _http_ok(f"http://127.0.0.1:{component.port}/health"),
                     timeout=timeout)  # fmt: skip

    @property
    def audit_log(self) -> Path | None:
        """Where kube-apiserver writes its audit log (:mod:`corral.testing.audit`), or None
        when it was started without one."""
        for arg in self.component("kube-apiserver").argv:
            if arg.startswith("--audit-log-path="):
                return Path(arg.split("=", 1)[1])
        return None

    def component(self, name: str) -> Component:
        for component in self.state.components:
            if component.name == name:
                return component
        raise KeyError(name)


class _Starter:
    """Starts the components in order, waiting for each to be ready before the next."""

    def __init__(
        self,
        directory: Path,
        binaries: Binaries,
        *,
        progress: bool,
        nodes: NodeProvider | None,
        feature_gates: Mapping[str, bool] | None = None,
    ) -> None:
        self.directory = directory
        self.binaries = binaries
        self.nodes = nodes
        self.feature_gates = dict(feature_gates or {})
        self.address = nodes.address if nodes is not None else "127.0.0.1"
        self.logs = directory / "logs"
        self.progress = progress
        self.started: list[Component] = []
        self.boot = boot_id()

    def say(self, message: str) -> None:
        if self.progress:
            print(f"[dev-cluster] {message}", flush=True, file=sys.stderr)

    def kubectl_argv(self) -> list[str]:
        kubeconfig = self.directory / "admin.kubeconfig"
        return [str(self.binaries.kubectl), f"--kubeconfig={kubeconfig}"]

    def stop_all(self) -> None:
        for component in reversed(self.started):
            component.stop(self.boot)

    def launch(self, name: str, binary: Path, args: list[str], port: int) -> Component:
        argv = [str(binary), *args]
        process = spawn(name, argv, self.logs, self.directory)
        component = Component(name, str(binary), process.pid, port, argv, start_time(process.pid))
        self.started.append(component)
        return component

    def dead(self) -> str | None:
        for component in self.started:
            if not component.alive(self.boot):
                return (
                    f"{component.name} exited; last lines of "
                    f"{self.logs / (component.name + '.log')}:\n"
                    + log_tail(self.logs, component.name)
                )
        return None

    def start(
        self,
        with_kube_scheduler: bool,
        scheduler_args: list[str],
        *,
        lean: bool,
        profiling: bool = False,
        apiserver_extra: Sequence[str] = (),
        controller_manager_extra: Sequence[str] = (),
    ) -> State:
        d, b = self.directory, self.binaries
        identities = {**IDENTITIES, **(self.nodes.identities if self.nodes is not None else {})}
        creds = create_credentials(d / "pki", identities)
        if self.nodes is not None:
            create_kubelet_client_pair(creds)
        etcd_port, peer_port = free_port(), free_port()
        api_port = free_port(self.address)
        server = f"https://{self.address}:{api_port}"

        self.say(f"starting etcd {b.versions.etcd} on 127.0.0.1:{etcd_port}")
        shutil.rmtree(d / "etcd", ignore_errors=True)
        self.launch("etcd", b.etcd, _etcd_args(d / "etcd", etcd_port, peer_port), etcd_port)
        wait_for(
            "etcd /health",
            lambda: _http_ok(f"http://127.0.0.1:{etcd_port}/health"),
            timeout=30,
            alive=self.dead,
        )

        self.say(f"starting kube-apiserver {b.versions.kube} on {server}")
        apiserver_args = _apiserver_args(
            d, creds, etcd_port, api_port, self.address, profiling=profiling
        ) + _gate_args(self.feature_gates, api_server=True)
        if lean:
            apiserver_args.append(
                f"--disable-admission-plugins={','.join(LEAN_DISABLED_ADMISSION)}"
            )
        apiserver_args.extend(apiserver_extra)
        self.launch("kube-apiserver", b.kube_apiserver, apiserver_args, api_port)
        admin_token = creds.tokens["admin"]
        wait_for(
            "kube-apiserver /readyz",
            lambda: _http_ok(f"{server}/readyz", token=admin_token),
            timeout=READY_TIMEOUT,
            alive=self.dead,
        )
        for name, (user, _) in identities.items():
            write_kubeconfig(
                d / f"{name}.kubeconfig",
                server=server,
                ca_file=creds.serving_cert,
                token=creds.tokens[name],
                user=user,
            )

        if lean:
            state = State(
                str(d), server, str(b.directory), False, list(self.started), boot=self.boot,
                feature_gates=self.feature_gates,
            )  # fmt: skip
            state.save(d)
            self.say("ready (lean: etcd and kube-apiserver only)")
            return state
        self.say("starting kube-controller-manager")
        self.launch(
            "kube-controller-manager",
            b.kube_controller_manager,
            [
                *_controller_manager_args(d, creds),
                *_gate_args(self.feature_gates),
                *controller_manager_extra,
            ],
            0,
        )
        if with_kube_scheduler:
            sched_port = free_port()
            self.say(f"starting kube-scheduler (default-scheduler) on 127.0.0.1:{sched_port}")
            self.launch(
                "kube-scheduler",
                b.kube_scheduler,
                _scheduler_args(d, sched_port, scheduler_args),
                sched_port,
            )
        kwok_port = free_port()
        self.say(f"starting kwok {b.versions.kwok}")
        self.launch("kwok", b.kwok, _kwok_args(d, b, kwok_port), kwok_port)

        admin = Client.from_kubeconfig(str(d / "admin.kubeconfig"))
        # The ServiceAccount controller (in KCM) creating `default` proves KCM works, and pods
        # cannot be admitted before it exists.
        wait_for(
            "kube-controller-manager (the default ServiceAccount)",
            lambda: _exists(admin, "/api/v1/namespaces/default/serviceaccounts/default"),
            timeout=READY_TIMEOUT,
            alive=self.dead,
        )
        if with_kube_scheduler:
            wait_for(
                "kube-scheduler /healthz",
                lambda: _http_ok(f"https://127.0.0.1:{sched_port}/healthz"),
                timeout=READY_TIMEOUT,
                alive=self.dead,
            )
        wait_for(
            "kwok /healthz",
            lambda: _http_ok(f"http://127.0.0.1:{kwok_port}/healthz"),
            timeout=READY_TIMEOUT,
            alive=self.dead,
        )

        state = State(
            str(d), server, str(b.directory), with_kube_scheduler, list(self.started),
            real_node=self.nodes is not None, boot=self.boot, feature_gates=self.feature_gates,
        )  # fmt: skip
        state.save(d)
        self.say("ready")
        return state


def _etcd_args(data: Path, port: int, peer: int) -> list[str]:
    client, peer_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{peer}"
    return [
        "--name=corral", f"--data-dir={data}",
        f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
        f"--initial-cluster=corral={peer_url}",
        "--unsafe-no-fsync=true",  # test data; fsync dominates latency on a small VM
        "--log-level=warn",
    ]  # fmt: skip


def _apiserver_args(
    d: Path, creds: Credentials, etcd_port: int, port: int, address: str, *, profiling: bool = False
) -> list[str]:
    if address == "127.0.0.1":
        # No real network behind the kubernetes Service (loopback cannot be its endpoint).
        network = ["--endpoint-reconciler-type=none"]
    else:
        # A real node: the lease reconciler gives the kubernetes Service this address, pods
        # reach it through kube-proxy; kubelets are dialled by IP (no DNS name for the node),
        # and authenticate the API server by its client certificate (no anonymous access).
        network = [
            "--enable-admission-plugins=NodeRestriction",
            "--kubelet-preferred-address-types=InternalIP,Hostname",
            f"--kubelet-client-certificate={creds.kubelet_client_cert}",
            f"--kubelet-client-key={creds.kubelet_client_key}",
            # Webhooks behind a Service are dialled at a ready endpoint (the pod's address on
            # the node's bridge), not at the ClusterIP: that works too, through kube-proxy's
            # rules, but until they exist the call would be routed off the machine.
            "--enable-aggregator-routing=true",
        ]
    return [
        f"--etcd-servers=http://127.0.0.1:{etcd_port}",
        f"--bind-address={address}", f"--advertise-address={address}", f"--secure-port={port}",
        f"--cert-dir={creds.pki_dir}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={creds.sa_key}",
        f"--service-account-signing-key-file={creds.sa_key}",
        f"--token-auth-file={creds.token_file}",
        "--authorization-mode=Node,RBAC",
        # The default admission chain (ServiceAccount, NamespaceLifecycle, Priority, ...) stays on.
        "--allow-privileged=true",
        *network,
        f"--profiling={'true' if profiling else 'false'}",
        # PodTemplates (used by nothing here) bypass the watch cache, so their watches read etcd
        # directly and tests can provoke a genuine 410 Gone with compact_etcd().
        "--watch-cache-sizes=podtemplates#0",
    ]  # fmt: skip


# The API group versions GenericWorkload's objects are served in (off by default, as beta APIs).
WORKLOAD_API_VERSIONS: Final = ("scheduling.k8s.io/v1beta1",)


def _gate_args(gates: Mapping[str, bool], *, api_server: bool = False) -> list[str]:
    """``--feature-gates`` (and, for the API server with GenericWorkload, the Workload APIs)."""
    if not gates:
        return []
    flag = ",".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(gates.items()))
    args = [f"--feature-gates={flag}"]
    if api_server and gates.get("GenericWorkload"):
        args.append("--runtime-config=" + ",".join(f"{v}=true" for v in WORKLOAD_API_VERSIONS))
    return args


def _controller_manager_args(d: Path, creds: Credentials) -> list[str]:
    return [
        f"--kubeconfig={d / 'controller-manager.kubeconfig'}",
        "--use-service-account-credentials=true",  # each controller under its own identity
        f"--service-account-private-key-file={creds.sa_key}",
        f"--root-ca-file={creds.serving_cert}",
        "--controllers=*",
        "--leader-elect=false",
        "--secure-port=0",
    ]  # fmt: skip


def _scheduler_args(d: Path, port: int, extra: list[str]) -> list[str]:
    kubeconfig = d / "scheduler.kubeconfig"
    args = [
        "--bind-address=127.0.0.1", f"--secure-port={port}",
        f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
    ]  # fmt: skip
    if not any(a.startswith("--config") for a in extra):
        args += [f"--kubeconfig={kubeconfig}", "--leader-elect=false"]
    return args + extra


def _kwok_args(d: Path, b: Binaries, port: int) -> list[str]:
    return [
        f"--kubeconfig={d / 'admin.kubeconfig'}",
        f"--config={b.kwok_stages}",
        "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={fake_nodes.MANAGED_ANNOTATION}=fake",
        f"--cidr={POD_CIDR}",
        "--node-ip=10.0.0.1",
        f"--server-address=127.0.0.1:{port}",
        "--node-lease-duration-seconds=40",
    ]


def _http_ok(url: str, token: str | None = None) -> bool:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    # Readiness polling only; the self-signed certificate is verified by every real client.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with urllib.request.urlopen(request, timeout=2, context=context) as response:
        return bool(response.status == 200)


def _post_json(url: str, body: JSON) -> JSON:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: JSON = json.loads(response.read())
        return answer


def _exists(client: Client, path: str) -> bool:
    try:
        client.request("GET", path)
    except ApiError as exc:
        if exc.not_found:
            return False
        raise
    return True


__all__ = ["ControlPlaneError", "LocalCluster", "ProcessError"]
