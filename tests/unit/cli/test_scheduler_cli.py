"""`corral scheduler` refuses bad input with field paths, never a traceback."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from tests.unit.cli.conftest import ROOT, Run

from corral.cli import build_parser
from corral.cli.problems import UsageError
from corral.cli.scheduler import log_level, parse_feature_gates, setup_logging
from corral.scheduler.engine.logfields import fields

GOOD_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            GOOD_HEAD + "profiles:\n- schedulerName: a\n  plugins:\n    filter:\n"
            "      enabled: [{name: NodeResourceFit}]\n",
            'profiles[0].plugins.filter.enabled[0].name: unknown plugin "NodeResourceFit"; '
            'did you mean "NodeResourcesFit"?',
            id="unknown-plugin",
        ),
        pytest.param(
            GOOD_HEAD + "leaderElection: {leaseDuration: 5s, renewDeadline: 10s}\n",
            "leaderElection.leaseDuration",
            id="lease-order",
        ),
        pytest.param("apiVersion: [unclosed\n", "invalid YAML", id="malformed-yaml"),
        pytest.param(
            GOOD_HEAD + "leaderElection: {renewDeadline: 1s}\n",
            "leaderElection.renewDeadline: renewDeadline must be greater than "
            "retryPeriod*JitterFactor(1.2)",
            id="elector-refuses-timings (checked before credentials)",
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
            'apiVersion: "kubescheduler.config.k8s.io/v1beta3": must be',
            id="wrong-api-version",
        ),
        pytest.param("", "config.yaml: contains no document", id="empty: as every subcommand"),
        pytest.param(
            GOOD_HEAD + "---\n" + GOOD_HEAD,
            "config.yaml: holds 2 documents; --config takes one KubeSchedulerConfiguration",
            id="two documents",
        ),
    ],
)
def test_bad_config_exits_1_with_field_paths(tmp_path: Path, text: str, expected: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "corral", "scheduler", "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert expected in result.stderr
    assert result.stderr.startswith(f"{config}:")  # at its line and column
    assert "Traceback" not in result.stderr


PROFILE = "kind: SchedulerProfile\nmetadata: {name: a}\nspec: {}\n"
SAMPLE = ROOT / "config" / "samples" / "tenant.yaml"


@pytest.mark.parametrize(
    ("name", "text", "at"),
    [
        pytest.param(None, None, ":6:1", id="a shipped sample (after its comment lines)"),
        pytest.param("p.yaml", "apiVersion: corral.dev/v1alpha1\n" + PROFILE, ":1:1",
                     id="kind and apiVersion"),
        pytest.param("p.yaml", PROFILE, ":1:1", id="kind alone"),
        pytest.param("p.yaml", "apiVersion: corral.dev/v1alpha1\nkind: SchedulerProfil\n",
                     ":1:1", id="its group, the kind misspelt"),
        pytest.param("p.json", '{"apiVersion": "corral.dev/v1alpha1", "kind": '
                     '"SchedulerProfile", "metadata": {"name": "a"}}', ":1:1", id="JSON"),
        pytest.param("p.yaml", GOOD_HEAD + "---\n" + PROFILE, ":4:1",
                     id="the second of two documents"),
    ],
)  # fmt: skip
def test_a_scheduler_profile_is_one_line_naming_the_render_command(
    tmp_path: Path, corral: Run, name: str | None, text: str | None, at: str
) -> None:
    """Review finding 19: not the schema errors of the wrong kind; the line's command prints a
    configuration this command takes (it goes on to the credentials, which are missing)."""
    config = SAMPLE if name is None else tmp_path / name
    if text is not None:
        config.write_text(text)
    code, out, err = corral("scheduler", "--config", str(config))
    assert (code, out) == (1, "")  # invalid input, as every subcommand's (docs/cli.md)
    command = f"corral render --scheduler-config -f {config}"
    assert err == (f"{config}{at}: a SchedulerProfile, not a KubeSchedulerConfiguration: "
                   f"`{command}` prints the configuration to run\n")  # fmt: skip
    if name is None:  # the sample is a valid profile: the command's output runs
        code, rendered, err = corral(*command.split()[1:])
        assert code == 0, err
        (tmp_path / "ksc.yaml").write_text(rendered)
        code, _, err = corral("scheduler", "--config", str(tmp_path / "ksc.yaml"),
                              "--kubeconfig", str(tmp_path / "none"))  # fmt: skip
        assert (code, err) == (2, f"corral: cannot load credentials: cannot read "
                               f"{tmp_path / 'none'}: No such file or directory\n")  # fmt: skip


def test_missing_config_file_is_reported(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "corral", "scheduler", "--config", str(tmp_path / "nope.yaml")],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2  # usage: the file named cannot be read (docs/cli.md)
    assert result.stderr == (
        f"corral: cannot read {tmp_path / 'nope.yaml'}: No such file or directory\n"
    )


KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.mark.parametrize(
    ("address", "message"),
    [
        pytest.param("nowhere", "--bind-address: 'nowhere' is not HOST:PORT", id="no port"),
        pytest.param("[::1", "--bind-address: '[::1' is not HOST:PORT (an IPv6 host is [ADDRESS])",
                     id="an IPv6 bracket left open"),
        # Past parsing: the engine's server cannot listen there (it was an OSError traceback).
        pytest.param("203.0.113.7:1", "--bind-address: cannot listen on 203.0.113.7:1: Cannot "
                     "assign requested address", id="an address not on this host"),
        pytest.param("127.0.0.1:{busy}", "--bind-address: cannot listen on 127.0.0.1:{busy}: "
                     "Address already in use", id="a port in use"),
    ],
)  # fmt: skip
def test_bad_bind_address_is_a_usage_error(tmp_path: Path, address: str, message: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(GOOD_HEAD + "profiles:\n- schedulerName: a\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "corral", "scheduler", "--config", str(config),
             "--kubeconfig", str(kubeconfig), "--bind-address", address.format(busy=port)],
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert f"corral: {message.format(busy=port)}" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param(["--namespace-selector", "==="], '--namespace-selector "===": found "==", '
                     "expected: a label key", id="a selector of operators"),
        pytest.param(["--namespace-selector", "tier in (a"], '--namespace-selector "tier in (a": '
                     """the values of "tier" are not closed with ')'""", id="an open set"),
        pytest.param(["--namespaces", "team-a,A_B"], '--namespaces: "A_B": a lowercase RFC 1123 '
                     "label must consist of", id="a namespace that cannot be"),
    ],
)  # fmt: skip
def test_tenancy_flags_are_checked_before_the_engine_starts(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    # The API server refuses such a selector on every list; the informers retried for ever.
    config = tmp_path / "config.yaml"
    config.write_text(GOOD_HEAD + "profiles:\n- schedulerName: a\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    result = subprocess.run(
        [sys.executable, "-m", "corral", "scheduler", "--config", str(config),
         "--kubeconfig", str(kubeconfig), "--bind-address", "127.0.0.1:0", *flags],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"corral: {message}"), result.stderr


def test_the_whole_config_is_checked_before_credentials(tmp_path: Path) -> None:
    # An extender client certificate without its key: the engine could not start (validation
    # refuses it, client-go's rule), and that is said before the (missing) kubeconfig is read.
    config = tmp_path / "config.yaml"
    config.write_text(
        GOOD_HEAD + "extenders:\n- {urlPrefix: 'https://e:1', filterVerb: f, "
        "tlsConfig: {certData: Y2VydA==}}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "corral", "scheduler", "--config", str(config),
         "--kubeconfig", str(tmp_path / "missing-kubeconfig")],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert result.stderr == (
        f"{config}:4:45: extenders[0].tlsConfig: a client certificate needs both a cert and a key\n"
    )
    assert "credentials" not in result.stderr


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        pytest.param("Bogus=true", "--feature-gates: unrecognized feature gate: Bogus",
                     id="unknown"),
        pytest.param("SchedulerQueueingHints=false",
                     "--feature-gates: unrecognized feature gate: SchedulerQueueingHints",
                     id="gone in 1.37"),
        pytest.param("GenericWorkload", "--feature-gates: missing bool value for GenericWorkload",
                     id="no value"),
        pytest.param("GenericWorkload=maybe",
                     '--feature-gates: invalid value of GenericWorkload=maybe, err: '
                     'strconv.ParseBool: parsing "maybe": invalid syntax', id="not a bool"),
        pytest.param("TopologyAwareWorkloadScheduling=true",
                     "--feature-gates: TopologyAwareWorkloadScheduling is enabled, but depends on "
                     "features that are disabled: [GenericWorkload]", id="dependency off"),
        pytest.param("GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
                     "--feature-gates: TopologyAwareWorkloadScheduling=true is not implemented "
                     "by Corral's engine: topology-aware placements (alpha) are not implemented",
                     id="not implemented"),
    ],
)  # fmt: skip
def test_bad_feature_gates_are_a_usage_error(tmp_path: Path, gates: str, message: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(GOOD_HEAD + "profiles:\n- schedulerName: a\n")
    result = subprocess.run(
        [sys.executable, "-m", "corral", "scheduler", "--config", str(config),
         f"--feature-gates={gates}"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_pod_watch_encoding_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(GOOD_HEAD + "profiles:\n- schedulerName: a\n")
    result = subprocess.run(
        [sys.executable, "-m", "corral", "scheduler", "--config", str(config),
         "--pod-watch-encoding=yaml"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    # Some Python releases quote argparse's choices, others do not; either form names them.
    unquoted = "invalid choice: 'yaml' (choose from json, protobuf)"
    quoted = "invalid choice: 'yaml' (choose from 'json', 'protobuf')"
    assert f"argument --pod-watch-encoding: {unquoted}" in result.stderr or (
        f"argument --pod-watch-encoding: {quoted}" in result.stderr
    )
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("gates", "want"),
    [
        pytest.param("", {}, id="none"),
        pytest.param("GenericWorkload=true", {"GenericWorkload": True}, id="on"),
        pytest.param(" kube:GenericWorkload = T ,", {"GenericWorkload": True},
                     id="component prefix, spaces, Go bool"),
        pytest.param("GenericWorkload=true,GenericWorkload=0", {"GenericWorkload": False},
                     id="the last wins"),
        pytest.param("OpportunisticBatching=true", {"OpportunisticBatching": True},
                     id="another gate at its default"),
    ],
)  # fmt: skip
def test_feature_gates(gates: str, want: dict[str, bool]) -> None:
    assert parse_feature_gates(gates).settings == want


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        pytest.param([], "Normal", id="default"),
        pytest.param(["--log-level", "Trace"], "Trace", id="log-level"),
        pytest.param(["-v", "2"], "Normal", id="kube-scheduler's -v=2"),
        pytest.param(["--v", "4"], "Debug", id="-v=4 debug"),
        pytest.param(["-v", "10"], "Trace", id="-v=10 trace"),
    ],
)
def test_verbosity_as_kube_scheduler_or_by_name(argv: list[str], want: str) -> None:
    parser = build_parser(["scheduler"])
    assert log_level(parser.parse_args(["scheduler", "--config", "c.yaml", *argv])) == want


def test_verbosity_given_twice_is_a_usage_error() -> None:
    parser = build_parser(["scheduler"])
    args = parser.parse_args(["scheduler", "--config", "c", "-v", "4", "--log-level", "Debug"])
    with pytest.raises(UsageError, match="-v and --log-level go alone"):
        log_level(args)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_pod_and_node_are_log_fields(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The engine's lines name the pod and the node as fields: klog's key="value" in text,
    keys of their own in JSON (finding 23: they were inside the message)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        setup_logging("Normal", fmt)
        logging.getLogger("corral.scheduler").info(
            "Successfully bound pod to node", extra=fields(pod="ns/p", node="n1", evaluatedNodes=3)
        )
    finally:
        root.handlers[:], root.level = handlers, level
    line = capsys.readouterr().err.strip()
    if fmt == "text":
        assert line.endswith(
            '] Successfully bound pod to node pod="ns/p" node="n1" evaluatedNodes=3'
        )
    else:
        entry = json.loads(line)
        assert (entry["msg"], entry["pod"], entry["node"], entry["evaluatedNodes"]) == (
            "Successfully bound pod to node", "ns/p", "n1", 3)  # fmt: skip
