"""NodeLabelBonus: an example out-of-tree Corral Score plugin.

Nodes whose label ``labelKey`` equals ``labelValue`` score 100, all others 0. It imports only
``corral.scheduler.framework`` (the plugin contract) and implements the per-node form only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from corral.scheduler.framework import CycleState, Handle, NodeInfo, PodInfo, Status

NAME: Final = "NodeLabelBonus"
EXTENSION_POINTS: Final = ("score",)
DESCRIPTION: Final = "Example out-of-tree plugin: prefers nodes with labelKey=labelValue."


@dataclass(frozen=True, slots=True)
class Args:
    label_key: str = ""
    label_value: str = ""


class NodeLabelBonus:
    name: str = NAME

    def __init__(self, args: Args) -> None:
        if not args.label_key:
            raise ValueError("labelKey: required")
        self.args = args

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        return (100 if node.labels.get(self.args.label_key) == self.args.label_value else 0), None


class _Entry:
    """The entry point: a plugin factory that also describes the plugin to the catalog."""

    NAME = NAME
    EXTENSION_POINTS = EXTENSION_POINTS
    DESCRIPTION = DESCRIPTION

    def __call__(self, args: object, handle: Handle) -> NodeLabelBonus:
        raw: Mapping[str, Any] = args if isinstance(args, Mapping) else {}
        return NodeLabelBonus(Args(str(raw.get("labelKey", "")), str(raw.get("labelValue", ""))))


entry = _Entry()
