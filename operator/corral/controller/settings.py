"""Operator settings: what the platform team decides, from flags or the environment.

Contract: every setting has a flag (``corral operator --help``) and a ``CORRAL_*`` environment
variable; a flag wins over the environment, the environment over the default. Bad values are a
:class:`SettingsError` with one readable message, never a traceback.

The webhook's Service and certificate Secret may be given without a namespace: they are then in
the operator's own namespace (``POD_NAMESPACE``, set from the downward API by the install; else
the profiles' default namespace), so an install moved by a kustomize ``namespace:`` overlay or
``helm install -n`` needs no flag rewritten.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from corral.api import OperatorDefaults
from corral.api.defaults import DEFAULT_IMAGE, DEFAULT_NAMESPACE
from corral.api.image_reference import check_image_reference

FIELD_MANAGER: Final = "corral"
LogFormat = Literal["text", "json"]
LOG_FORMATS: Final = ("text", "json")

# Environment variable of each setting (also documented in docs/operator.md).
ENV: Final = {
    "namespace": "CORRAL_NAMESPACE",
    "image": "CORRAL_ENGINE_IMAGE",
    "log_format": "CORRAL_LOG_FORMAT",
    "pending_threshold": "CORRAL_PENDING_THRESHOLD_SECONDS",
    "resync": "CORRAL_RESYNC_SECONDS",
    "workers": "CORRAL_WORKERS",
    "reserved": "CORRAL_RESERVED_SCHEDULER_NAMES",
    "local_engines": "CORRAL_LOCAL_ENGINES",
    "allow_system_leases": "CORRAL_ALLOW_SYSTEM_LEASES",
    "engine_dir": "CORRAL_ENGINE_DIR",
    "webhook_listen": "CORRAL_WEBHOOK_LISTEN",
    "webhook_host": "CORRAL_WEBHOOK_HOST",
    "webhook_service": "CORRAL_WEBHOOK_SERVICE",
    "webhook_cert_dir": "CORRAL_WEBHOOK_CERT_DIR",
    "webhook_cert_secret": "CORRAL_WEBHOOK_CERT_SECRET",
}
# The operator's own namespace (the downward API's metadata.namespace), for names given alone.
OWN_NAMESPACE_ENV: Final = "POD_NAMESPACE"


class SettingsError(ValueError):
    """A setting the operator cannot run with."""


@dataclass(frozen=True, slots=True)
class Settings:
    # Where a profile's objects go when it sets no spec.namespace, and the engine image.
    namespace: str = DEFAULT_NAMESPACE
    image: str = DEFAULT_IMAGE
    log_format: LogFormat = "text"
    # Pods Pending longer than this, that no Ready profile serves, get an Event.
    pending_threshold: float = 60.0
    # Every profile is reconciled at least this often (level-based safety net; refreshes the
    # leader shown in status, which is not watched).
    resync: float = 30.0
    workers: int = 4
    # Names of schedulers that run in the cluster outside Corral; profiles may not take them.
    reserved_scheduler_names: tuple[str, ...] = ("default-scheduler",)
    # Run each profile's engine as local processes too (kubelet-less dev clusters).
    local_engines: bool = False
    # Let profiles put their Lease in kube-system or kube-node-lease (corral.api.validation).
    allow_system_leases: bool = False
    engine_dir: Path = field(default_factory=lambda: Path(tempfile.gettempdir()) / "corral-engines")
    # The validating admission webhook (corral.controller.admission): off unless listening.
    webhook_listen: str | None = None  # HOST:PORT
    webhook_host: str | None = None  # the host in the webhook URL (local operator)
    # NAMESPACE/NAME[:PORT] of the Service (operator in a pod); a NAME alone is resolved to it.
    webhook_service: str | None = None
    webhook_cert_dir: Path | None = None  # user-provided tls.crt/tls.key/ca.crt; else generated
    # NAMESPACE/NAME sharing the generated pair; a NAME alone is resolved to it.
    webhook_cert_secret: str | None = None

    @property
    def operator_defaults(self) -> OperatorDefaults:
        return OperatorDefaults(
            namespace=self.namespace,
            image=self.image,
            allow_system_leases=self.allow_system_leases,
        )


def _positive(name: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name}: {raw!r} is not a number") from None
    if not math.isfinite(value):  # nan passes `<= 0`; inf would wait for ever
        raise SettingsError(f"{name}: must be a finite number of seconds, got {raw}")
    if value <= 0:
        raise SettingsError(f"{name}: must be greater than 0, got {raw}")
    return value


def _port_ok(raw: str) -> bool:
    return raw.isdigit() and 0 < int(raw) < 65536


def _bool(name: str, raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("", "0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name}: {raw!r} is not a boolean (true/false)")


def _in_namespace(ref: str, namespace: str) -> str:
    """``NAME`` (no ``/``) as ``namespace/NAME``; anything else as given."""
    return ref if "/" in ref or not ref else f"{namespace}/{ref}"


def from_sources(
    flags: Mapping[str, object | None],
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Settings from parsed flags (``None`` = not given) over ``environ`` over the defaults."""
    env = os.environ if environ is None else environ

    def pick(key: str) -> str | None:
        value = flags.get(key)
        if value is not None:
            return str(value)
        return env.get(ENV[key])

    base = Settings()
    log_format = pick("log_format") or base.log_format
    if log_format not in LOG_FORMATS:
        raise SettingsError(f"log format: {log_format!r} is not one of {', '.join(LOG_FORMATS)}")
    threshold = pick("pending_threshold")
    resync = pick("resync")
    workers = pick("workers")
    reserved = pick("reserved")
    local = flags.get("local_engines")
    local_engines = (
        bool(local) if local else _bool(ENV["local_engines"], env.get(ENV["local_engines"], ""))
    )
    allow = flags.get("allow_system_leases")
    allow_system_leases = (
        bool(allow)
        if allow
        else _bool(ENV["allow_system_leases"], env.get(ENV["allow_system_leases"], ""))
    )
    engine_dir = pick("engine_dir")
    namespace = pick("namespace") or base.namespace
    own = env.get(OWN_NAMESPACE_ENV) or namespace
    listen, service = pick("webhook_listen"), pick("webhook_service")
    if listen is not None:
        _, sep, port = listen.rpartition(":")
        if not sep or not _port_ok(port):
            raise SettingsError(f"webhook listen address: {listen!r} is not HOST:PORT")
    if service is not None:
        given, service = service, _in_namespace(service, own)
        ns, _, rest = service.partition("/")
        name, colon, port = rest.partition(":")
        if not (ns and name) or "/" in rest or (colon and not _port_ok(port)):
            raise SettingsError(f"webhook service: {given!r} is not [NAMESPACE/]NAME[:PORT]")
    if listen is None and (service is not None or pick("webhook_host") is not None):
        raise SettingsError("webhook host/service: give the webhook listen address too")
    cert_dir = pick("webhook_cert_dir")
    cert_secret = pick("webhook_cert_secret")
    if cert_secret is not None:
        given, cert_secret = cert_secret, _in_namespace(cert_secret, own)
        if cert_secret.count("/") != 1 or not all(cert_secret.split("/")):
            raise SettingsError(f"webhook cert secret: {given!r} is not [NAMESPACE/]NAME")
    if cert_secret is not None and cert_dir is not None:
        raise SettingsError("webhook certificates: give a cert directory or a Secret, not both")
    image = pick("image") or base.image
    for reason in check_image_reference(image):
        raise SettingsError(f"engine image (--image, ${ENV['image']}): {image!r}: {reason}")
    worker_count = int(_positive("workers", workers)) if workers else base.workers
    names = (
        tuple(n.strip() for n in reserved.split(",") if n.strip())
        if reserved is not None
        else base.reserved_scheduler_names
    )
    return Settings(
        namespace=namespace,
        image=image,
        log_format=log_format,  # type: ignore[arg-type]
        pending_threshold=(
            _positive("pending threshold", threshold) if threshold else base.pending_threshold
        ),
        resync=_positive("resync", resync) if resync else base.resync,
        workers=worker_count,
        reserved_scheduler_names=names,
        local_engines=local_engines,
        allow_system_leases=allow_system_leases,
        engine_dir=Path(engine_dir) if engine_dir else base.engine_dir,
        webhook_listen=listen,
        webhook_host=pick("webhook_host"),
        webhook_service=service,
        webhook_cert_dir=Path(cert_dir) if cert_dir else None,
        webhook_cert_secret=cert_secret,
    )
