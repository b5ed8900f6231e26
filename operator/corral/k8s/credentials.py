"""Credentials for the common cases without the ``kubernetes`` client library.

Importing the library's loaders imports its whole tree (pydantic, requests, oauthlib, dateutil,
websocket, google-auth's stub...): about 16 MB of RSS in every process, though most need only a
server, its CA, and a token or a client certificate (issue 42 part 4: ``corral scheduler``'s
peak RSS against kube-scheduler's). :func:`from_kubeconfig` and :func:`in_cluster` load exactly
those cases, the way the library's loaders (``kube_config.py``, ``incluster_config.py``, read
for kubernetes 37) do, into :class:`Settings`: the same attributes, the same values, the same
temporary files for inline certificates. Tests hold them to the library field by field.

Everything else answers None and goes to the library as before: several kubeconfig files to
merge, a context, cluster or user that is missing or named twice, exec plugins, auth providers,
token files, basic auth, a ``proxy-url``, a proxy in the environment, any key not listed below,
and every error (the library's message is the one users see).
"""

from __future__ import annotations

import atexit
import base64
import binascii
import contextlib
import os
import tempfile
import time
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any, Final

import yaml

# What the simple path reads of each entry; another key sends the file to the library.
CLUSTER_KEYS: Final = frozenset(
    {"server", "certificate-authority", "certificate-authority-data",
     "insecure-skip-tls-verify", "tls-server-name"}
)  # fmt: skip
USER_KEYS: Final = frozenset(
    {"token", "client-certificate", "client-certificate-data", "client-key", "client-key-data"}
)
CONTEXT_KEYS: Final = frozenset({"cluster", "user", "namespace"})

SERVICE_HOST_ENV: Final = "KUBERNETES_SERVICE_HOST"
SERVICE_PORT_ENV: Final = "KUBERNETES_SERVICE_PORT"
SERVICE_TOKEN_FILE: Final = "/var/run/secrets/kubernetes.io/serviceaccount/token"
SERVICE_CA_FILE: Final = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
# The library's in-cluster loader re-reads a rotating token once a minute.
TOKEN_REFRESH_SECONDS: Final = 60.0


class Settings:
    """The attributes of the library's ``Configuration`` that :class:`corral.k8s.Client` and
    its transports read, with the library's defaults."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.api_key: dict[str, str] = {}
        self.api_key_prefix: dict[str, str] = {}
        self.refresh_api_key_hook: Callable[[Settings], None] | None = None
        self.verify_ssl = True
        self.ssl_ca_cert: str | None = None
        self.ca_cert_data: str | bytes | None = None
        self.cert_file: str | None = None
        self.key_file: str | None = None
        self.assert_hostname: bool | str | None = None
        self.tls_server_name: str | None = None
        self.proxy: str | None = None  # the simple path never has one
        self.retries: Any = None
        self.socket_options: Any = None
        self.connection_pool_maxsize: int = (os.cpu_count() or 1) * 5

    def auth_settings(self) -> dict[str, dict[str, Any]]:
        """As the library's: the bearer header's value, after the refresh hook ran."""
        if self.refresh_api_key_hook is not None:
            self.refresh_api_key_hook(self)
        key = self.api_key.get("BearerToken", self.api_key.get("authorization"))
        if not key:
            return {}
        prefix = self.api_key_prefix.get("BearerToken", self.api_key_prefix.get("authorization"))
        value = f"{prefix} {key}" if prefix else key
        return {"BearerToken": {"type": "api_key", "in": "header", "key": "authorization",
                                "value": value}}  # fmt: skip


def proxies_in_environment() -> bool:
    """Whether the library's ``Configuration`` would pick a proxy (or a no-proxy list) from
    the environment; the simple path leaves those to it."""
    return bool(urllib.request.getproxies())


def from_token(server: str, token: str, ca_file: str | None) -> Settings | None:
    if proxies_in_environment():
        return None
    settings = Settings(server)
    settings.api_key = {"authorization": token}
    settings.api_key_prefix = {"authorization": "Bearer"}
    settings.ssl_ca_cert = ca_file
    settings.verify_ssl = ca_file is not None
    return settings


def from_kubeconfig(path: str | None, context: str | None) -> Settings | None:
    """The settings of ``path`` (else ``$KUBECONFIG``, else ``~/.kube/config``), or None when
    the library must load it. The file was read within bounds by the caller already."""
    if proxies_in_environment():
        return None
    listed = path if path is not None else os.environ.get("KUBECONFIG", "~/.kube/config")
    names = [n for n in listed.split(os.pathsep) if n]  # the library splits any path so
    if len(names) != 1:
        return None
    name = os.path.expanduser(names[0])
    if not os.path.isfile(name):
        return None
    try:
        with open(name) as f:
            config = yaml.safe_load(f)  # the library's parser, for the library's values
    except (OSError, yaml.YAMLError):
        return None
    if not isinstance(config, dict):
        return None
    wanted = context if context is not None else config.get("current-context")
    chosen = _named(config, "contexts", wanted)
    body = chosen.get("context") if chosen is not None else None
    if not isinstance(body, dict) or not set(body) <= CONTEXT_KEYS:
        return None
    cluster = _body(_named(config, "clusters", body.get("cluster")), "cluster", CLUSTER_KEYS)
    user = _body(_named(config, "users", body.get("user")), "user", USER_KEYS)
    if cluster is None or user is None:
        return None
    server = cluster.get("server")
    if not isinstance(server, str) or not server:
        return None
    base = os.path.abspath(os.path.dirname(name))
    settings = Settings(server.rstrip("/"))
    token = user.get("token")
    if token is not None:
        if not isinstance(token, str) or not token:
            return None
        settings.api_key["BearerToken"] = f"Bearer {token}"
    elif user and not {"client-certificate", "client-certificate-data"} & set(user):
        return None  # a key without a certificate: the library's case
    if settings.host.startswith("https"):
        files = [_as_file(cluster, "certificate-authority", base),
                 _as_file(user, "client-certificate", base),
                 _as_file(user, "client-key", base)]  # fmt: skip
        if any(f is False for f in files):
            return None
        settings.ssl_ca_cert, settings.cert_file, settings.key_file = (
            f if isinstance(f, str) else None for f in files
        )
    elif {"client-certificate", "client-certificate-data"} & set(user):
        return None
    if "insecure-skip-tls-verify" in cluster:
        skip = cluster["insecure-skip-tls-verify"]
        if not isinstance(skip, bool):
            return None
        settings.verify_ssl = not skip
    if "tls-server-name" in cluster:
        if not isinstance(cluster["tls-server-name"], str):
            return None
        settings.tls_server_name = cluster["tls-server-name"]
    return settings


def in_cluster(
    environ: Mapping[str, str] = os.environ,
    token_file: str = SERVICE_TOKEN_FILE,
    ca_file: str = SERVICE_CA_FILE,
) -> Settings | None:
    """A pod's ServiceAccount credentials, or None when the library must load (or refuse) them."""
    host, port = environ.get(SERVICE_HOST_ENV), environ.get(SERVICE_PORT_ENV)
    if not host or not port or proxies_in_environment():
        return None
    try:
        token = _read(token_file)
        ca = _read(ca_file)
    except OSError:
        return None
    if not token or not ca:
        return None
    joined = f"[{host}]:{port}" if ":" in host or "%" in host else f"{host}:{port}"
    settings = Settings(f"https://{joined}")
    settings.ssl_ca_cert = ca_file
    settings.api_key["BearerToken"] = "bearer " + token  # the library's, as read
    refresh_at = time.monotonic() + TOKEN_REFRESH_SECONDS

    def refresh(target: Settings) -> None:
        nonlocal refresh_at
        if time.monotonic() < refresh_at:
            return
        content = _read(token_file)
        if content:  # the library raises on an empty token; keep the last one instead
            target.api_key["BearerToken"] = "bearer " + content
        refresh_at = time.monotonic() + TOKEN_REFRESH_SECONDS

    settings.refresh_api_key_hook = refresh
    return settings


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _named(config: Mapping[str, Any], section: str, name: object) -> dict[str, Any] | None:
    """The one entry of ``section`` called ``name``; None if there is not exactly one."""
    entries = config.get(section)
    if not isinstance(name, str) or not isinstance(entries, list):
        return None
    found = [e for e in entries if isinstance(e, dict) and e.get("name") == name]
    return found[0] if len(found) == 1 else None


def _body(entry: dict[str, Any] | None, key: str, allowed: frozenset[str]) -> dict[str, Any] | None:
    body = entry.get(key) if entry is not None else None
    if not isinstance(body, dict) or not set(body) <= allowed:
        return None
    return body


def _as_file(body: Mapping[str, Any], key: str, base: str) -> str | bool | None:
    """The library's ``FileOrData(...).as_file()``: the base64 ``-data`` decoded into a
    temporary file if given (it wins), else the file named (relative to the kubeconfig's
    directory); None when neither is given, False when the library must decide (a file that
    is not there, empty data, data that is not base64, a value that is not a string)."""
    if f"{key}-data" in body:
        data = body[f"{key}-data"]
        if not isinstance(data, str) or not data:
            return False
        try:
            content = base64.standard_b64decode(data.encode())
        except (binascii.Error, ValueError):
            return False
        return _temporary_file(content)
    if key not in body:
        return None
    name = body[key]
    if not isinstance(name, str) or not name:
        return False
    target = os.path.normpath(os.path.join(base, name))
    return target if os.path.isfile(target) else False


_temp_files: dict[bytes, str] = {}


def _temporary_file(content: bytes) -> str:
    """A private file holding ``content``, removed at exit; one per distinct content."""
    existing = _temp_files.get(content)
    if existing is not None and os.path.isfile(existing):
        return existing
    if not _temp_files:
        atexit.register(_remove_temporary_files)
    fd, name = tempfile.mkstemp()
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    _temp_files[content] = name
    return name


def _remove_temporary_files() -> None:
    for name in _temp_files.values():
        with contextlib.suppress(OSError):
            os.remove(name)
    _temp_files.clear()
