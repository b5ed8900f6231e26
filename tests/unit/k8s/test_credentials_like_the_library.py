"""corral.k8s.credentials loads the simple kubeconfigs and in-cluster credentials exactly as the
``kubernetes`` library does (the library is the oracle), leaves everything else to it, and
keeps ``corral scheduler`` from importing it at all."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.config.incluster_config import InClusterConfigLoader

from corral.k8s import credentials
from corral.k8s.client import _pool_manager

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
KEY = b"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"
DATA = base64.b64encode(PEM).decode()
KEY_DATA = base64.b64encode(KEY).decode()
FIELDS = ("host", "verify_ssl", "tls_server_name", "proxy", "connection_pool_maxsize",
          "ca_cert_data", "assert_hostname", "retries", "socket_options")  # fmt: skip
FILES = ("ssl_ca_cert", "cert_file", "key_file")


def kubeconfig(cluster: dict[str, Any], user: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "n"}},
                     {"name": "y", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
        **extra,
    }  # fmt: skip


def content(path: str | None) -> bytes | None:
    return Path(path).read_bytes() if path else None


def seen(configuration: Any) -> dict[str, Any]:
    """What a client reads of a configuration; files by their content (temporary names differ)."""
    out = {name: getattr(configuration, name) for name in FIELDS}
    out |= {name: content(getattr(configuration, name)) for name in FILES}
    out["auth"] = configuration.auth_settings()
    return out


def pool_arguments(manager: Any) -> dict[str, Any]:
    kw = dict(manager.connection_pool_kw)
    for name in ("ca_certs", "cert_file", "key_file"):
        kw[name] = content(kw.get(name))
    return kw


@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


SERVER = "https://127.0.0.1:6443/"


@pytest.mark.usefixtures("no_proxies")
@pytest.mark.parametrize(
    ("config", "context"),
    [
        pytest.param(kubeconfig({"server": SERVER, "certificate-authority-data": DATA},
                                {"token": "t0k"}), None, id="token-ca-data"),
        pytest.param(kubeconfig({"server": SERVER, "certificate-authority": "ca.pem"},
                                {"client-certificate-data": DATA, "client-key-data": KEY_DATA}),
                     None, id="client-cert-data-ca-file"),
        pytest.param(kubeconfig({"server": SERVER, "certificate-authority": "ca.pem",
                                 "certificate-authority-data": DATA},
                                {"client-certificate": "ca.pem", "client-key": "key.pem"}),
                     "y", id="data-wins-over-file-files-relative-context-flag"),
        pytest.param(kubeconfig({"server": SERVER, "insecure-skip-tls-verify": True,
                                 "tls-server-name": "api.example"}, {"token": "t"}),
                     None, id="insecure-tls-server-name"),
        pytest.param(kubeconfig({"server": SERVER, "insecure-skip-tls-verify": False},
                                {"token": "t", "client-certificate-data": DATA,
                                 "client-key-data": KEY_DATA}), None, id="token-and-cert"),
        pytest.param(kubeconfig({"server": "http://127.0.0.1:8080"}, {}), None, id="http-no-user"),
    ],
)  # fmt: skip
def test_a_simple_kubeconfig_loads_as_the_library_loads_it(
    tmp_path: Path, config: dict[str, Any], context: str | None
) -> None:
    (tmp_path / "ca.pem").write_bytes(PEM)
    (tmp_path / "key.pem").write_bytes(KEY)
    path = tmp_path / "kc"
    path.write_text(json.dumps(config))
    ours = credentials.from_kubeconfig(str(path), context)
    assert ours is not None
    theirs = k8s_client.Configuration()
    k8s_config.load_kube_config(config_file=str(path), context=context,
                                client_configuration=theirs)  # fmt: skip
    assert seen(ours) == seen(theirs)
    mine, library = _pool_manager(ours), k8s_client.rest.RESTClientObject(theirs).pool_manager
    assert type(mine) is type(library)
    assert pool_arguments(mine) == pool_arguments(library)


@pytest.mark.usefixtures("no_proxies")
@pytest.mark.parametrize(
    ("config", "env"),
    [
        pytest.param(kubeconfig({"server": SERVER}, {"exec": {"command": "x"}}), {}, id="exec"),
        pytest.param(kubeconfig({"server": SERVER}, {"auth-provider": {"name": "oidc"}}), {},
                     id="auth-provider"),
        pytest.param(kubeconfig({"server": SERVER}, {"tokenFile": "/t"}), {}, id="token-file"),
        pytest.param(kubeconfig({"server": SERVER}, {"username": "a", "password": "b"}), {},
                     id="basic-auth"),
        pytest.param(kubeconfig({"server": SERVER, "proxy-url": "http://p:3128"},
                                {"token": "t"}), {}, id="proxy-url"),
        pytest.param(kubeconfig({"server": SERVER}, {"token": "t"}),
                     {"HTTPS_PROXY": "http://p:3128"}, id="proxy-in-environment"),
        pytest.param(kubeconfig({"server": SERVER, "certificate-authority": "missing.pem"},
                                {"token": "t"}), {}, id="missing-ca-file"),
        pytest.param(kubeconfig({"server": SERVER}, {"token": "t"}, **{"current-context": "z"}),
                     {}, id="unknown-context"),
        pytest.param({**kubeconfig({"server": SERVER}, {"token": "t"}),
                      "users": [{"name": "u", "user": {"token": "a"}},
                                {"name": "u", "user": {"token": "b"}}]}, {}, id="user-twice"),
        pytest.param(kubeconfig({"server": SERVER, "insecure-skip-tls-verify": "yes"},
                                {"token": "t"}), {}, id="skip-verify-not-a-bool"),
        pytest.param(kubeconfig({"server": SERVER, "extensions": []}, {"token": "t"}), {},
                     id="unknown-cluster-key"),
        pytest.param(kubeconfig({"server": SERVER}, {"client-key-data": KEY_DATA}), {},
                     id="key-without-certificate"),
        pytest.param(kubeconfig({"server": SERVER, "certificate-authority-data": "abc"},
                                {"token": "t"}), {}, id="data-not-base64"),
    ],
)  # fmt: skip
def test_anything_else_is_left_to_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, Any], env: dict[str, str]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "kc"
    path.write_text(json.dumps(config))
    assert credentials.from_kubeconfig(str(path), None) is None


@pytest.mark.usefixtures("no_proxies")
def test_several_kubeconfig_files_are_left_to_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "kc"
    path.write_text(json.dumps(kubeconfig({"server": SERVER}, {"token": "t"})))
    monkeypatch.setenv("KUBECONFIG", f"{path}:{path}")
    assert credentials.from_kubeconfig(None, None) is None
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert credentials.from_kubeconfig(None, None) is not None


@pytest.mark.usefixtures("no_proxies")
@pytest.mark.parametrize(
    ("host", "token"),
    [
        pytest.param("10.0.0.1", "abc\n", id="ipv4-token-as-read"),
        pytest.param("fd00::1", "abc", id="ipv6-bracketed"),
    ],
)  # fmt: skip
def test_in_cluster_credentials_load_as_the_library_loads_them(
    tmp_path: Path, host: str, token: str
) -> None:
    (tmp_path / "token").write_text(token)
    (tmp_path / "ca.crt").write_bytes(PEM)
    env = {credentials.SERVICE_HOST_ENV: host, credentials.SERVICE_PORT_ENV: "443"}
    ours = credentials.in_cluster(env, str(tmp_path / "token"), str(tmp_path / "ca.crt"))
    assert ours is not None
    theirs = k8s_client.Configuration()
    InClusterConfigLoader(str(tmp_path / "token"), str(tmp_path / "ca.crt"),
                          environ=env).load_and_set(theirs)  # fmt: skip
    assert seen(ours) == seen(theirs)


@pytest.mark.usefixtures("no_proxies")
@pytest.mark.parametrize(
    ("env", "token", "ca"),
    [
        pytest.param({}, "t", PEM, id="no-service-env"),
        pytest.param({"KUBERNETES_SERVICE_HOST": "h", "KUBERNETES_SERVICE_PORT": ""}, "t", PEM,
                     id="empty-port"),
        pytest.param({"KUBERNETES_SERVICE_HOST": "h", "KUBERNETES_SERVICE_PORT": "1"}, "", PEM,
                     id="empty-token"),
        pytest.param({"KUBERNETES_SERVICE_HOST": "h", "KUBERNETES_SERVICE_PORT": "1"}, "t", b"",
                     id="empty-ca"),
    ],
)  # fmt: skip
def test_in_cluster_errors_are_left_to_the_library(
    tmp_path: Path, env: dict[str, str], token: str, ca: bytes
) -> None:
    (tmp_path / "token").write_text(token)
    (tmp_path / "ca.crt").write_bytes(ca)
    assert credentials.in_cluster(env, str(tmp_path / "token"), str(tmp_path / "ca.crt")) is None


def test_the_scheduler_path_does_not_import_the_kubernetes_library(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_bytes(PEM)
    path = tmp_path / "kc"
    config = kubeconfig({"server": SERVER, "insecure-skip-tls-verify": True}, {"token": "t"})
    path.write_text(json.dumps(config))
    script = (
        "import sys\n"
        "import corral.cli.scheduler as s, corral.scheduler.engine.app\n"
        f"client = s.make_client({str(path)!r}, None)\n"
        "assert client.authorization() == 'Bearer t'\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('kubernetes', 'pydantic', 'requests', 'oauthlib')))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env=env)  # fmt: skip
    assert out.stdout.strip() == "[]"


@pytest.mark.usefixtures("no_proxies")
@pytest.mark.parametrize(
    "proxy",
    [
        pytest.param("http://127.0.0.1:3128", id="http-proxy"),
        pytest.param("https://127.0.0.1:3129", id="https-proxy"),
    ],
)
def test_a_proxy_set_after_loading_makes_the_library_s_proxy_manager(proxy: str) -> None:
    ours = credentials.from_token("https://127.0.0.1:6443", "t", None)
    assert ours is not None
    theirs = k8s_client.Configuration(host="https://127.0.0.1:6443", api_key={"authorization": "t"})
    theirs.verify_ssl = False
    ours.proxy = theirs.proxy = proxy
    mine, library = _pool_manager(ours), k8s_client.rest.RESTClientObject(theirs).pool_manager
    assert type(mine) is type(library)
    assert pool_arguments(mine) == pool_arguments(library)
    assert mine.proxy == library.proxy
