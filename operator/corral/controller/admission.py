"""The validating admission webhook for SchedulerProfiles (kopf's admission support).

Contract:
- CREATE and UPDATE of a SchedulerProfile are answered with :func:`corral.controller.refusals.
  check`, the code the reconcile stalls with: every ``corral validate`` field-path error, a
  reserved or already served schedulerName, a Lease already used. Refused requests (dry runs
  included: the handler has no side effects) get the message with HTTP 422; deletes and the
  status subresource are not intercepted, so the operator's status writes never wait for it.
- kopf manages the ValidatingWebhookConfiguration ``corral.dev`` (created if absent, its
  ``clientConfig`` and ``caBundle`` patched whenever the server restarts with new certificates).
- Failure policy ``Fail``, and the webhook is kept when the operator stops: while no operator
  answers, profiles cannot be created or changed (deletes still work), so nothing unchecked
  gets in; the reconcile still runs the same checks for profiles that predate the webhook.
- The API server reaches the webhook by URL (a local operator: ``https://<host>:<port>``) or
  through a Service (the operator in a pod: ``--webhook-service namespace/name[:port]``, port
  443 by default); it checks the serving certificate against ``<name>.<namespace>.svc``.
- Serving certificates: user-provided (``--webhook-cert-dir`` with ``tls.crt``, ``tls.key``,
  ``ca.crt``; re-read when they change) or self-signed ones the operator issues for the URL host
  or the Service's DNS names and renews before they expire (:mod:`corral.controller.certs`),
  kept in a Secret (``--webhook-cert-secret``) when several replicas serve behind one Service.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Final

import kopf

from corral.controller import certs
from corral.k8s import ApiError, Client

log = logging.getLogger("corral.controller")

CONFIGURATION_NAME: Final = "corral.dev"
HANDLER_ID: Final = "profiles"
SERVICE_PORT: Final = 443
RENEW_CHECK_SECONDS: Final = 3600.0
SECRET_SYNC_SECONDS: Final = 60.0


class ServiceWebhookServer(kopf.WebhookServer):
    """kopf's HTTPS server, announced to the API server through a Service instead of a URL."""

    def __init__(self, namespace: str, name: str, service_port: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.service = (namespace, name, service_port)

    async def __call__(self, fn: Any) -> AsyncIterator[Any]:
        async for config in super().__call__(fn):
            namespace, name, port = self.service
            out: dict[str, Any] = {"service": {"namespace": namespace, "name": name, "port": port}}
            if config.get("caBundle"):
                out["caBundle"] = config["caBundle"]
            yield out


def service_hosts(namespace: str, name: str) -> list[str]:
    return [f"{name}.{namespace}.svc", f"{name}.{namespace}.svc.cluster.local", name]


class Webhook:
    """The server kopf runs, its certificates, and their renewal."""

    def __init__(
        self,
        listen: str,
        *,
        host: str | None = None,
        service: str | None = None,
        cert_dir: Path | None = None,
        cert_secret: str | None = None,  # NAMESPACE/NAME: self-signed pair shared by replicas
        client: Client | None = None,
    ) -> None:
        addr, _, port = listen.rpartition(":")
        self.addr, self.port = addr or "0.0.0.0", int(port)
        self.service: tuple[str, str, int] | None = None
        if service:
            namespace, _, rest = service.partition("/")
            name, _, port = rest.partition(":")
            self.service = (namespace, name, int(port) if port else SERVICE_PORT)
        self.url_host = host or ("127.0.0.1" if self.addr in ("0.0.0.0", "") else self.addr)
        self.generated = cert_dir is None
        self.cert_dir = cert_dir or Path(tempfile.mkdtemp(prefix="corral-webhook-"))
        if self.service is not None:
            self.hosts = service_hosts(*self.service[:2])
        else:
            self.hosts = [self.url_host]
        self.client = client
        self.secret: tuple[str, str] | None = None
        if cert_secret:
            secret_ns, _, secret_name = cert_secret.partition("/")
            self.secret = (secret_ns, secret_name)
        self.renew_every = RENEW_CHECK_SECONDS
        if self.generated and self.secret is not None and client is not None:
            self.renew_every = SECRET_SYNC_SECONDS  # a peer's renewal arrives within a minute
            certs.sync_secret(client, *self.secret, directory=self.cert_dir, hosts=self.hosts)
        elif self.generated:
            certs.ensure(self.cert_dir, self.hosts)

    def server(self) -> kopf.WebhookServer:
        files: dict[str, Any] = {
            "certfile": self.cert_dir / certs.CERT_FILE,
            "pkeyfile": self.cert_dir / certs.KEY_FILE,
            "cafile": self.cert_dir / certs.CA_FILE,
            "file_check_interval": 5.0,
        }
        if self.service is not None:
            return ServiceWebhookServer(*self.service, addr=self.addr, port=self.port, **files)
        return kopf.WebhookServer(addr=self.addr, port=self.port, host=self.url_host, **files)

    def configure(self, settings: kopf.OperatorSettings) -> None:
        settings.admission.server = self.server()
        settings.admission.managed = CONFIGURATION_NAME

    def close(self) -> None:
        """Remove self-signed files (a user's directory is left alone)."""
        if self.generated:
            shutil.rmtree(self.cert_dir, ignore_errors=True)

    async def renew(self, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        """Re-issue self-signed certificates before they expire (kopf then restarts the server
        with them and patches the configuration's caBundle)."""
        while self.generated:
            await sleep(self.renew_every)
            try:
                if self.secret is not None and self.client is not None:
                    changed = await asyncio.to_thread(
                        certs.sync_secret,
                        self.client,
                        *self.secret,
                        directory=self.cert_dir,
                        hosts=self.hosts,
                    )
                else:
                    changed = certs.ensure(self.cert_dir, self.hosts)
            except ApiError as exc:  # the API server may be away; the current pair still serves
                log.warning("webhook certificate Secret: %s", exc)
                continue
            if changed:
                log.info("webhook serving certificate renewed in %s", self.cert_dir)
