"""The local engine runtime: each profile's engine as local processes (``--local-engines``).

On a kubelet-less cluster the rendered Deployment's pods never run anything, so the operator
runs them itself, exactly as the Deployment would:

- one process per replica, ``<python> -m corral scheduler`` with the container's command line
  from the rendered Deployment, except ``--config`` (a local copy of the rendered config),
  ``--bind-address`` (127.0.0.1 and a free port) and an added ``--kubeconfig`` holding a
  TokenRequest token of the profile's own ServiceAccount, so the rendered RBAC is what the
  engine gets;
- ``POD_NAME`` distinct per replica (``<deployment>-local-<i>``) and ``POD_NAMESPACE`` the
  profile's namespace, as the Downward API would set them;
- an extender's ``tlsSecretRef`` Secret written under the engine's directory (files mode 0600,
  the keys the pod's Secret volume would show) and the config's ``tlsConfig`` paths pointed
  there, as the Deployment's volume mount would; until the Secret can be read the engines are
  not (re)started, as a pod would wait for its volume;
- restarted when the config hash, the Secrets or the command line change, or when the token
  nears expiry;
  restarted after a crash with a doubling delay; stopped when the profile goes or shrinks.

Contract: :meth:`want` (called by reconcile workers) only records the desired processes and
writes their files; :meth:`supervise` (called periodically on the event loop's thread) starts
and stops processes, so every engine's parent is that long-lived thread and engines die with
the operator (PR_SET_PDEATHSIG on Linux).
"""

from __future__ import annotations

import base64
import ctypes
import hashlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

import yaml

from corral.api import SchedulerProfile
from corral.api.scheduler_config import EXTENDER_TLS_ROOT
from corral.k8s import ApiError, Client
from corral.k8s.kubeconfig import write_token_kubeconfig
from corral.ports import free_port
from corral.render import Rendered, names

TOKEN_SECONDS: Final = 3600 * 6
TOKEN_RENEW_FRACTION: Final = 0.8  # restart with a fresh token after 80% of its lifetime
STOP_GRACE: Final = 5.0
MAX_CRASH_DELAY: Final = 60.0
PR_SET_PDEATHSIG: Final = 1

log = logging.getLogger(__name__)

TokenSource = Callable[[str, str, int], str]  # (namespace, service account, seconds) -> token


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """One desired process."""

    profile: str
    index: int
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    log_file: Path
    fingerprint: str  # changes whenever the process must restart


@dataclass(slots=True)
class Running:
    spec: EngineSpec
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    started: float
    crashes: int = 0
    retry_at: float = 0.0


@dataclass(slots=True)
class _Profile:
    specs: list[EngineSpec]
    token_deadline: float
    config_hash: str
    argv_base: tuple[str, ...] = field(default_factory=tuple)
    secrets_digest: str = ""


def container_command(rendered: Rendered) -> list[str]:
    deployment = next(o for o in rendered.objects if o["kind"] == "Deployment")
    containers = deployment["spec"]["template"]["spec"]["containers"]
    container = next(c for c in containers if c["name"] == names.CONTAINER_NAME)
    return [str(a) for a in container["command"]]


def local_argv(
    command: Sequence[str], *, launcher: Sequence[str], config: Path, port: int, kubeconfig: Path
) -> list[str]:
    """The container's command line for a local process (see the module docstring)."""
    if list(command[: len(names.ENGINE_COMMAND) - 1]) != list(names.ENGINE_COMMAND[:-1]):
        raise ValueError(f"unexpected engine command {command!r}")
    out = [*launcher, *command[1:]]  # "corral" -> the launcher ("python -m corral")
    for i, arg in enumerate(out):
        if arg == names.CONFIG_FILE:
            out[i] = str(config)
        elif arg.startswith("--bind-address="):
            out[i] = f"--bind-address=127.0.0.1:{port}"
    return [*out, f"--kubeconfig={kubeconfig}"]


def localize(config_yaml: str, root: Path) -> str:
    """The rendered config with extender TLS paths under the pod's mount point moved to
    ``root`` (where :meth:`LocalEngines._extender_secrets` writes the Secrets)."""
    if EXTENDER_TLS_ROOT not in config_yaml:
        return config_yaml
    data = yaml.safe_load(config_yaml)
    prefix = EXTENDER_TLS_ROOT + "/"
    for ext in data.get("extenders") or []:
        tls = ext.get("tlsConfig") or {}
        for key in ("certFile", "keyFile", "caFile"):
            value = tls.get(key)
            if isinstance(value, str) and value.startswith(prefix):
                tls[key] = str(root / value[len(prefix) :])
    return str(yaml.safe_dump(data, sort_keys=False))


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


class LocalEngines:
    def __init__(
        self,
        *,
        client: Client,
        directory: Path,
        tokens: TokenSource | None = None,  # None: TokenRequest through ``client``
        launcher: Sequence[str] = (sys.executable, "-m", "corral"),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.directory = directory
        self.tokens = tokens or self._request_token
        self.launcher = tuple(launcher)
        self.clock = clock
        self._lock = threading.Lock()
        self._desired: dict[str, _Profile] = {}
        self._running: dict[tuple[str, int], Running] = {}
        self._stopping: list[tuple[Running, float]] = []

    def _request_token(self, namespace: str, account: str, seconds: int) -> str:
        return self.client.request_token(namespace, account, expiration_seconds=seconds)

    # --- desired state (reconcile workers) ------------------------------------------------

    def want(self, profile: SchedulerProfile, rendered: Rendered) -> None:
        name = profile.name
        command = tuple(container_command(rendered))
        replicas = profile.spec.replicas or 0
        base = self.directory / name
        try:
            secrets = self._extender_secrets(profile, base / "extender-tls")
        except (ApiError, ValueError) as exc:
            log.warning("local engines of %s wait for their extender TLS Secret: %s", name, exc)
            return
        with self._lock:
            current = self._desired.get(name)
        fresh = (
            current is not None
            and current.config_hash == rendered.config_hash
            and current.secrets_digest == secrets
            and current.argv_base == command
            and len(current.specs) == replicas
            and self.clock() < current.token_deadline
        )
        if fresh:
            return
        base.mkdir(parents=True, exist_ok=True)
        config = base / "config.yaml"
        config.write_text(localize(rendered.config_yaml, base / "extender-tls"), encoding="utf-8")
        namespace = profile.spec.namespace or ""
        account = names.base_name(profile)
        kubeconfig = base / "kubeconfig"
        if current is None or self.clock() >= current.token_deadline:
            token = self.tokens(namespace, account, TOKEN_SECONDS)
            write_token_kubeconfig(kubeconfig, self.client, token, f"{namespace}:{account}")
            deadline = self.clock() + TOKEN_SECONDS * TOKEN_RENEW_FRACTION
            token_stamp = str(deadline)
        else:
            deadline = current.token_deadline
            token_stamp = str(deadline)
        specs = []
        for index in range(replicas):
            old = current.specs[index] if current and index < len(current.specs) else None
            port = _port_of(old.argv) if old is not None else free_port()
            argv = local_argv(
                command,
                launcher=self.launcher,
                config=config,
                port=port,
                kubeconfig=kubeconfig,
            )
            pod_name = f"{names.base_name(profile)}-local-{index}"
            specs.append(
                EngineSpec(
                    profile=name,
                    index=index,
                    argv=tuple(argv),
                    env=(("POD_NAME", pod_name), ("POD_NAMESPACE", namespace)),
                    log_file=base / f"{pod_name}.log",
                    fingerprint=f"{rendered.config_hash}:{secrets}:{token_stamp}:{' '.join(argv)}",
                )
            )
        with self._lock:
            self._desired[name] = _Profile(specs, deadline, rendered.config_hash, command, secrets)

    def _extender_secrets(self, profile: SchedulerProfile, root: Path) -> str:
        """Write each ``tlsSecretRef`` Secret's keys to ``root/<extender index>/``; return a
        digest of their contents ("" when there are none)."""
        digest = hashlib.sha256()
        for index, ext in enumerate(profile.spec.extenders):
            if ext.tls_secret_ref is None:
                continue
            secret = self.client.get(
                "v1", "Secret", ext.tls_secret_ref.name, profile.spec.namespace
            )
            where = root / str(index)
            where.mkdir(parents=True, exist_ok=True, mode=0o700)
            for key, value in sorted((secret.get("data") or {}).items()):
                if "/" in key or key.startswith("."):
                    continue  # not a file a Secret volume would show
                data = base64.b64decode(value)
                digest.update(f"{index}/{key}\0".encode() + data)
                tmp = where / f".{key}.tmp"
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                tmp.replace(where / key)
        return digest.hexdigest() if any(e.tls_secret_ref for e in profile.spec.extenders) else ""

    def forget(self, name: str) -> None:
        with self._lock:
            self._desired.pop(name, None)

    def desired(self, name: str) -> list[EngineSpec]:
        with self._lock:
            entry = self._desired.get(name)
            return list(entry.specs) if entry else []

    # --- processes (the event loop's thread) ----------------------------------------------

    def supervise(self) -> None:
        """Start, restart and stop processes until they match the desired state."""
        self.reap()
        with self._lock:
            wanted = {(s.profile, s.index): s for p in self._desired.values() for s in p.specs}
        for key in list(self._running):
            run = self._running[key]
            spec = wanted.get(key)
            if spec is None or spec.fingerprint != run.spec.fingerprint:
                why = "profile gone or shrunk" if spec is None else "config or token changed"
                log.info("stopping local engine %s-%d (%s)", key[0], key[1], why)
                self._stop(run)
                del self._running[key]
        now = self.clock()
        for key, spec in wanted.items():
            current = self._running.get(key)
            if current is not None and current.process.poll() is None:
                continue
            crashes = 0
            if current is not None:
                if not current.retry_at:
                    # Crashed: wait 1, 2, 4 ... 60 s before the next start; a process that had
                    # run for a minute starts the count again.
                    current.crashes = (
                        1 if now - current.started > MAX_CRASH_DELAY else current.crashes + 1
                    )
                    current.retry_at = now + min(MAX_CRASH_DELAY, 2.0 ** (current.crashes - 1))
                    log.warning(
                        "local engine %s-%d exited with %s; restarting in %.0fs (log: %s)",
                        key[0],
                        key[1],
                        current.process.returncode,
                        current.retry_at - now,
                        spec.log_file,
                    )
                if now < current.retry_at:
                    continue
                current.log.close()
                crashes = current.crashes
            self._running[key] = self._start(spec, crashes)

    def _start(self, spec: EngineSpec, crashes: int) -> Running:
        spec.log_file.parent.mkdir(parents=True, exist_ok=True)
        out = spec.log_file.open("ab")
        env = {**os.environ, **dict(spec.env)}
        log.info("starting local engine %s-%d: %s", spec.profile, spec.index, " ".join(spec.argv))
        process = subprocess.Popen(
            list(spec.argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
        )
        return Running(spec, process, out, self.clock(), crashes)

    def _stop(self, run: Running) -> None:
        """SIGTERM now; :meth:`reap` escalates to SIGKILL after the grace period, so the event
        loop is never blocked waiting for an engine to exit."""
        if run.process.poll() is None:
            run.process.terminate()
        self._stopping.append((run, self.clock()))

    def reap(self) -> None:
        left: list[tuple[Running, float]] = []
        for run, since in self._stopping:
            if run.process.poll() is not None:
                run.log.close()
                continue
            if self.clock() - since > STOP_GRACE:
                run.process.kill()
            left.append((run, since))
        self._stopping = left

    def running(self) -> dict[tuple[str, int], Any]:
        """Live processes by (profile, replica index): their pid and argv."""
        return {
            k: {"pid": r.process.pid, "argv": r.spec.argv, "env": dict(r.spec.env)}
            for k, r in self._running.items()
            if r.process.poll() is None
        }

    def stop_all(self) -> None:
        """Stop every engine and wait for them (operator shutdown)."""
        with self._lock:
            self._desired.clear()
        for run in self._running.values():
            self._stop(run)
        self._running.clear()
        for run, _ in self._stopping:
            try:
                run.process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                run.process.kill()
                run.process.wait()
            run.log.close()
        self._stopping.clear()


def _port_of(argv: Sequence[str]) -> int:
    for arg in argv:
        if arg.startswith("--bind-address="):
            return int(arg.rsplit(":", 1)[1])
    return free_port()
