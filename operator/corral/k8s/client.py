"""A small synchronous JSON client for the Kubernetes API.

Contract: requests and responses are plain JSON (``dict``/``list``), never the client library's
model objects, which are far too slow for pod traffic. The official ``kubernetes`` package is
used only for what it does well: reading the kubeconfigs and in-cluster credentials that
:mod:`corral.k8s.credentials` leaves to it (exec plugins, auth providers, proxies, merged
files...), and imported only then (it weighs about 16 MB of RSS). Every non-2xx answer raises
:class:`ApiError` carrying the API's ``Status``.
The one exception to JSON is :meth:`Client.send`, a write whose answer is not read, which may go
as protobuf (:mod:`corral.k8s.protobuf`).

An answer the server asks to retry — 429 (API Priority and Fairness, a shutting-down server) or
a 5xx, with an integer ``Retry-After`` — is sent again after that many seconds, up to
:data:`RETRY_AFTER_ATTEMPTS` more times, as client-go's rest client does, for every verb (the
server did not act on a 429; a write it may have acted on answers 409 on the retry). The waits
together stay within the request's ``timeout``; past it, or past the attempts, the error raises.
"""

from __future__ import annotations

import functools
import os
import re
import ssl
import subprocess
import threading
import time
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlencode, urlsplit

import orjson
import urllib3

from corral.boundedio import InputError, read_input
from corral.k8s import credentials, protobuf
from corral.k8s.observer import NO_ANSWER, RequestObserver
from corral.k8s.transport import Transport, TransportError, server_hostname_for, ssl_context_for
from corral.yamlload import YamlError, load_all

JSON = dict[str, Any]

CONTENT_JSON: Final = "application/json"
CONTENT_MERGE_PATCH: Final = "application/merge-patch+json"
CONTENT_STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"
CONTENT_APPLY_PATCH: Final = "application/apply-patch+yaml"
# What a protobuf write accepts back: protobuf (a Status for errors), JSON from whatever in the
# API server's chain answers only that (client-go sends the same list).
ACCEPT_PROTOBUF: Final = f"{protobuf.CONTENT_PROTOBUF}, {CONTENT_JSON}"

DEFAULT_TIMEOUT_SECONDS: Final = 30.0
RETRY_AFTER_ATTEMPTS: Final = 10  # client-go's rest.Request maxRetries
# How long a bearer token is reused before the loaders' refresh hook runs again: client-go's
# cached token file source re-reads a rotating (in-cluster) token once a minute as well. The hook
# is costly (it rebuilds the proxy settings from the environment), and ran on every request.
TOKEN_REFRESH_SECONDS: Final = 60.0


# An exec credential plugin that does not answer within this is killed and loading fails (the
# client library would wait for ever, at start and at every token refresh).
EXEC_TIMEOUT_SECONDS = 30.0


class KubeconfigError(ValueError):
    """Credentials that cannot be loaded; the message is one line naming the file."""


class _TimedPopen(subprocess.Popen[Any]):
    def communicate(self, input: Any = None, timeout: float | None = None) -> Any:
        limit = EXEC_TIMEOUT_SECONDS if timeout is None else timeout
        try:
            return super().communicate(input, limit)
        except subprocess.TimeoutExpired:
            self.kill()
            super().communicate()
            command = self.args[0] if isinstance(self.args, list | tuple) else self.args
            raise KubeconfigError(
                f"exec plugin {command!r} did not answer within {limit:g}s"
            ) from None


@functools.cache
def _library() -> types.ModuleType:
    """The ``kubernetes`` package, imported on first need. It runs exec plugins with
    subprocess.Popen(...).communicate() and no timeout, reading the name from its module's
    globals: replacing it bounds every run, refreshes included."""
    import kubernetes.client.rest  # noqa: PLC0415
    import kubernetes.config  # noqa: PLC0415
    from kubernetes.config import exec_provider  # noqa: PLC0415

    vars(exec_provider)["subprocess"] = types.SimpleNamespace(
        Popen=_TimedPopen, PIPE=subprocess.PIPE
    )
    return kubernetes


class ApiError(Exception):
    """A non-2xx answer from the API server, or a transport failure (``status`` 0)."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        body: JSON | None = None,
        *,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(f"{status} {reason}: {message}" if status else message)
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}
        self.retry_after = retry_after  # the answer's Retry-After, whole seconds

    @property
    def retry_wait(self) -> float | None:
        """Seconds to wait before sending the request again (client-go's ``checkWait``: a 429
        or 5xx with a Retry-After), or None when it is not to be retried."""
        if self.retry_after is None or not (self.status == 429 or self.status >= 500):
            return None
        return float(max(0, self.retry_after))

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def forbidden(self) -> bool:
        return self.status == 403


@dataclass(frozen=True)
class ResourceInfo:
    """Where a kind lives in the API, as discovery reports it."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = api_prefix(self.api_version)
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


class Client:
    """JSON requests against one API server with one identity. Thread-safe."""

    def __init__(self, configuration: Any, *, pool_size: int = 64) -> None:
        self._configuration = configuration
        # One kept-alive connection per concurrent caller (e.g. binding threads): a smaller pool
        # discards connections and pays a TLS handshake for every other request.
        configuration.connection_pool_maxsize = max(
            pool_size, configuration.connection_pool_maxsize or 0
        )
        manager = (
            _pool_manager(configuration)
            if isinstance(configuration, credentials.Settings)
            else _library().client.rest.RESTClientObject(configuration).pool_manager
        )
        self._manager: urllib3.PoolManager = manager
        # Requests go straight to the server's connection pool: PoolManager.request parses the
        # URL and looks the pool up again on every call, a seventh of a binding thread's CPU
        # per request. Behind an HTTP(S) proxy the manager builds each request itself.
        self._direct: urllib3.HTTPConnectionPool | None = (
            None
            if isinstance(manager, urllib3.ProxyManager)
            else manager.connection_from_url(self.server)
        )
        # Requests that read their whole answer take the lean transport (its docstring says
        # why); watch streams, and everything behind a proxy, stay on urllib3.
        self._lean: Transport | None = (
            Transport(
                self.server,
                ssl_context_for(configuration),
                server_hostname=server_hostname_for(configuration),
            )
            if type(manager) is urllib3.PoolManager
            else None
        )
        self._prefix = urlsplit(self.server).path.rstrip("/")  # a server URL may have a path
        self._discovery: dict[tuple[str, str], ResourceInfo] = {}
        self._discovery_lock = threading.Lock()
        self._auth: tuple[float, str | None] | None = None  # (read at, header value)
        # Told about every request (corral.k8s.observer); AsyncClients over this one use it too.
        self.observer: RequestObserver | None = None
        self.host = urlsplit(self.server).netloc
        self._sleep = time.sleep  # the Retry-After waits (tests replace it)

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def from_kubeconfig(cls, path: str | None = None, context: str | None = None) -> Client:
        """Raises :class:`KubeconfigError` (one line) for anything unusable."""
        where = path or os.environ.get("KUBECONFIG") or "~/.kube/config"
        try:
            for name in _kubeconfig_files(path):  # bounded first: the loaders read them too
                _check_kubeconfig(name)
            configuration: Any = credentials.from_kubeconfig(path, context)
            if configuration is None:
                library = _library()
                configuration = library.client.Configuration()
                library.config.load_kube_config(
                    config_file=path, context=context, client_configuration=configuration
                )
        except (KubeconfigError, YamlError):
            raise
        except InputError as exc:
            raise KubeconfigError(str(exc)) from None
        except Exception as exc:  # the client library raises a zoo of exceptions
            raise KubeconfigError(f"{where}: {_one_line(exc)}") from None
        try:
            return cls(configuration)
        except ValueError as exc:  # urllib3: no host in the cluster's server URL, a bad port
            raise KubeconfigError(
                f"{where}: the context's cluster has no usable server URL ({_one_line(exc)})"
            ) from None

    @classmethod
    def in_cluster(cls) -> Client:
        configuration: Any = credentials.in_cluster()
        if configuration is not None:
            return cls(configuration)
        try:
            library = _library()
            configuration = library.client.Configuration()
            library.config.load_incluster_config(client_configuration=configuration)
        except Exception as exc:
            raise KubeconfigError(f"in-cluster credentials: {_one_line(exc)}") from None
        return cls(configuration)

    @classmethod
    def from_token(cls, server: str, token: str, ca_file: str | None) -> Client:
        """A client for ``server`` authenticating with a bearer ``token``."""
        simple = credentials.from_token(server, token, ca_file)
        if simple is not None:
            return cls(simple)
        configuration = _library().client.Configuration()
        configuration.host = server
        configuration.api_key = {"authorization": token}
        configuration.api_key_prefix = {"authorization": "Bearer"}
        configuration.ssl_ca_cert = ca_file
        configuration.verify_ssl = ca_file is not None
        return cls(configuration)

    @property
    def configuration(self) -> Any:
        """The client library's configuration: server, trust, credentials (read-only use)."""
        return self._configuration

    def authorization(self) -> str | None:
        """The ``Authorization`` header value, if the identity is a bearer token; re-read at
        most every ``TOKEN_REFRESH_SECONDS`` (concurrent callers may both re-read: harmless)."""
        now = time.monotonic()
        cached = self._auth
        if cached is not None and now - cached[0] < TOKEN_REFRESH_SECONDS:
            return cached[1]
        # auth_settings() also runs the loaders' refresh hook (in-cluster tokens rotate).
        value = self._configuration.auth_settings().get("BearerToken", {}).get("value")
        header = str(value) if value else None
        self._auth = (now, header)
        return header

    @property
    def server(self) -> str:
        return str(self._configuration.host)

    @property
    def ca_file(self) -> str | None:
        ca = self._configuration.ssl_ca_cert
        return str(ca) if ca else None

    def with_token(self, token: str) -> Client:
        """The same server and trust, another identity (e.g. a ServiceAccount token)."""
        return Client.from_token(self.server, token, self.ca_file)

    # --- raw requests ---------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str | int | bool] | None = None,
        content_type: str = CONTENT_JSON,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> Any:
        """Send one request; return the decoded JSON answer (``None`` for an empty body)."""
        data = self._exchange(
            method, path, body=body, params=params, content_type=content_type,
            timeout=timeout, accept=CONTENT_JSON,
        )  # fmt: skip
        return orjson.loads(data) if data else None

    def send(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        content_type: str = CONTENT_JSON,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        """POST ``body`` when its answer is not needed (a Binding, an Event): as protobuf when
        ``content_type`` asks for it and :func:`corral.k8s.protobuf.encode` can write the
        object, as JSON otherwise. Errors raise :class:`ApiError` as :meth:`request` does."""
        payload = protobuf.encode(body) if content_type == protobuf.CONTENT_PROTOBUF else None
        if payload is None:
            self.request("POST", path, body=body, timeout=timeout)
            return
        self._exchange(
            "POST", path, body=payload, params=None, content_type=protobuf.CONTENT_PROTOBUF,
            timeout=timeout, accept=ACCEPT_PROTOBUF,
        )  # fmt: skip

    def stream(
        self,
        path: str,
        *,
        params: Mapping[str, str | int | bool] | None = None,
        timeout: float | None = None,
    ) -> Iterator[JSON]:
        """GET a newline-delimited JSON stream (a watch) and yield each event as it arrives."""
        response = self._send(
            "GET",
            path,
            body=None,
            params=params,
            content_type=CONTENT_JSON,
            timeout=timeout,
            stream=True,
        )
        buffer = b""
        try:
            for chunk in response.stream(amt=65536, decode_content=True):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield orjson.loads(line)
        finally:
            response.release_conn()

    def _url(self, target: str) -> str:
        """The absolute URL of ``target`` (a path and query) on this server."""
        return self.server.rstrip("/") + target

    def _exchange(
        self,
        method: str,
        path: str,
        *,
        body: Any,
        params: Mapping[str, str | int | bool] | None,
        content_type: str,
        timeout: float | None,
        accept: str,
    ) -> bytes:
        """One request whose whole answer is read, sent again when the server asks to (see
        the module's docstring): its body, or :class:`ApiError`."""
        waited = 0.0
        for attempt in range(RETRY_AFTER_ATTEMPTS + 1):
            try:
                return self._exchange_once(
                    method, path, body=body, params=params, content_type=content_type,
                    timeout=timeout, accept=accept,
                )  # fmt: skip
            except ApiError as err:
                wait = err.retry_wait
                if wait is None or attempt == RETRY_AFTER_ATTEMPTS:
                    raise
                if timeout is not None and waited + wait > timeout:
                    raise
                waited += wait
                self._sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _exchange_once(
        self,
        method: str,
        path: str,
        *,
        body: Any,
        params: Mapping[str, str | int | bool] | None,
        content_type: str,
        timeout: float | None,
        accept: str,
    ) -> bytes:
        lean = self._lean
        if lean is None:
            response = self._send(
                method, path, body=body, params=params, content_type=content_type,
                timeout=timeout, stream=False, accept=accept,
            )  # fmt: skip
            try:
                return bytes(response.data)
            finally:
                response.release_conn()
        target, headers, payload = self._prepare(path, params, body, content_type, accept)
        observer = self.observer
        sent = time.perf_counter() if observer is not None else 0.0
        try:
            answer = lean.exchange(method, target, headers, payload, timeout=timeout)
        except (TransportError, ValueError) as exc:
            if observer is not None:
                observer.requested(method, self.host, NO_ANSWER, time.perf_counter() - sent)
            raise ApiError(0, "TransportError", f"{method} {self._url(target)}: {exc}") from exc
        if observer is not None:
            observer.requested(method, self.host, answer.status, time.perf_counter() - sent)
        if answer.status >= 300:
            raise api_error(answer.status, answer.reason, answer.body, answer.headers)
        return answer.body

    def _prepare(
        self,
        path: str,
        params: Mapping[str, str | int | bool] | None,
        body: Any,
        content_type: str,
        accept: str,
    ) -> tuple[str, dict[str, str], bytes | None]:
        """The request target (path and query), headers and body bytes of one request."""
        target = path
        if params:
            target += "?" + urlencode({k: _param(v) for k, v in params.items()})
        headers = {"Accept": accept, "User-Agent": "corral"}
        auth = self.authorization()
        if auth:
            headers["Authorization"] = auth
        payload: bytes | None = None
        if body is not None:
            headers["Content-Type"] = content_type
            payload = body if isinstance(body, bytes) else json_bytes(body)
        return target, headers, payload

    def _send(
        self,
        method: str,
        path: str,
        *,
        body: Any,
        params: Mapping[str, str | int | bool] | None,
        content_type: str,
        timeout: float | None,
        stream: bool,
        accept: str = CONTENT_JSON,
    ) -> Any:
        target, headers, payload = self._prepare(path, params, body, content_type, accept)
        observer = self.observer
        sent = time.perf_counter() if observer is not None else 0.0
        try:
            if self._direct is not None:
                response = self._direct.urlopen(
                    method, self._prefix + target, body=payload, headers=headers,
                    timeout=timeout, preload_content=False, retries=False,
                    assert_same_host=False,
                )  # fmt: skip
            else:
                response = self._manager.request(
                    method, self._url(target), body=payload, headers=headers,
                    timeout=timeout, preload_content=False, retries=False,
                )  # fmt: skip
        except Exception as exc:  # urllib3 raises a family of transport errors
            if observer is not None:
                observer.requested(method, self.host, NO_ANSWER, time.perf_counter() - sent)
            raise ApiError(0, "TransportError", f"{method} {self._url(target)}: {exc}") from exc
        if observer is not None:
            observer.requested(method, self.host, response.status, time.perf_counter() - sent)
        if response.status >= 300:
            data = response.data
            response.release_conn()
            raise api_error(response.status, response.reason or "", data, response.headers)
        return response

    # --- typed conveniences -------------------------------------------------------------------

    def resource(self, api_version: str, kind: str) -> ResourceInfo:
        """Discover where ``kind`` of ``api_version`` lives (cached per client)."""
        key = (api_version, kind)
        with self._discovery_lock:
            if key in self._discovery:
                return self._discovery[key]
        listing = self.request("GET", api_prefix(api_version))
        found: ResourceInfo | None = None
        with self._discovery_lock:
            for res in listing.get("resources", []):
                if "/" in res["name"]:
                    continue  # subresources
                info = ResourceInfo(api_version, res["kind"], res["name"], res["namespaced"])
                self._discovery[(api_version, res["kind"])] = info
                if res["kind"] == kind:
                    found = info
        if found is None:
            raise ApiError(404, "NotFound", f"the server has no kind {kind!r} in {api_version}")
        return found

    def path_of(self, obj: Mapping[str, Any], *, named: bool = True) -> str:
        meta = obj.get("metadata", {})
        info = self.resource(obj["apiVersion"], obj["kind"])
        return info.path(meta.get("namespace"), meta.get("name") if named else None)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> JSON:
        path = self.resource(api_version, kind).path(namespace, name)
        result: JSON = self.request("GET", path)
        return result

    def list_items(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> list[JSON]:
        params: dict[str, str | int | bool] = {}
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        path = self.resource(api_version, kind).path(namespace)
        items: list[JSON] = self.request("GET", path, params=params)["items"]
        return items

    def create(self, obj: Mapping[str, Any]) -> JSON:
        result: JSON = self.request("POST", self.path_of(obj, named=False), body=obj)
        return result

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation: str = "Background",
        missing_ok: bool = True,
    ) -> None:
        path = self.resource(api_version, kind).path(namespace, name)
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation}
        try:
            self.request("DELETE", path, body=body)
        except ApiError as exc:
            if not (missing_ok and exc.not_found):
                raise

    def apply(self, obj: Mapping[str, Any], *, field_manager: str, force: bool = True) -> JSON:
        """Server-side apply ``obj`` (JSON is valid YAML, so it is sent as JSON text)."""
        params: dict[str, str | int | bool] = {"fieldManager": field_manager, "force": force}
        result: JSON = self.request(
            "PATCH",
            self.path_of(obj),
            body=json_bytes(obj),
            params=params,
            content_type=CONTENT_APPLY_PATCH,
        )
        return result

    def request_token(
        self,
        namespace: str,
        service_account: str,
        *,
        audiences: list[str] | None = None,
        expiration_seconds: int = 3600,
    ) -> str:
        """A bound ServiceAccount token from the TokenRequest API."""
        spec: JSON = {"expirationSeconds": expiration_seconds}
        if audiences:
            spec["audiences"] = audiences
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token"
        answer: JSON = self.request("POST", path, body=body)
        return str(answer["status"]["token"])


# A kubeconfig, and each file it names (CA, client certificate and key, token file).
MAX_KUBECONFIG_BYTES: Final = 4 * 2**20
MAX_CREDENTIAL_FILE_BYTES: Final = 2**20
# The fields naming files, per section; the client library resolves them from the file's folder.
_FILE_FIELDS: Final = (
    ("clusters", "cluster", ("certificate-authority",)),
    ("users", "user", ("client-certificate", "client-key", "tokenFile")),
)


def _pool_manager(settings: credentials.Settings) -> urllib3.PoolManager:
    """What the library's ``RESTClientObject`` builds (``kubernetes/client/rest.py``): the
    same pool arguments, so the same TLS and pooling, and the same proxy managers."""
    pool_args: dict[str, Any] = {
        "cert_reqs": ssl.CERT_REQUIRED if settings.verify_ssl else ssl.CERT_NONE,
        "ca_certs": settings.ssl_ca_cert,
        "cert_file": settings.cert_file,
        "key_file": settings.key_file,
        "ca_cert_data": settings.ca_cert_data,
    }
    if settings.assert_hostname is not None:
        pool_args["assert_hostname"] = settings.assert_hostname
    if settings.retries is not None:
        pool_args["retries"] = settings.retries
    if settings.tls_server_name:
        pool_args["server_hostname"] = settings.tls_server_name
    if settings.socket_options is not None:
        pool_args["socket_options"] = settings.socket_options
    if settings.connection_pool_maxsize is not None:
        pool_args["maxsize"] = settings.connection_pool_maxsize
    proxy = settings.proxy  # only when set after loading (the loaders leave proxies to it)
    if not proxy:
        return urllib3.PoolManager(**pool_args)
    if urlsplit(proxy).scheme.lower() in {"socks4", "socks4a", "socks5", "socks5h"}:
        from urllib3.contrib.socks import SOCKSProxyManager  # noqa: PLC0415

        return SOCKSProxyManager(proxy_url=proxy, headers=None, **pool_args)
    return urllib3.ProxyManager(proxy_url=proxy, proxy_headers=None, **pool_args)


def _kubeconfig_files(path: str | None) -> list[str]:
    """The files the client library will read: ``path``, else each of ``$KUBECONFIG``'s list
    that exists (it skips the others), else ``~/.kube/config``."""
    if path is not None:
        return [path]
    listed = os.environ.get("KUBECONFIG")
    if listed is None:
        return [os.path.expanduser("~/.kube/config")]
    names = [os.path.expanduser(n) for n in listed.split(os.pathsep) if n]
    return [n for n in names if os.path.lexists(n)]


def _check_kubeconfig(path: str) -> None:
    """Read ``path`` and what it names within bounds: regular files only (a FIFO would block
    the library's reads for ever), sizes capped, YAML through :mod:`corral.yamlload`."""
    docs = load_all(read_input(path, MAX_KUBECONFIG_BYTES, allow_stdin=False), path)
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise KubeconfigError(f"{path}: must hold exactly one kubeconfig object")
    _check_shape(docs[0], path)
    base = os.path.dirname(os.path.abspath(path))
    for section, key, fields in _FILE_FIELDS:
        for i, entry in enumerate(docs[0].get(section) or ()):
            body = entry.get(key)
            if not isinstance(body, dict):
                continue
            for name in fields:
                target = body.get(name)
                if target is None:
                    continue
                where = f"{path}: {section}[{i}].{key}.{name}"
                if not isinstance(target, str):
                    raise KubeconfigError(f"{where}: must be a string")
                try:
                    read_input(
                        os.path.join(base, os.path.expanduser(target)),
                        MAX_CREDENTIAL_FILE_BYTES,
                        allow_stdin=False,
                    )
                except InputError as exc:
                    raise KubeconfigError(f"{where}: {exc.message}") from None


def _check_shape(config: dict[str, Any], path: str) -> None:
    """What the client library assumes of a kubeconfig without checking (it would report a
    context name that is a list as ``<ConfigNode object at 0x...>``)."""
    current = config.get("current-context")
    if current is not None and not isinstance(current, str):
        raise KubeconfigError(f"{path}: current-context: must be a string")
    for section in ("clusters", "users", "contexts"):
        entries = config.get(section)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise KubeconfigError(f"{path}: {section}: must be a list")
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise KubeconfigError(f"{path}: {section}[{i}]: must be an object with a name")


_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-f]+>")


def _one_line(exc: BaseException) -> str:
    text = _REPR.sub("<object>", " ".join(str(exc).split())) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."


def api_prefix(api_version: str) -> str:
    """``/api/v1`` for the core group, ``/apis/<group>/<version>`` for the others."""
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


def json_bytes(body: Any) -> bytes:
    """``body`` as JSON text. orjson writes a ResourceClaim several times faster than
    ``json.dumps``; keys that are not strings become strings, as ``json.dumps`` makes them."""
    return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)


def _param(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def retry_after(headers: Mapping[str, str] | None) -> int | None:
    """The ``Retry-After`` header's whole seconds (client-go reads only that form)."""
    if not headers:
        return None
    value = headers.get("retry-after")
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def api_error(
    status: int, reason: str, data: bytes, headers: Mapping[str, str] | None = None
) -> ApiError:
    """The error for a non-2xx answer: from its ``Status`` (JSON or protobuf) when it is one;
    ``headers`` give its Retry-After."""
    wait = retry_after(headers)
    try:
        body = protobuf.decode_status(data) or (orjson.loads(data) if data else {})
    except ValueError:
        body = {}
    if isinstance(body, dict) and body.get("kind") == "Status":
        return ApiError(
            status, body.get("reason") or reason, body.get("message", ""), body, retry_after=wait
        )
    text = data.decode(errors="replace").strip()
    return ApiError(status, reason, text or reason, retry_after=wait)
