"""The two schedulers under test, started the same way from the same configuration.

- ``upstream``: the pinned kube-scheduler binary of the local control plane.
- ``corral``: ``corral scheduler`` (the embedded engine), a Python process.
- ``ceiling``: no scheduler at all, the ceiling's binder (``ceiling_binder/main.go``): every
  pod of the profile's schedulerName bound as it appears, round-robin, with no scheduling. The
  protocol runs it between the two on API-bound workloads (``bench.goals``).

Both run as ``system:kube-scheduler`` (the cluster's ``scheduler.kubeconfig``, bootstrap RBAC
only), from one KubeSchedulerConfiguration v1 file, as children of the harness so their CPU
time and peak memory can be read from /proc. Readiness is proven the same way for both by the
callers (a canary pod gets bound), not by each scheduler's own health endpoint.
"""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from bench import procstat
from corral.k8s import Client
from corral.testing import LocalCluster
from corral.testing.processes import free_port, spawn, terminate

SCHEDULERS: Final = ("upstream", "corral")
# Run only when named: Corral without queueing hints (upstream's old SchedulerQueueingHints=false
# queue), to count the attempts hints save.
CORRAL_NO_HINTS: Final = "corral-nohints"
SCHEDULER_NAME: Final = "bench-scheduler"
CEILING: Final = "ceiling"
CEILING_CONCURRENCY: Final = 32  # bindings in flight (as bench.ceiling)
# The namespaces the ceiling binds pods in: the canary's and the measured pods' (bench.driver).
# Not the init namespace: Unschedulable's init pods and MixedChurn's churn pods must stay
# unbound, as a scheduler leaves them.
CEILING_NAMESPACES: Final = ("default", "sched-1")


@dataclass
class SchedulerConfig:
    """The knobs the harness varies; everything else is the upstream default."""

    scheduler_name: str = SCHEDULER_NAME
    # scheduler_perf runs the scheduler in-process with client QPS/Burst 5000/5000.
    qps: float = 5000.0
    burst: int = 5000
    percentage_of_nodes_to_score: int | None = None  # None: upstream's adaptive default
    # Disabled (multiPoint) on both sides alike, e.g. while the engine lacks a plugin.
    disabled_plugins: tuple[str, ...] = ()
    profile_extra: dict[str, Any] = field(default_factory=dict)  # plugins, pluginConfig, ...
    config_extra: dict[str, Any] = field(default_factory=dict)  # top level: extenders, ...
    corral_args: tuple[str, ...] = ()  # more `corral scheduler` arguments (not upstream's)

    def render(self, cluster: LocalCluster) -> dict[str, Any]:
        profile: dict[str, Any] = {
            "schedulerName": self.scheduler_name,
            **copy.deepcopy(self.profile_extra),
        }
        if self.disabled_plugins:
            multi_point = profile.setdefault("plugins", {}).setdefault("multiPoint", {})
            multi_point.setdefault("disabled", []).extend(
                {"name": name} for name in self.disabled_plugins
            )
        config: dict[str, Any] = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {
                # With --config, kube-scheduler ignores --kubeconfig: the file must name it.
                "kubeconfig": str(cluster.directory / "scheduler.kubeconfig"),
                "qps": self.qps,
                "burst": self.burst,
            },
            "leaderElection": {"leaderElect": False},
            "profiles": [profile],
        }
        if self.percentage_of_nodes_to_score is not None:
            config["percentageOfNodesToScore"] = self.percentage_of_nodes_to_score
        config.update(copy.deepcopy(self.config_extra))
        return config

    def write(self, cluster: LocalCluster, name: str = "bench-scheduler.yaml") -> Path:
        path = cluster.directory / name
        path.write_text(yaml.safe_dump(self.render(cluster), sort_keys=False))
        return path


def go_binder() -> Path:
    """The compiled ceiling binder, rebuilt when its source changes (cached by content)."""
    source = Path(__file__).with_name("ceiling_binder") / "main.go"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    binary = Path.home() / ".cache" / "corral" / "bench" / f"ceiling-binder-{digest}"
    if not binary.exists():
        binary.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": ""}
        partial = binary.with_name(f"{binary.name}.{os.getpid()}.tmp")  # two builders race
        subprocess.run(["go", "build", "-o", str(partial), str(source)], check=True, env=env,
                       cwd=source.parent)  # fmt: skip
        partial.replace(binary)
    return binary


def ceiling_argv(cluster: LocalCluster, scheduler_name: str) -> list[str]:
    """The ceiling binder's command line: the scheduler's identity (so API Priority and
    Fairness treats it as the scheduler), the pods of ``scheduler_name``, the cluster's nodes
    as they are now."""
    nodes = cluster.directory / "ceiling-nodes.txt"
    nodes.write_text(
        "\n".join(n["metadata"]["name"] for n in cluster.admin.list_items("v1", "Node"))
    )
    identity = Client.from_kubeconfig(str(cluster.directory / "scheduler.kubeconfig"))
    token = (identity.authorization() or "").removeprefix("Bearer ")
    namespaces = ",".join(CEILING_NAMESPACES)
    return [str(go_binder()), identity.server, token, identity.ca_file or "", namespaces,
            scheduler_name, str(CEILING_CONCURRENCY), str(nodes)]  # fmt: skip


def gate_args(gates: dict[str, bool]) -> list[str]:
    """``--feature-gates`` for either scheduler (both take upstream's syntax); none if empty."""
    if not gates:
        return []
    return [
        "--feature-gates=" + ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))
    ]


def corral_executable() -> Path | None:
    beside = Path(sys.executable).parent / "corral"
    if beside.exists():
        return beside
    found = shutil.which("corral")
    return Path(found) if found else None


def corral_unavailable_reason() -> str | None:
    """None when ``corral scheduler`` can be run, else why not (printed by the harness)."""
    executable = corral_executable()
    if executable is None:
        return "corral engine not available: no `corral` executable beside the interpreter"
    result = subprocess.run(
        [str(executable), "scheduler", "--help"], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        return (
            "corral engine not available: `corral scheduler --help` failed "
            f"({result.returncode}): {(result.stderr or result.stdout).strip()[-300:]}"
        )
    return None


class SchedulerProcess:
    """One running scheduler; ``stop`` returns its resource usage (read just before the kill)."""

    def __init__(self, kind: str, pid: int, executable: str, log: Path, port: int) -> None:
        self.kind = kind
        self.pid = pid
        self.executable = executable
        self.log = log
        self.port = port
        self.started = time.monotonic()

    @classmethod
    def start(
        cls,
        kind: str,
        cluster: LocalCluster,
        config: Path,
        *,
        extra_args: list[str] | None = None,
        log_name: str | None = None,
        scheduler_name: str = SCHEDULER_NAME,
    ) -> SchedulerProcess:
        port = free_port()
        kubeconfig = cluster.directory / "scheduler.kubeconfig"
        if kind == "upstream":
            executable = str(cluster.binaries / "kube-scheduler")
            argv = [
                executable,
                f"--config={config}",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                # Same as the control plane's own kube-scheduler: delegated authn/authz lookups
                # as the scheduler identity, so /healthz and /metrics work without warnings.
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
            ]
        elif kind in ("corral", CORRAL_NO_HINTS):
            found = corral_executable()
            if found is None:
                raise RuntimeError(corral_unavailable_reason() or "corral not found")
            executable = str(found)
            argv = [
                executable,
                "scheduler",
                f"--config={config}",
                f"--kubeconfig={kubeconfig}",
                f"--bind-address=127.0.0.1:{port}",
            ]
            if kind == CORRAL_NO_HINTS:
                argv.append("--queueing-hints=false")
        elif kind == CEILING:
            argv = ceiling_argv(cluster, scheduler_name)
            executable = argv[0]
        else:
            known = (*SCHEDULERS, CORRAL_NO_HINTS, CEILING)
            raise ValueError(f"unknown scheduler {kind!r}; expected one of {known}")
        name = log_name or f"bench-{kind}"
        process = spawn(
            name, [*argv, *(extra_args or [])], cluster.directory / "logs", cluster.directory
        )
        return cls(kind, process.pid, executable, cluster.directory / "logs" / f"{name}.log", port)

    def alive(self) -> bool:
        try:
            state = procstat._stat_fields(self.pid)[0]
        except OSError:
            return False
        return state not in ("Z", "X")

    def usage(self) -> procstat.Usage:
        return procstat.usage(self.pid)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> procstat.Usage:
        usage = procstat.usage(self.pid) if self.alive() else procstat.Usage(0.0, 0)
        terminate(self.pid, None, grace=5.0)
        return usage
