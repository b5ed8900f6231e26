"""Loading credentials from a kubeconfig: bounded, one-line errors, exec plugins that time out."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from corral.cli import UsageError
from corral.cli.scheduler import make_client
from corral.k8s import client as k8s

HEAD = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
CONTEXT = "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        pytest.param(HEAD + "kind: Config\n", "kc:4:1: invalid YAML: duplicate key kind",
                     id="duplicate-key"),
        pytest.param("- a\n- b\n", "kc: must hold exactly one kubeconfig object", id="a-list"),
        pytest.param("a: [" * 200, "invalid YAML: nested deeper than 100 levels", id="deep"),
        pytest.param(HEAD + "users: [{name: u, user: {token: t}}]\ncurrent-context: [x]\n",
                     "kc: current-context: must be a string", id="context-a-list"),
        pytest.param(HEAD + "users: [x]\n", "kc: users[0]: must be an object with a name",
                     id="user-a-string"),
        pytest.param(HEAD + "users: [{name: u, user: {token: t}}]\n",
                     "kc: Invalid kube-config file. Expected key current-context",
                     id="no-current-context"),
        pytest.param("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {}}]\n"
                     "users: [{name: u, user: {token: t}}]\n" + CONTEXT,
                     "kc: the context's cluster has no usable server URL", id="no-server"),
    ],
)  # fmt: skip
def test_unusable_kubeconfig_is_one_line(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "kc"
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        make_client(str(path), None)
    message = str(caught.value).replace(str(path), "kc")
    assert message.startswith("cannot load credentials: ")
    assert error in message
    assert "\n" not in message


def test_a_missing_kubeconfig_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(
        UsageError,
        match=r"cannot load credentials: cannot read .*/nope: No such file or directory$",
    ):
        make_client(str(tmp_path / "nope"), None)


def test_an_exec_plugin_that_never_answers_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "kc"
    path.write_text(
        HEAD + CONTEXT + "users: [{name: u, user: {exec: {apiVersion: "
        "client.authentication.k8s.io/v1, command: sleep, args: ['600'], "
        "interactiveMode: Never}}}]\n"
    )
    monkeypatch.setattr(k8s, "EXEC_TIMEOUT_SECONDS", 0.5)
    with caplog.at_level(logging.ERROR):
        client = k8s.Client.from_kubeconfig(str(path))
    # The client library logs a failed exec plugin and goes on without credentials (requests
    # then fail with 401): it must not wait for ever.
    assert "exec plugin 'sleep' did not answer within 0.5s" in caplog.text
    assert client.authorization() is None
