"""From a KubeSchedulerConfiguration file to the engine's running profiles.

``load_engine_config`` parses, defaults and validates the file exactly as ``corral validate``
does (same catalog of plugin names and extension points, out-of-tree plugins included), then
expands every profile into a :class:`ResolvedProfile` and builds its :class:`Framework` from the
engine's plugin registry. Every problem is a :class:`ValidationError` with field paths; a plugin
the catalog knows but this engine does not implement is reported by name and profile.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from corral.boundedio import InputError, read_input
from corral.scheduler.config import (
    FeatureGates,
    FieldError,
    KubeSchedulerConfiguration,
    PluginDeclaration,
    ValidationError,
    expand_profiles,
    installed,
    load_config,
)
from corral.scheduler.config.decode import parse_duration
from corral.scheduler.extender import (
    HTTPExtender,
    build_extenders,
    ignored_resources,
    with_ignored_resources,
)
from corral.scheduler.framework.extender import Extender
from corral.scheduler.framework.interface import PodBinder, PodGroupManager
from corral.scheduler.framework.listers import (
    ObjectLister,
    ObjectUpdater,
    PodLister,
    PodNominator,
    PreemptionExecutor,
    ResourceClaimWriter,
)
from corral.scheduler.framework.profile import ResolvedProfile
from corral.scheduler.framework.registry import Registry
from corral.scheduler.framework.runtime.framework import Framework, FrameworkError
from corral.scheduler.metrics import Recorder
from corral.scheduler.plugins import registry as plugin_registry
from corral.yamlload import MAX_BYTES

log = logging.getLogger("corral.scheduler")
_T = TypeVar("_T")


def defaulted(value: _T | None, field: str) -> _T:
    """A field upstream defaulting always fills (``load_config`` applied it); the engine reads
    it as is instead of re-applying fallbacks."""
    if value is None:
        raise ValueError(f"{field} is not defaulted: load the configuration with load_config")
    return value


@dataclass(frozen=True)
class EngineConfig:
    config: KubeSchedulerConfiguration
    profiles: list[ResolvedProfile]
    # --feature-gates: they changed the default plugin set and switch engine behaviour.
    gates: FeatureGates = field(default_factory=FeatureGates)

    @property
    def scheduler_names(self) -> list[str]:
        return [p.scheduler_name for p in self.profiles]

    def seconds(self, duration: str | None) -> float:
        return parse_duration(defaulted(duration, "duration"))


def engine_declarations() -> tuple[PluginDeclaration, ...]:
    """In-tree plugins plus those installed through the ``corral.plugins`` entry points; an
    entry point the loader left out is logged (a profile naming it fails as unknown)."""
    declarations, problems = installed()
    for problem in problems:
        log.warning("%s", problem)
    return tuple(declarations)


def engine_registry(declarations: Iterable[PluginDeclaration] | None = None) -> Registry:
    """The factories of ``declarations`` (default: :func:`engine_declarations`)."""
    return plugin_registry.registry(engine_declarations() if declarations is None else declarations)


def load_engine_config(
    source: Path | str | bytes | Mapping[str, Any], gates: FeatureGates | None = None
) -> EngineConfig:
    """Load, default (for ``gates``, validated already), validate and expand; raises
    :class:`ValidationError`."""
    gates = gates if gates is not None else FeatureGates()
    data: str | bytes | Mapping[str, Any]
    if isinstance(source, Path):
        try:
            data = read_input(str(source), MAX_BYTES, allow_stdin=False)
        except InputError as exc:
            raise ValidationError([FieldError("--config", str(exc))]) from None
    else:
        data = source
    names = {d.name: d.extension_points for d in installed()[0]}
    cfg = load_config(data, registry=names, gates=gates)
    expanded = expand_profiles(cfg, names)
    profiles = [
        plugin_registry.resolved_profile(
            plan,
            {pc.name: pc.args for pc in profile.plugin_config},
            profile.percentage_of_nodes_to_score,
        )
        for profile, plan in zip(cfg.profiles, expanded, strict=True)
    ]
    ignored = ignored_resources(cfg.extenders)
    if ignored:  # resources managed by extenders are not NodeResourcesFit's business
        try:
            profiles = with_ignored_resources(profiles, ignored)
        except ValueError as exc:
            raise ValidationError([FieldError("extenders", str(exc))]) from None
    return EngineConfig(cfg, profiles, gates)


def load_extenders(engine: EngineConfig) -> list[HTTPExtender]:
    """The configured HTTP extenders (ignorable ones last); bad TLS material is reported."""
    try:
        return build_extenders(engine.config.extenders)
    except ValueError as exc:
        raise ValidationError([FieldError("extenders", str(exc))]) from None


def build_frameworks(
    engine: EngineConfig,
    registry: Registry,
    binder: PodBinder | None,
    *,
    objects: ObjectLister | None = None,
    pod_lister: PodLister | None = None,
    nominator: PodNominator | None = None,
    preemption_executor: PreemptionExecutor | None = None,
    claim_writer: ResourceClaimWriter | None = None,
    object_updater: ObjectUpdater | None = None,
    metrics: Recorder | None = None,
    pod_groups: PodGroupManager | None = None,
    activator: Callable[[Sequence[str]], None] | None = None,
    extenders: Sequence[Extender] = (),
) -> dict[str, Framework]:
    """One Framework per profile; raises :class:`ValidationError` naming what is missing."""
    out: dict[str, Framework] = {}
    errs: list[FieldError] = []
    for i, profile in enumerate(engine.profiles):
        path = f"profiles[{i}].plugins"
        missing = [n for n in profile.plugin_names() if n not in registry]
        if missing:
            errs.append(
                FieldError(
                    path,
                    f"plugin(s) {', '.join(sorted(missing))} are known but not implemented by "
                    "this engine; disable them in the profile",
                )
            )
            continue
        try:
            out[profile.scheduler_name] = Framework(
                profile,
                registry,
                pod_binder=binder,
                objects=objects,
                pod_lister=pod_lister,
                nominator=nominator,
                preemption_executor=preemption_executor,
                claim_writer=claim_writer,
                object_updater=object_updater,
                metrics=metrics,
                generic_workload=engine.gates.generic_workload,
                pod_groups=pod_groups,
                activator=activator,
                extenders=extenders,
            )
        except FrameworkError as exc:
            errs.append(FieldError(path, str(exc)))
    if errs:
        raise ValidationError(errs)
    return out
