"""The resolved profile the runtime is built from (config → profile wiring happens elsewhere).

Contract: names are already expanded per extension point (multiPoint merged, disabled removed)
in their final order; ``plugin_args`` maps a plugin name to its args (the plugin's own args
dataclass, a raw mapping from pluginConfig, or absent for defaults).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ScorePluginRef:
    name: str
    weight: int = 0  # 0 becomes 1, as upstream


@dataclass(frozen=True, slots=True)
class ResolvedProfile:
    scheduler_name: str
    pre_enqueue: tuple[str, ...] = ()
    queue_sort: tuple[str, ...] = ()
    pre_filter: tuple[str, ...] = ()
    filter: tuple[str, ...] = ()
    post_filter: tuple[str, ...] = ()
    pre_score: tuple[str, ...] = ()
    score: tuple[ScorePluginRef, ...] = ()
    reserve: tuple[str, ...] = ()
    permit: tuple[str, ...] = ()
    pre_bind: tuple[str, ...] = ()
    bind: tuple[str, ...] = ()
    post_bind: tuple[str, ...] = ()
    # The pod-group cycle's PostFilter (workload-aware preemption); run with GenericWorkload.
    pod_group_post_filter: tuple[str, ...] = ()
    plugin_args: Mapping[str, object] = field(default_factory=dict)
    # None: the engine-wide value applies; 0: adaptive; 100: all nodes.
    percentage_of_nodes_to_score: int | None = None

    def plugin_names(self) -> list[str]:
        """Every plugin the profile uses, each once, in first-use order."""
        seen: dict[str, None] = {}
        for point in (
            self.pre_enqueue,
            self.queue_sort,
            self.pre_filter,
            self.filter,
            self.post_filter,
            self.pre_score,
            tuple(s.name for s in self.score),
            self.reserve,
            self.permit,
            self.pre_bind,
            self.bind,
            self.post_bind,
            self.pod_group_post_filter,
        ):
            for name in point:
                seen.setdefault(name, None)
        return list(seen)
