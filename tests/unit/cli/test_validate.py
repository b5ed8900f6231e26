"""`corral validate`: every error at once, where it stands, for both config languages."""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.unit.cli.conftest import ROOT, Run

SAMPLES = ROOT / "config" / "samples"
TENANT = SAMPLES / "tenant.yaml"
HEAD = "apiVersion: corral.dev/v1alpha1\nkind: SchedulerProfile\nmetadata:\n  name: a\n"
KSC = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
BAD = """\
apiVersion: corral.dev/v1alpha1
kind: SchedulerProfile
metadata: {name: bad}
spec:
  replicas: 3
  leaderElection: {leaderElect: false}
  plugins:
    filter:
      enabled: [{name: NodeResourceFit}]
"""


def test_every_sample_and_the_directory_are_valid(corral: Run) -> None:
    code, out, err = corral("validate", "-f", str(SAMPLES))
    samples = sorted(p for p in SAMPLES.glob("*.yaml") if p.name != "kustomization.yaml")
    assert code == 0, err
    assert out.splitlines() == [f"{p}: valid ({yaml.safe_load(p.read_text())['metadata']['name']})"
                                for p in samples]  # fmt: skip
    assert err == (
        f"{SAMPLES / 'kustomization.yaml'}:2:1: skipped: a Kustomization, not a "
        "SchedulerProfile or KubeSchedulerConfiguration\n"
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(
            BAD,
            [
                "p.yaml:9:18: spec.plugins.filter.enabled[0].name: unknown plugin "
                '"NodeResourceFit"; did you mean "NodeResourcesFit"?',
                "p.yaml:6:20: spec.leaderElection.leaderElect: must be true when replicas is 3",
            ],
            id="rule errors, at their lines",
        ),
        pytest.param(
            HEAD + 'spec:\n  replicas: "two"\n  percentageOfNodesToScore: 150\n',
            [
                "p.yaml:6:3: spec.replicas: must be an integer, got string",
                "p.yaml:7:3: spec.percentageOfNodesToScore: 150: must be between 0 and 100 "
                "(0 means adaptive)",
            ],
            id="a type error hides no range error",
        ),
        pytest.param(
            HEAD, ["p.yaml:1:1: spec: required: an object (it may be {})"], id="no spec (CRD)"
        ),
        pytest.param(
            HEAD + "spec:\n  replica: 2\n  tenancy: {namespace: [a]}\n",
            [
                'p.yaml:6:3: spec.replica: unknown field; did you mean "replicas"?',
                'p.yaml:7:13: spec.tenancy.namespace: unknown field; did you mean "namespaces"?',
            ],
            id="did you mean, for fields",
        ),
        pytest.param(
            "metadata: [unclosed\n", ["p.yaml:2:1: invalid YAML: while parsing"], id="yaml syntax"
        ),
        pytest.param("- a\n- b\n", ["p.yaml:1:1: must be an object"], id="not an object"),
        pytest.param("", ["p.yaml: contains no document"], id="empty file"),
        pytest.param(
            HEAD + "spec:\n  replicas: 1\n  replicas: 2\n",
            ["p.yaml:7:3: invalid YAML: duplicate key spec.replicas"],
            id="duplicate key",
        ),
        pytest.param(
            HEAD + "spec: " + "[" * 5000 + "]" * 5000 + "\n",
            ["p.yaml:5:107: invalid YAML: nested deeper than 100 levels"],
            id="deep nesting",
        ),
        pytest.param(
            HEAD + "spec:\n  leaderElection: {leaseDuration: 9999999h}\n",
            ['p.yaml:6:20: spec.leaderElection.leaseDuration: duration "9999999h" is out of range'],
            id="overflowing duration",
        ),
        pytest.param(
            HEAD + "spec:\n  extenders:\n  - {urlPrefix: 'https://e:1', filterVerb: f, "
            "tlsConfig: {certData: Y2VydA==}}\n",
            ["p.yaml:7:59: spec.extenders[0].tlsConfig.certData: inline"],
            id="inline extender TLS material (Secrets only)",
        ),
        pytest.param(
            KSC + "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 101\n",
            ["p.yaml:5:3: profiles[0].percentageOfNodesToScore: 101"],
            id="a KubeSchedulerConfiguration",
        ),
        pytest.param(
            KSC + "profiles:\n- schedulerName: a\n  plugins: {score: {enabled: [{name: Nope}]}}\n",
            ['p.yaml:5:32: profiles[0].plugins.score.enabled[0].name: unknown plugin "Nope"'],
            id="a KubeSchedulerConfiguration's plugins",
        ),
        pytest.param(
            HEAD.replace("SchedulerProfile", "SchedulerProfle") + "spec: {}\n",
            ['p.yaml:2:1: kind: "SchedulerProfle": must be "SchedulerProfile"'],
            id="a misspelt kind is checked, not skipped",
        ),
    ],
)
def test_errors_are_one_line_each_at_their_position(
    tmp_path: Path, corral: Run, content: str, expected: list[str]
) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(content)
    code, out, err = corral("validate", "-f", str(f))
    assert code == 1
    assert out == ""
    lines = err.replace(str(tmp_path) + "/", "").splitlines()
    for fragment in expected:
        assert any(line.startswith(fragment) for line in lines), (fragment, lines)
    assert all(line.startswith("p.yaml") for line in lines), lines


def test_documents_and_files_are_checked_together(tmp_path: Path, corral: Run) -> None:
    """A schedulerName taken twice is refused in another file as in the same file; the later
    document is the one refused, naming where the name was first."""
    (tmp_path / "a.yaml").write_text(HEAD + "spec: {}\n")
    (tmp_path / "b.yaml").write_text(
        HEAD.replace("name: a", "name: b") + "spec: {schedulerName: a}\n---\n" + BAD
    )
    code, out, err = corral("validate", "-f", str(tmp_path))
    assert code == 1
    assert out == f"{tmp_path}/a.yaml: valid (a)\n"
    assert err.splitlines()[0] == (
        f'{tmp_path}/b.yaml:5:8: spec.schedulerName: duplicate schedulerName "a": '
        f"{tmp_path}/a.yaml has it"
    )
    assert f"{tmp_path}/b.yaml:15:18: spec.plugins.filter.enabled[0].name" in err


def test_recursive_directories(tmp_path: Path, corral: Run) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "p.yml").write_text(HEAD + "spec: {}\n")
    (tmp_path / "notes.txt").write_text("not YAML: [")
    assert corral("validate", "-f", str(tmp_path))[0:2] == (
        1,
        "",
    )  # nothing to validate at the top
    code, out, _ = corral("validate", "-R", "-f", str(tmp_path))
    assert (code, out) == (0, f"{tmp_path}/sub/p.yml: valid (a)\n")


def test_recursion_does_not_follow_symlinked_directories(tmp_path: Path, corral: Run) -> None:
    # As kubectl's -R: a link back up would read every file once per level (40, until ELOOP).
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "p.yml").write_text(HEAD + "spec: {}\n")
    (tmp_path / "sub" / "up").symlink_to("..")
    (tmp_path / "link.yaml").symlink_to("sub/p.yml")  # a linked file is read, as kubectl does
    code, out, err = corral("validate", "-R", "-f", str(tmp_path))
    assert (code, out) == (1, f"{tmp_path}/link.yaml: valid (a)\n"), err
    # Read twice (the link and its target), not once per level of the loop.
    assert err.splitlines() == [
        f'{tmp_path}/sub/p.yml:4:3: metadata.name: duplicate profile "a": {tmp_path}/link.yaml '
        "has it",
        f'{tmp_path}/sub/p.yml:5:1: spec.schedulerName: duplicate schedulerName "a": '
        f"{tmp_path}/link.yaml has it",
    ]


@pytest.mark.parametrize("recursive", [pytest.param(True, id="-R"), pytest.param(False, id="top")])
def test_an_entry_that_cannot_be_looked_at(
    tmp_path: Path, corral: Run, monkeypatch: pytest.MonkeyPatch, recursive: bool
) -> None:
    # As /proc/1/cwd is for root here: its stat fails with EACCES. It was a traceback.
    (tmp_path / "cwd.yaml").write_text("")
    real = os.scandir

    class Refused:
        def __init__(self, entry: os.DirEntry[str]) -> None:
            self.name, self.path = entry.name, entry.path

        def is_dir(self, *, follow_symlinks: bool = True) -> bool:
            raise PermissionError(13, "Permission denied", self.path)

    @contextlib.contextmanager
    def scandir(path: str) -> Iterator[list[Any]]:
        with real(path) as listing:
            yield [Refused(e) if e.name == "cwd.yaml" else e for e in listing]

    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = corral("validate", *(["-R"] if recursive else []), "-f", str(tmp_path))
    assert (code, out, err) == (
        2,
        "",
        f"corral: cannot read {tmp_path}/cwd.yaml: Permission denied\n",
    )


def test_an_extenders_tls_secret_is_not_looked_for_offline(tmp_path: Path, corral: Run) -> None:
    """The tlsSecretRef Secret is mounted only in the scheduler's pods: validate checks the
    rest of the extender (it refused the profile: "cannot read /var/run/corral/...")."""
    f = tmp_path / "p.yaml"
    ext = "  extenders:\n  - {urlPrefix: 'https://e:1', filterVerb: f, tlsSecretRef: {name: s}"
    f.write_text(HEAD + "spec:\n" + ext + "}\n")
    assert corral("validate", "-f", str(f)) == (0, f"{f}: valid (a)\n", "")
    f.write_text(HEAD + "spec:\n" + ext + ", tlsConfig: {caData: bm90IGEgY2E=}}\n")
    code, out, err = corral("validate", "-f", str(f))
    assert (code, out) == (1, "")
    assert err.startswith(f"{f}:6:3: spec.extenders: extenders[0] (https://e:1): "
                          "tlsConfig.caData: "), err  # fmt: skip


def test_other_kinds_are_skipped_with_a_line(corral: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """A profile among the objects it renders to: the profile is checked, the 13 others are
    one line each (not a wall of apiVersion/kind errors)."""
    _, rendered, _ = corral("render", "-f", str(TENANT))
    stream = TENANT.read_text() + rendered
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stream.encode())))
    code, out, err = corral("validate", "-f", "-")
    assert code == 0
    assert out == "<stdin>#1: valid (team-a)\n"
    skipped = err.splitlines()
    assert len(skipped) == 13
    first = TENANT.read_text().count("\n") + 2
    assert skipped[0] == (
        f"<stdin>:{first}:1: skipped: a ServiceAccount, not a SchedulerProfile or "
        "KubeSchedulerConfiguration"
    )
    assert all(": skipped: a " in line for line in skipped)


@pytest.mark.parametrize("command", ["validate", "render"])
@pytest.mark.parametrize(
    ("kind", "named"),
    [
        pytest.param("ElasticQuota", "an ElasticQuota", id="ElasticQuota"),
        pytest.param("Ingress", "an Ingress", id="Ingress"),
        pytest.param("EndpointSlice", "an EndpointSlice", id="EndpointSlice"),
        pytest.param("ObjectBucketClaim", "an ObjectBucketClaim", id="ObjectBucketClaim"),
        pytest.param("Deployment", "a Deployment", id="Deployment"),
        pytest.param("PodGroup", "a PodGroup", id="PodGroup"),
        pytest.param("UserNamespaceMapping", "a UserNamespaceMapping", id="a U read as you"),
    ],
)
def test_a_skipped_kind_takes_its_article(
    tmp_path: Path, corral: Run, command: str, kind: str, named: str
) -> None:
    """ "skipped: a ElasticQuota" was printed for examples/batch-tenant/quota.yaml."""
    f = tmp_path / "other.yaml"
    f.write_text(f"apiVersion: example.com/v1\nkind: {kind}\nmetadata: {{name: x}}\n")
    _, _, err = corral(command, "-f", str(f))
    assert err.splitlines()[0].startswith(f"{f}:1:1: skipped: {named}, not a SchedulerProfile")


def test_a_kube_scheduler_configuration_is_validated(corral: Run) -> None:
    config = ROOT / "examples" / "extender-example" / "scheduler-config.yaml"
    code, out, _ = corral("validate", "-f", str(config))
    assert (code, out) == (0, f"{config}: valid (KubeSchedulerConfiguration: with-extender)\n")


def test_nothing_to_validate_is_invalid_input(tmp_path: Path, corral: Run) -> None:
    f = tmp_path / "d.yaml"
    f.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n")
    code, _, err = corral("validate", "-f", str(f))
    assert code == 1
    assert err.splitlines()[-1] == (
        f"{f}: no SchedulerProfile or KubeSchedulerConfiguration in the input"
    )


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_machine_readable_report(tmp_path: Path, corral: Run, fmt: str) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(TENANT.read_text() + "---\n" + BAD)
    code, out, _ = corral("validate", "-f", str(f), "-o", fmt)
    assert code == 1
    report = json.loads(out) if fmt == "json" else yaml.safe_load(out)
    assert report["valid"] is False
    first, second = report["documents"]
    assert (first["result"], first["schedulerNames"]) == ("valid", ["team-a"])
    assert second["result"] == "invalid"
    assert second["problems"][1] == {
        "source": str(f),
        "line": TENANT.read_text().count("\n") + 10,
        "column": 18,
        "path": "spec.plugins.filter.enabled[0].name",
        "message": 'unknown plugin "NodeResourceFit"; did you mean "NodeResourcesFit"?',
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["-f", "/nonexistent/p.yaml"], "corral: cannot read /nonexistent/p.yaml: "
                     "No such file or directory", id="missing file"),
        pytest.param(["-f", "/dev/zero"], "corral: cannot read /dev/zero: not a regular file "
                     "(a character device)",
                     id="a device is never read"),
        pytest.param(["-f", "-", "-f", "-"], "corral: -f -: stdin can be read only once",
                     id="stdin twice"),
    ],
)  # fmt: skip
def test_unreadable_input_is_a_usage_error(corral: Run, argv: list[str], message: str) -> None:
    code, _, err = corral("validate", *argv)
    assert code == 2
    assert err == message + "\n"


def _shape(value: object) -> object:
    """The keys of a JSON value, recursively (lists by their first item)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def test_the_documented_report_is_what_validate_prints(tmp_path: Path, corral: Run) -> None:
    """docs/cli.md's -o json sample has the keys and types of a real report."""
    page = (ROOT / "docs" / "cli.md").read_text()
    sample = json.loads(page.split("```json\n", 1)[1].split("```", 1)[0])
    f = tmp_path / "p.yaml"
    f.write_text(TENANT.read_text() + "---\n" + BAD)
    _, out, _ = corral("validate", "-f", str(f), "-o", "json")
    report = json.loads(out)
    report["documents"] = report["documents"][1:]
    report["documents"][0]["problems"] = report["documents"][0]["problems"][1:]
    assert _shape(report) == _shape(sample)
