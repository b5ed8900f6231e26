"""Kubeconfig files for a bearer-token identity (e.g. a ServiceAccount's TokenRequest token).

Contract: the file holds exactly one cluster, user and context, is written atomically with mode
0600 (it is a credential), and points at the same server and CA as the client it derives from.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from corral.k8s.client import Client


def token_kubeconfig(server: str, ca_file: str | None, token: str, user: str) -> dict[str, Any]:
    cluster: dict[str, Any] = {"server": server}
    if ca_file:
        cluster["certificate-authority"] = ca_file
    else:
        cluster["insecure-skip-tls-verify"] = True
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "cluster", "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": "cluster", "user": user}}],
        "current-context": user,
    }


def write_token_kubeconfig(path: Path, client: Client, token: str, user: str) -> None:
    """Write a kubeconfig for ``token`` against ``client``'s server and trust."""
    data = token_kubeconfig(client.server, client.ca_file, token, user)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            yaml.safe_dump(data, out, sort_keys=False)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
