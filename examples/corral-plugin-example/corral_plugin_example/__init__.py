"""NodeLabelBonus: an example out-of-tree Corral Score plugin.

Nodes whose label ``labelKey`` equals ``labelValue`` score 100, all others 0. The module is the
plugin's declaration (the ``corral.plugins`` entry point names it): ``NAME``,
``EXTENSION_POINTS``, its args type ``Args`` with ``validate_args``, and the factory ``new``. It
implements the per-node Score form only; the engine loops it over the feasible nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from corral.scheduler.config import FieldError, FieldPath
from corral.scheduler.framework import CycleState, Handle, NodeInfo, PodInfo, Status

NAME: Final = "NodeLabelBonus"
EXTENSION_POINTS: Final = ("score",)
DESCRIPTION: Final = "Example out-of-tree plugin: prefers nodes with labelKey=labelValue."
MAX_SCORE: Final = 100


@dataclass
class Args:
    """``pluginConfig[].args`` of the plugin: fields are the camelCase JSON keys (labelKey)."""

    label_key: str = ""
    label_value: str = ""


def validate_args(path: FieldPath, args: Args) -> list[FieldError]:
    """Checked wherever the args are: ``corral validate``, the operator, the engine's start."""
    if not args.label_key:
        return [FieldError(str(path.child("labelKey")), "required: the node label to look at")]
    return []


class NodeLabelBonus:
    name: str = NAME

    def __init__(self, args: Args) -> None:
        self.args = args

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        matches = node.labels.get(self.args.label_key) == self.args.label_value
        return (MAX_SCORE if matches else 0), None


def new(args: Args, handle: Handle) -> NodeLabelBonus:
    """The factory: the engine hands it ``Args`` already decoded, defaulted and validated with
    the declaration above, exactly as a profile's pluginConfig is checked."""
    return NodeLabelBonus(args)
