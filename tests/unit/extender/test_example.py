"""examples/extender-example (the one docs/extenders.md shows) runs and answers as documented."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from corral.extender import serve_in_thread
from corral.scheduler.config.types import Extender as ExtenderConfig
from corral.scheduler.extender import HTTPExtender
from corral.scheduler.framework.types import NodeRecord, PodInfo

EXAMPLE = Path(__file__).parents[3] / "examples" / "extender-example" / "extender.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extender_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _node(name: str, **labels: str) -> NodeRecord:
    raw = {
        "metadata": {
            "name": name,
            "labels": {f"example.corral.dev/{k}": v for k, v in labels.items()},
        }
    }
    return NodeRecord(name=name, raw=raw)


def test_example_filters_prioritizes_and_binds() -> None:
    example = _load()
    bound: list[tuple[str, str, str, str]] = []
    ext = example.build(binder=lambda *args: bound.append(args))
    nodes = [_node("a", allowed="true"), _node("b"), _node("c", allowed="true", preferred="true")]
    pod = PodInfo(uid="u", namespace="ns", name="p", raw={"metadata": {"name": "p"}})
    with serve_in_thread(ext) as url:
        client = HTTPExtender(
            ExtenderConfig(
                url_prefix=url,
                filter_verb="filter",
                prioritize_verb="prioritize",
                bind_verb="bind",
                weight=1,
            )
        )
        result = client.filter(pod, nodes)
        assert result.node_names == ("a", "c")
        assert dict(result.failed) == {"b": example.NOT_ALLOWED}
        scores, _ = client.prioritize(pod, nodes)
        assert {s.host: s.score for s in scores} == {"a": 0, "b": 0, "c": 10}
        client.bind(pod, "c")
    assert bound == [("ns", "p", "u", "c")]
