"""The example package under examples/ installs with pip and is found through the
``corral.plugins`` entry point by both the engine's registry and the API catalog."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from corral.api import check_profile
from corral.api.catalog import build_catalog, default_catalog
from corral.cli import main
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.config import declarations
from corral.scheduler.config.declarations import ENTRY_POINT_GROUP, load_entry_points
from corral.scheduler.engine.frameworks import build_frameworks, engine_registry, load_engine_config
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.plugins.registry import registry as build_registry
from corral.testing.builders import node, pod, snapshot_of

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "corral-plugin-example"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("src") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source)  # pip builds in the source tree; keep the repo clean
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    return target


def test_registry_and_catalog_load_the_example(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(installed))
    eps = [e for e in metadata.entry_points(group=ENTRY_POINT_GROUP) if e.name == "NodeLabelBonus"]
    assert eps, "the entry point is visible once the package is on sys.path"
    found, problems = load_entry_points()
    assert problems == []
    registry = build_registry(found)
    plugin = registry["NodeLabelBonus"]({"labelKey": "disk", "labelValue": "ssd"}, None)  # type: ignore[arg-type]
    snapshot = snapshot_of([node("fast", labels={"disk": "ssd"}), node("slow")])
    p = pod_from_json(pod("p"))
    scores = {
        snapshot.names[s]: plugin.score(CycleState(), p, snapshot.node_info(s))[0]  # type: ignore[attr-defined]
        for s in snapshot.order.tolist()
    }
    assert scores == {"fast": 100, "slow": 0}
    catalog = build_catalog(eps)
    assert catalog.problems == ()
    assert catalog["NodeLabelBonus"].extension_points == {"score"}
    for module in [m for m in sys.modules if m.startswith("corral_plugin_example")]:
        del sys.modules[module]


@pytest.fixture
def on_path(installed: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The example installed for this test: the process's cached declarations are read again."""
    monkeypatch.syspath_prepend(str(installed))
    declarations.installed.cache_clear()
    default_catalog.cache_clear()
    yield
    for module in [m for m in sys.modules if m.startswith("corral_plugin_example")]:
        del sys.modules[module]
    monkeypatch.undo()
    declarations.installed.cache_clear()
    default_catalog.cache_clear()


PROFILE = """\
apiVersion: corral.dev/v1alpha1
kind: SchedulerProfile
metadata: {name: with-example-plugin}
spec:
  plugins:
    score:
      enabled: [{name: NodeLabelBonus, weight: 5}]
  pluginConfig:
  - name: NodeLabelBonus
    args: ARGS
"""
KSC = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: bonus
  plugins:
    score:
      enabled: [{name: NodeLabelBonus, weight: 5}]
  pluginConfig:
  - name: NodeLabelBonus
    args: ARGS
"""


@pytest.mark.parametrize(
    ("args", "error"),
    [
        pytest.param("{labelKey: disktype, labelValue: ssd}", None, id="valid"),
        pytest.param("{labelKye: disktype}",
                     'pluginConfig[0].args.labelKye: unknown field; did you mean "labelKey"?',
                     id="a typo"),
        pytest.param("{labelValue: ssd}",
                     "pluginConfig[0].args.labelKey: required: the node label to look at",
                     id="its own validation"),
        pytest.param("{labelKey: 3}", "pluginConfig[0].args.labelKey: must be a string",
                     id="a wrong type"),
    ],
)  # fmt: skip
@pytest.mark.usefixtures("on_path")
def test_its_args_are_checked_alike_in_a_profile_and_a_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: str, error: str | None
) -> None:
    """Review finding 2: the args type comes from the plugin's declaration, so a
    SchedulerProfile (validate, render, the operator) and a KubeSchedulerConfiguration (the
    engine) take the same args and refuse the same mistakes, at the same field."""
    for name, text, prefix in (("p.yaml", PROFILE, "spec."), ("ksc.yaml", KSC, "profiles[0].")):
        f = tmp_path / name
        f.write_text(text.replace("ARGS", args))
        code = main(["validate", "-f", str(f)])
        err = capsys.readouterr().err
        if error is None:
            assert (code, err) == (0, ""), name
        else:
            assert code == 1, name
            assert f": {prefix}{error}" in err, (name, err)


@pytest.mark.usefixtures("on_path")
def test_the_factory_gets_its_typed_args() -> None:
    engine = load_engine_config(KSC.replace("ARGS", "{labelKey: disk, labelValue: ssd}"))
    (fwk,) = build_frameworks(engine, engine_registry(), None).values()
    plugin = fwk.plugins["NodeLabelBonus"]
    args = plugin.args  # type: ignore[attr-defined]
    assert type(args).__name__ == "Args"
    assert (args.label_key, args.label_value) == ("disk", "ssd")


def test_the_examples_own_tests_pass_as_documented(installed: Path) -> None:
    """docs/plugins/writing.md's test recipe is the example's tests/: they run green with the
    plugin installed, as a plugin's author runs them."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(installed), os.environ.get(
        "PYTHONPATH", "")])}  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True, text=True, env=env, cwd=EXAMPLE, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


@pytest.mark.usefixtures("on_path")
def test_the_profile_of_writing_md_validates() -> None:
    """docs/plugins/writing.md's tenant scheduler, with the example plugin installed."""
    page = (EXAMPLE.parents[1] / "docs" / "plugins" / "writing.md").read_text()
    (body,) = [b for b in page.split("```yaml\n")[1:] if "kind: SchedulerProfile" in b]
    profile, errors = check_profile(yaml.safe_load(body.split("```", 1)[0]))
    assert errors == [], [str(e) for e in errors]
    assert profile is not None
