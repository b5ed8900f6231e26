"""`corral render` and `corral validate`: offline, deterministic, every error, no traceback."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from corral.cli import main

ROOT = Path(__file__).resolve().parents[3]
TENANT = ROOT / "config" / "samples" / "tenant.yaml"
HEAD = "apiVersion: corral.dev/v1alpha1\nkind: SchedulerProfile\nmetadata:\n  name: a\n"
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


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_valid_files(capsys: pytest.CaptureFixture[str]) -> None:
    samples = sorted(
        str(p)
        for p in (ROOT / "config" / "samples").glob("*.yaml")
        if p.name != "kustomization.yaml"
    )
    args = [a for s in samples for a in ("-f", s)]
    code, out, _ = run(capsys, "validate", *args)
    assert code == 0
    assert out.count(": valid (") == len(samples)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(
            BAD,
            [
                'spec.plugins.filter.enabled[0].name: unknown plugin "NodeResourceFit"; '
                'did you mean "NodeResourcesFit"?',
                "spec.leaderElection.leaderElect: must be true when replicas is 3",
            ],
            id="rule errors",
        ),
        pytest.param("metadata: [unclosed\n", ["invalid YAML"], id="yaml syntax"),
        pytest.param("- a\n- b\n", ["<root>: must be an object"], id="not an object"),
        pytest.param("", ["contains no document"], id="empty file"),
        pytest.param(
            HEAD + "spec:\n  replicas: 1\n  replicas: 2\n",
            ["p.yaml:7:3: invalid YAML: duplicate key spec.replicas"],
            id="duplicate key",
        ),
        pytest.param(
            "a0: &a0 [x]\n"
            + "".join(
                f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10)
            )
            + HEAD,
            ["p.yaml: aliases expand to more than 1000000 nodes"],
            id="alias bomb",
        ),
        pytest.param(
            HEAD + "spec: " + "[" * 5000 + "]" * 5000 + "\n",
            ["invalid YAML: nested deeper than 100 levels"],
            id="deep nesting",
        ),
        pytest.param(
            HEAD + "spec:\n  leaderElection: {leaseDuration: " + "111s" * 40 + "!}\n",
            ['spec.leaderElection.leaseDuration: invalid duration "111s111s'],
            id="duration that used to backtrack for ever",
        ),
        pytest.param(
            HEAD + "spec:\n  leaderElection: {leaseDuration: 9999999h}\n",
            ['spec.leaderElection.leaseDuration: duration "9999999h" is out of range'],
            id="overflowing duration",
        ),
        pytest.param(
            HEAD + "spec:\n  podMaxBackoffSeconds: 99999999999\n",
            ["spec.podMaxBackoffSeconds: 99999999999: must be at most 9223372036"],
            id="overflowing backoff",
        ),
        pytest.param(
            HEAD + "spec:\n  podInitialBackoffSeconds: 99999999999999999999999\n",
            ["spec.podInitialBackoffSeconds: 99999999999999999999999 does not fit in a 64-bit"],
            id="integer beyond int64",
        ),
        pytest.param(
            HEAD + "spec:\n  extenders:\n  - {urlPrefix: 'https://e:1', filterVerb: f, "
            "tlsConfig: {certData: Y2VydA==}}\n",
            ["spec.extenders[0].tlsConfig.certData: inline", "spec.extenders[0].tlsSecretRef"],
            id="inline extender TLS material (Secrets only)",
        ),
        pytest.param(
            HEAD + "spec: !!binary aGk=\n", ["unsupported YAML tag !!binary"], id="binary tag"
        ),
    ],
)
def test_validate_reports_every_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: list[str]
) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(content)
    code, _, err = run(capsys, "validate", "-f", str(f))
    assert code == 1
    for fragment in expected:
        assert fragment in err
    assert "Traceback" not in err
    assert all(line.startswith(f"{f}: ") for line in err.splitlines())


def test_validate_multi_document_file_prefixes_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(TENANT.read_text() + "---\n" + BAD)
    code, _, err = run(capsys, "validate", "-f", str(f))
    assert code == 1
    assert f"{f}: #2 spec.plugins.filter.enabled[0].name" in err


def test_validate_refuses_duplicate_names_across_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(HEAD + "---\n" + HEAD.replace("name: a", "name: b") + "spec: {schedulerName: a}\n")
    code, _, err = run(capsys, "validate", "-f", str(f))
    assert code == 1
    assert err.splitlines() == [
        f'{f}: #2 spec.schedulerName: duplicate "a": document #1 has it',
    ]


def test_validate_missing_file_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "validate", "-f", "/nonexistent/p.yaml")
    assert code == 2
    assert err.startswith("corral: cannot read /nonexistent/p.yaml")


def test_render_to_stdout_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    _, first, _ = run(capsys, "render", "-f", str(TENANT))
    code, second, _ = run(capsys, "render", "-f", str(TENANT))
    assert code == 0
    assert first == second
    kinds = [d["kind"] for d in yaml.safe_load_all(first)]
    assert kinds[0] == "ServiceAccount"
    assert "Deployment" in kinds
    assert "ConfigMap" in kinds


def test_render_to_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(capsys, "render", "-f", str(TENANT), "-o", str(tmp_path / "out"))
    assert code == 0
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files[0] == "01-serviceaccount-corral-system-corral-team-a.yaml"
    assert any(name.endswith("-deployment-corral-system-corral-team-a.yaml") for name in files)
    assert all(":" not in name for name in files)
    _, stream, _ = run(capsys, "render", "-f", str(TENANT))
    assert [yaml.safe_load((tmp_path / "out" / n).read_text()) for n in files] == list(
        yaml.safe_load_all(stream)
    )


def test_render_namespace_and_image_flags(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "sys.stdin",
        io.StringIO(
            "apiVersion: corral.dev/v1alpha1\nkind: SchedulerProfile\n"
            "metadata: {name: m}\nspec: {}\n"
        ),
    )
    code, out, _ = run(
        capsys, "render", "-f", "-", "--namespace", "sched", "--image", "reg/corral:1"
    )
    assert code == 0
    dep = next(d for d in yaml.safe_load_all(out) if d["kind"] == "Deployment")
    assert dep["metadata"]["namespace"] == "sched"
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "reg/corral:1"


def test_render_invalid_profile_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    code, out, err = run(capsys, "render", "-f", str(f), "-o", str(tmp_path / "out"))
    assert code == 1
    assert out == ""
    assert "did you mean" in err
    assert not (tmp_path / "out").exists()
