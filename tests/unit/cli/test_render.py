"""`corral render`: kubectl's -f and -o, deterministic, nothing stale left behind."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml
from tests.unit.cli.conftest import ROOT, Run

SAMPLES = ROOT / "config" / "samples"
TENANT = SAMPLES / "tenant.yaml"
MINIMAL = SAMPLES / "minimal.yaml"
BAD = """\
apiVersion: corral.dev/v1alpha1
kind: SchedulerProfile
metadata: {name: bad}
spec:
  plugins:
    filter:
      enabled: [{name: NodeResourceFit}]
"""


def names(stream: str) -> set[str]:
    return {d["metadata"]["name"] for d in yaml.safe_load_all(stream)}


def test_stdout_is_deterministic_yaml(corral: Run) -> None:
    _, first, _ = corral("render", "-f", str(TENANT))
    code, second, _ = corral("render", "-f", str(TENANT), "-o", "yaml")
    assert code == 0
    assert first == second
    kinds = [d["kind"] for d in yaml.safe_load_all(first)]
    assert kinds[0] == "ServiceAccount"
    assert {"Deployment", "ConfigMap"} <= set(kinds)


def test_every_file_is_rendered(corral: Run) -> None:
    """Repeated -f renders every profile (argparse used to keep only the last)."""
    code, both, _ = corral("render", "-f", str(TENANT), "-f", str(MINIMAL))
    _, tenant, _ = corral("render", "-f", str(TENANT))
    _, minimal, _ = corral("render", "-f", str(MINIMAL))
    assert code == 0
    assert both == tenant + minimal
    assert {"corral-team-a", "corral-minimal"} <= names(both)


def test_json_is_one_list(corral: Run) -> None:
    _, stream, _ = corral("render", "-f", str(TENANT))
    code, out, _ = corral("render", "-f", str(TENANT), "-o", "json")
    assert code == 0
    body = json.loads(out)
    assert (body["apiVersion"], body["kind"]) == ("v1", "List")
    assert body["items"] == list(yaml.safe_load_all(stream))


def test_output_dir(tmp_path: Path, corral: Run) -> None:
    out = tmp_path / "out"
    code, _, err = corral("render", "-f", str(TENANT), "--output-dir", str(out))
    assert (code, err) == (0, f"wrote 13 objects to {out}\n")
    files = sorted(p.name for p in out.iterdir())
    assert files[0] == "01-serviceaccount-corral-system-corral-team-a.yaml"
    assert all(":" not in name for name in files)
    _, stream, _ = corral("render", "-f", str(TENANT))
    assert [yaml.safe_load((out / n).read_text()) for n in files] == list(
        yaml.safe_load_all(stream)
    )


def test_output_dir_in_json(tmp_path: Path, corral: Run) -> None:
    """-o picks the files' format too: -o json with --output-dir writes .json files (it used to
    write YAML ones without a word)."""
    out = tmp_path / "out"
    code, _, _ = corral("render", "-f", str(MINIMAL), "-o", "json", "--output-dir", str(out))
    assert code == 0
    files = sorted(out.iterdir())
    assert files[0].name == "01-serviceaccount-corral-system-corral-minimal.json"
    _, listing, _ = corral("render", "-f", str(MINIMAL), "-o", "json")
    assert [json.loads(f.read_text()) for f in files] == json.loads(listing)["items"]
    code, _, _ = corral("render", "-f", str(MINIMAL), "--output-dir", str(out), "--prune")
    assert code == 0  # an earlier JSON render's files are render's to prune
    assert all(f.suffix == ".yaml" for f in out.iterdir())


def test_a_non_empty_output_dir_is_refused_unless_pruned(tmp_path: Path, corral: Run) -> None:
    """Files of an earlier render would be applied again (team-a's Roles after a switch to
    minimal): refused, or removed with --prune."""
    out = tmp_path / "out"
    corral("render", "-f", str(TENANT), "--output-dir", str(out))
    code, _, err = corral("render", "-f", str(MINIMAL), "--output-dir", str(out))
    assert code == 2
    assert err.startswith(f"corral: --output-dir {out}: not empty (13 entries)")
    code, _, _ = corral("render", "-f", str(MINIMAL), "--output-dir", str(out), "--prune")
    assert code == 0
    left = [yaml.safe_load(p.read_text()) for p in out.iterdir()]
    assert len(left) == 9
    assert all("team-a" not in d["metadata"]["name"] for d in left)


def test_prune_removes_only_what_render_writes(tmp_path: Path, corral: Run) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "kustomization.yaml").write_text("resources: []\n")
    code, _, err = corral("render", "-f", str(MINIMAL), "--output-dir", str(out), "--prune")
    assert code == 2
    assert "--prune removes only files render wrote; remove these first: kustomization.yaml" in err
    assert (out / "kustomization.yaml").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["-o", "out/"], "corral: -o out/: the output format is yaml or json; to "
                     "write files use --output-dir out/", id="-o is a format"),
        pytest.param(["-o", "-"], "corral: -o -: the output format is yaml or json",
                     id="the old stdout spelling"),
        pytest.param(["--prune"], "corral: --prune goes with --output-dir", id="prune alone"),
        pytest.param(["--output-dir", str(TENANT)], f"corral: --output-dir {TENANT}: not a "
                     "directory", id="output dir is a file"),
        pytest.param(["--image", ":"], "corral: --image \":\": invalid reference format (e.g. "
                     "'registry.example.com/team/corral:v1')", id="image not a reference"),
        pytest.param(["--image", "reg/corral@sha256:abc"], "corral: --image "
                     "\"reg/corral@sha256:abc\": invalid reference format (e.g. "
                     "'registry.example.com/team/corral:v1')", id="image digest too short"),
    ],
)  # fmt: skip
def test_usage_errors(corral: Run, argv: list[str], message: str) -> None:
    code, out, err = corral("render", "-f", str(TENANT), *argv)
    assert (code, out, err) == (2, "", message + "\n")


def test_namespace_and_image_flags(corral: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "sys.stdin",
        io.TextIOWrapper(io.BytesIO(b"apiVersion: corral.dev/v1alpha1\nkind: SchedulerProfile\n"
                                    b"metadata: {name: m}\nspec: {}\n")),
    )  # fmt: skip
    code, out, _ = corral("render", "-f", "-", "--namespace", "sched", "--image", "reg/corral:1")
    assert code == 0
    dep = next(d for d in yaml.safe_load_all(out) if d["kind"] == "Deployment")
    assert dep["metadata"]["namespace"] == "sched"
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "reg/corral:1"


def test_an_invalid_profile_writes_nothing(tmp_path: Path, corral: Run) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    out = tmp_path / "out"
    code, stdout, err = corral("render", "-f", str(TENANT), "-f", str(f), "--output-dir", str(out))
    assert (code, stdout) == (1, "")
    assert err == (
        f'{f}:7:18: spec.plugins.filter.enabled[0].name: unknown plugin "NodeResourceFit"; '
        'did you mean "NodeResourcesFit"?\n'
    )
    assert not out.exists()


def test_a_scheduler_name_taken_twice_is_refused(tmp_path: Path, corral: Run) -> None:
    f = tmp_path / "again.yaml"
    f.write_text(TENANT.read_text().replace("name: team-a\n", "name: team-b\n", 1))
    code, _, err = corral("render", "-f", str(TENANT), "-f", str(f))
    assert code == 1
    assert f'spec.schedulerName: duplicate schedulerName "team-a": {TENANT} has it' in err


def test_the_scheduler_configuration_alone(corral: Run) -> None:
    """What `corral scheduler --config` takes, without fishing it out of the ConfigMap: the
    same configuration the ConfigMap holds, and valid."""
    _, stream, _ = corral("render", "-f", str(TENANT))
    (config_map,) = [d for d in yaml.safe_load_all(stream) if d["kind"] == "ConfigMap"]
    (held,) = [yaml.safe_load(v) for v in config_map["data"].values()]
    code, out, _ = corral("render", "-f", str(TENANT), "--scheduler-config")
    assert code == 0
    assert list(yaml.safe_load_all(out)) == [held]
    assert corral("render", "-f", str(TENANT), "--scheduler-config", "--output-dir", "x")[0] == 2


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        pytest.param("01-serviceaccount-x.yaml", ": Permission denied", id="a rendered name"),
        pytest.param("cwd", ": --prune removes only files render wrote; remove these first: cwd",
                     id="another name is never looked at"),
    ],
)  # fmt: skip
def test_an_entry_that_cannot_be_looked_at(
    tmp_path: Path, corral: Run, monkeypatch: pytest.MonkeyPatch, entry: str, message: str
) -> None:
    # As /proc/1/cwd is for root here: stat() refused. It was a PermissionError traceback.
    out = tmp_path / "out"
    out.mkdir()
    (out / entry).write_text("")

    def refused(self: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "is_file", refused)
    code, _, err = corral("render", "-f", str(MINIMAL), "--output-dir", str(out), "--prune")
    assert (code, err) == (2, f"corral: --output-dir {out}{message}\n")
