"""Every example in docs/plugins/*.md validates as a SchedulerProfile, and its pluginConfig
args build the plugin (writing.md's, of the out-of-tree example plugin, is checked with that
plugin installed: tests/unit/scheduler/plugins/test_out_of_tree_example.py). Every plugin the
engine ships beyond upstream's (Corral's own, scheduler-plugins' ports) has its page and its row
in docs/schedulerprofile.md's tables, with the extension points it declares."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from corral.api import check_profile
from corral.scheduler.config import IN_TREE, PluginDeclaration
from corral.scheduler.config.declarations import SCHEDULER_PLUGINS
from corral.scheduler.plugins.registry import in_tree_registry
from corral.testing.framework import FakeHandle

DOCS = Path(__file__).resolve().parents[4] / "docs" / "plugins"
PROFILE_DOC = DOCS.parent / "schedulerprofile.md"
# A row of those tables: | [`Name`](plugins/Name.md) | point, point | args |
ROW = re.compile(
    r"^\| \[`(?P<name>\w+)`\]\(plugins/(?P<page>[^)]+)\) \| (?P<points>[^|]+) \|", re.M
)
SHIPPED = [pytest.param(d, id=d.name) for d in IN_TREE if d.source in ("corral", SCHEDULER_PLUGINS)]
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


def _rows() -> dict[str, tuple[str, frozenset[str]]]:
    return {
        m["name"]: (m["page"], frozenset(p.strip() for p in m["points"].split(",")))
        for m in ROW.finditer(PROFILE_DOC.read_text())
    }


@pytest.mark.parametrize("declaration", SHIPPED)
def test_every_shipped_plugin_has_its_page_and_its_row(declaration: PluginDeclaration) -> None:
    """Review finding 21: the table listed three of Corral's five, then none of the six ports."""
    rows = _rows()
    assert declaration.name in rows, f"no row for {declaration.name} in {PROFILE_DOC.name}"
    page, points = rows[declaration.name]
    assert page == f"{declaration.name}.md"
    assert (DOCS / page).is_file()
    assert points == declaration.extension_points


def test_every_row_is_a_shipped_plugin() -> None:
    assert len(SHIPPED) >= 11
    assert set(_rows()) == {p.values[0].name for p in SHIPPED}  # type: ignore[union-attr]
