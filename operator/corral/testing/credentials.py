"""Credentials for the local control plane: the ServiceAccount signing key, static tokens for
the admin and the control-plane components, and kubeconfig files.

Each component gets its own identity (``system:kube-controller-manager``,
``system:kube-scheduler``), so it runs with the bootstrap RBAC a real cluster gives it rather
than as cluster-admin; only the admin user (and kwok, which plays every kubelet) is in
``system:masters``.
"""

from __future__ import annotations

import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import yaml

# Static-token identities: kubeconfig name -> (user, groups).
IDENTITIES: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "admin": ("corral-admin", ("system:masters",)),
    "controller-manager": ("system:kube-controller-manager", ()),
    "scheduler": ("system:kube-scheduler", ()),
}


@dataclass(frozen=True)
class Credentials:
    pki_dir: Path
    tokens: dict[str, str]

    @property
    def sa_key(self) -> Path:
        return self.pki_dir / "sa.key"

    @property
    def token_file(self) -> Path:
        return self.pki_dir / "tokens.csv"

    @property
    def serving_cert(self) -> Path:
        """The API server's self-signed serving certificate; it is also its own CA bundle."""
        return self.pki_dir / "apiserver.crt"

    # The API server's client certificate to kubelets, and the CA a kubelet trusts it by: a
    # real node's kubelet authenticates every caller (no anonymous access).
    @property
    def kubelet_client_ca(self) -> Path:
        return self.pki_dir / "kubelet-client-ca.crt"

    @property
    def kubelet_client_cert(self) -> Path:
        return self.pki_dir / "apiserver-kubelet-client.crt"

    @property
    def kubelet_client_key(self) -> Path:
        return self.pki_dir / "apiserver-kubelet-client.key"


def create_credentials(
    pki_dir: Path, identities: dict[str, tuple[str, tuple[str, ...]]] = IDENTITIES
) -> Credentials:
    """Write a fresh signing key and token file for ``identities`` into ``pki_dir`` (0700)."""
    pki_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = pki_dir / "sa.key"
    subprocess.run(
        ["openssl", "genrsa", "-out", str(key), "2048"],
        check=True,
        capture_output=True,
    )
    key.chmod(0o600)
    tokens = {name: secrets.token_hex(24) for name in identities}
    lines = []
    for name, (user, groups) in identities.items():
        # token,user,uid[,"group1,group2"]
        line = f"{tokens[name]},{user},{user}"
        if groups:
            line += ',"' + ",".join(groups) + '"'
        lines.append(line)
    token_file = pki_dir / "tokens.csv"
    token_file.write_text("\n".join(lines) + "\n")
    token_file.chmod(0o600)
    return Credentials(pki_dir, tokens)


# The identity the API server presents to kubelets (kubeadm's apiserver-kubelet-client):
# system:masters, so the kubelet's webhook authorizer lets it read logs, exec and proxy.
KUBELET_CLIENT_SUBJECT: Final = "/O=system:masters/CN=kube-apiserver-kubelet-client"


def create_kubelet_client_pair(creds: Credentials) -> None:
    """A CA (only for this) and the API server's client certificate signed by it."""
    pki = creds.pki_dir
    ca_key, csr = pki / "kubelet-client-ca.key", pki / "apiserver-kubelet-client.csr"
    for argv in (
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key),
         "-out", str(creds.kubelet_client_ca), "-days", "30",
         "-subj", "/CN=corral-kubelet-client-ca"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(creds.kubelet_client_key),
         "-out", str(csr), "-subj", KUBELET_CLIENT_SUBJECT],
        ["x509", "-req", "-in", str(csr), "-CA", str(creds.kubelet_client_ca), "-CAkey",
         str(ca_key), "-CAcreateserial", "-out", str(creds.kubelet_client_cert), "-days", "30"],
    ):  # fmt: skip
        subprocess.run(["openssl", *argv], check=True, capture_output=True)
    for key in (ca_key, creds.kubelet_client_key):
        key.chmod(0o600)


def write_kubeconfig(path: Path, *, server: str, ca_file: Path, token: str, user: str) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "corral-dev",
                "cluster": {"server": server, "certificate-authority": str(ca_file)},
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "corral-dev", "context": {"cluster": "corral-dev", "user": user}}],
        "current-context": "corral-dev",
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
