"""`corral explain POD`'s offline parts: the live scheduler's words, and bad input in one line
(the cycle itself over a live cluster is tests/e2e/test_simulate_live.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.cli import main
from corral.cli.clusterread import ClusterSnapshot
from corral.cli.explain import live_verdict
from corral.extender.server import serve_in_thread


@pytest.mark.parametrize(
    ("status", "said"),
    [
        pytest.param({}, "no PodScheduled condition yet (no scheduler has tried it)", id="new"),
        pytest.param({"conditions": [{"type": "Ready", "status": "False"}]},
                     "no PodScheduled condition yet (no scheduler has tried it)", id="other-only"),
        pytest.param({"conditions": [{"type": "PodScheduled", "status": "False",
                                      "reason": "Unschedulable", "message": "0/1 nodes"}]},
                     "False Unschedulable: 0/1 nodes", id="unschedulable"),
        pytest.param({"conditions": [{"type": "PodScheduled", "status": "True"}]}, "True",
                     id="scheduled"),
    ],
)  # fmt: skip
def test_the_live_schedulers_words(status: dict[str, Any], said: str) -> None:
    assert live_verdict({"status": status}) == said


BAD_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles: 1
"""
# Port 9 (discard) on loopback: nothing listens there, so a request would fail at once.
UNREACHABLE_KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        pytest.param(["p", "--kubeconfig", "MISSING"], 2, "corral: cannot load credentials: ",
                     id="no-credentials"),
        pytest.param(["p", "--config", "EMPTY"], 1, "EMPTY: contains no document",
                     id="empty-config"),
        pytest.param([], 2, "usage: corral explain", id="no-pod"),
        # The config is checked before the cluster is read: its line, not the credentials'
        # or the unreachable server's.
        pytest.param(["p", "--kubeconfig", "MISSING", "--config", "BAD"], 1,
                     "BAD:3:1: profiles: must be a list", id="bad-config-before-credentials"),
        pytest.param(["p", "--kubeconfig", "UNREACHABLE", "--config", "BAD"], 1,
                     "BAD:3:1: profiles: must be a list", id="bad-config-before-the-cluster"),
    ],
)  # fmt: skip
def test_bad_explain_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int, message: str
) -> None:
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "bad.yaml").write_text(BAD_CONFIG)
    (tmp_path / "kubeconfig").write_text(UNREACHABLE_KUBECONFIG)
    names = {
        "MISSING": str(tmp_path / "missing"),
        "EMPTY": str(tmp_path / "empty.yaml"),
        "BAD": str(tmp_path / "bad.yaml"),
        "UNREACHABLE": str(tmp_path / "kubeconfig"),
    }
    argv = [names.get(a, a) for a in argv]
    try:
        got = main(["explain", *argv])
    except SystemExit as exc:  # argparse's own usage error
        got = int(str(exc.code))
    out, err = capsys.readouterr()
    assert (got, out) == (code, "")
    for name, path in names.items():
        message = message.replace(name, path)
    assert err.splitlines()[0].startswith(message), err
    assert len(err.splitlines()) == 1 or code == 2, err


def test_a_binder_extender_is_never_asked_to_bind_by_explain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`corral explain` runs the pod's cycle in the simulator `simulate` uses: the example
    extender with a bind verb (it would bind the real pod) is asked to filter and score, never
    to bind (commit 9363d1f fixed it there); the cluster read is this test's."""
    root = Path(__file__).resolve().parents[3]
    path = root / "examples" / "extender-example" / "extender.py"
    spec = importlib.util.spec_from_file_location("example_extender", path)
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "u-p"},
        "spec": {
            "schedulerName": "with-extender",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        },
    }
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": labels},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
             for n, labels in (("n-yes", {"example.corral.dev/allowed": "true"}),
                               ("n-no", {"x": "y"}))]  # fmt: skip
    monkeypatch.setattr("corral.cli.explain.read_pod", lambda *_: pod)
    monkeypatch.setattr("corral.cli.clusterread.read", lambda client, *_: ClusterSnapshot(
        client.server, items=[*nodes, pod]))  # fmt: skip
    (tmp_path / "kubeconfig").write_text(UNREACHABLE_KUBECONFIG)
    binds: list[object] = []
    with serve_in_thread(example.build(binder=lambda *a: binds.append(a))) as url:
        config = yaml.safe_load((path.parent / "scheduler-config.yaml").read_text())
        config["extenders"][0]["urlPrefix"] = url
        assert config["extenders"][0]["bindVerb"]
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        code = main(["explain", "p", "--kubeconfig", str(tmp_path / "kubeconfig"),
                     "--config", str(tmp_path / "config.yaml")])  # fmt: skip
    out, err = capsys.readouterr()
    assert (code, binds) == (0, []), err
    assert "note: 1 binder extender(s) not called to bind, offline" in err
    assert "n-yes" in out.splitlines()[1], out
