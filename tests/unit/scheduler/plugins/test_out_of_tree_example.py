"""The example package under examples/ installs with pip and is found through the
``corral.plugins`` entry point by both the engine's registry and the API catalog."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from corral.api.catalog import build_catalog
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.config.declarations import ENTRY_POINT_GROUP, load_entry_points
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
