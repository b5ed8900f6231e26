"""From the configuration's ``extenders`` list to the engine's extenders (upstream
``scheduler.go:buildExtenders``).

- Extenders keep their configured order, except that ignorable ones move to the end.
- Managed resources marked ``ignoredByScheduler`` become every profile's NodeResourcesFit
  ``ignoredResources``; upstream *replaces* the list from pluginConfig with them ("the extender
  ignored resources take precedence"), and so does :func:`with_ignored_resources`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from corral.scheduler.config.extender_urls import redact_url
from corral.scheduler.config.types import Extender as ExtenderConfig
from corral.scheduler.extender.client import HTTPExtender
from corral.scheduler.framework.profile import ResolvedProfile

NODE_RESOURCES_FIT = "NodeResourcesFit"


def build_extenders(configs: Sequence[ExtenderConfig]) -> list[HTTPExtender]:
    """Raises ``ValueError`` (with the extender's index) for an unusable TLS configuration."""
    built = []
    for i, cfg in enumerate(configs):
        try:
            built.append(HTTPExtender(cfg))
        except (ValueError, OSError) as exc:
            raise ValueError(f"extenders[{i}] ({redact_url(cfg.url_prefix)}): {exc}") from exc
    return [e for e in built if not e.is_ignorable()] + [e for e in built if e.is_ignorable()]


def sends_node_objects(extenders: Sequence[HTTPExtender]) -> bool:
    """Whether an extender is sent whole Node objects (not nodeCacheCapable, with a filter or
    prioritize verb): only then do node records keep their JSON (``node_from_json(keep_raw=)``),
    which such an extender receives as the API server sent it."""
    return any(
        not e.node_cache_capable and (e.is_filter() or e.is_prioritizer()) for e in extenders
    )


def ignored_resources(configs: Sequence[ExtenderConfig]) -> list[str]:
    return [r.name for cfg in configs for r in cfg.managed_resources if r.ignored_by_scheduler]


def with_ignored_resources(
    profiles: Sequence[ResolvedProfile], names: Sequence[str]
) -> list[ResolvedProfile]:
    """Profiles whose NodeResourcesFit args ignore ``names``; unchanged when ``names`` is empty.

    Raises ``ValueError`` when a profile has no NodeResourcesFit args, as upstream does.
    """
    if not names:
        return list(profiles)
    out = []
    for profile in profiles:
        args = profile.plugin_args.get(NODE_RESOURCES_FIT)
        new_args: object
        if args is None:
            raise ValueError("can't find NodeResourcesFitArgs in plugin config")
        if isinstance(args, Mapping):
            new_args = {**args, "ignoredResources": list(names)}
        elif dataclasses.is_dataclass(args) and hasattr(args, "ignored_resources"):
            new_args = dataclasses.replace(args, ignored_resources=list(names))  # type: ignore[type-var]
        else:
            raise ValueError(
                f"want args to be of type NodeResourcesFitArgs, got {type(args).__name__}"
            )
        plugin_args = {**profile.plugin_args, NODE_RESOURCES_FIT: new_args}
        out.append(dataclasses.replace(profile, plugin_args=plugin_args))
    return out
