"""Every example in docs/plugins/*.md validates as a SchedulerProfile, and its pluginConfig
args build the plugin (writing.md's, of the out-of-tree example plugin, is checked with that
plugin installed: tests/unit/scheduler/plugins/test_out_of_tree_example.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from corral.api import check_profile
from corral.scheduler.config import IN_TREE
from corral.scheduler.plugins.registry import in_tree_registry
from corral.testing.framework import FakeHandle

DOCS = Path(__file__).resolve().parents[4] / "docs" / "plugins"
BLOCK = re.compile(r"```yaml\n(?P<body>.*?)```", re.S)
EXAMPLES = [
    pytest.param(m.group("body"), id=f"{doc.stem}-{i}")
    for doc in sorted(DOCS.glob("*.md"))
    if doc.name != "writing.md"
    for i, m in enumerate(BLOCK.finditer(doc.read_text()))
    if "kind: SchedulerProfile" in m.group("body")
]


@pytest.mark.parametrize("body", EXAMPLES)
def test_plugin_doc_example(body: str) -> None:
    raw = yaml.safe_load(body)
    profile, errs = check_profile(raw)
    assert errs == [], [str(e) for e in errs]
    assert profile is not None
    registry = in_tree_registry()
    for entry in raw["spec"].get("pluginConfig", ()):
        registry[entry["name"]](entry["args"], FakeHandle())


def test_every_corral_plugin_has_a_readme() -> None:
    corral = {d.name for d in IN_TREE if d.source == "corral"}
    assert corral
    assert corral <= {p.stem for p in DOCS.glob("*.md")}
