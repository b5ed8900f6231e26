"""A profile's plugins, built and checked once, and the runners for every extension point.

Build-time checks follow upstream ``NewFramework``: every listed plugin exists and implements
the point it is listed at, no plugin appears twice at one point, exactly one QueueSort, at
least one Bind, and the score weights cannot overflow the total score. Runners return upstream's
statuses and error wording; the node-level work of Filter and Score lives in
``schedule_pod.py``. Over 400 lines on purpose: one class, upstream's ``frameworkImpl``, with one
short runner per extension point; splitting it would scatter the points a reader compares.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Final, TypeVar

from corral.scheduler import metrics as m
from corral.scheduler.framework import cluster_events
from corral.scheduler.framework import interface as fw
from corral.scheduler.framework.cluster_events import ClusterEventWithHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.extender import Extender
from corral.scheduler.framework.listers import (
    ObjectLister,
    ObjectUpdater,
    PodLister,
    PodNominator,
    PreemptionExecutor,
    ResourceClaimWriter,
)
from corral.scheduler.framework.podgroup import PodGroupRecord
from corral.scheduler.framework.profile import ResolvedProfile
from corral.scheduler.framework.runtime import nominated
from corral.scheduler.framework.runtime.recording import recording
from corral.scheduler.framework.runtime.waiting_pods import (
    MAX_PERMIT_TIMEOUT,
    WaitingPod,
    WaitingPods,
)
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeInfo, PodInfo, QueuedPodInfo

_P = TypeVar("_P")
GANG_SCHEDULING: Final = "GangScheduling"
_N = TypeVar("_N", bound=fw.Plugin)


@dataclass(frozen=True, slots=True, eq=False)
class FilterStep:
    """A Filter plugin with its forms resolved at build time (isinstance on Protocols is slow)."""

    name: str
    batch: Callable[[CycleState, PodInfo, Snapshot], fw.FilterVerdict | None] | None
    single: Callable[[CycleState, PodInfo, NodeInfo], Status | None] | None


@dataclass(frozen=True, slots=True, eq=False)
class ScoreStep:
    name: str
    weight: int
    batch: (
        Callable[[CycleState, PodInfo, Snapshot, fw.Slots], tuple[fw.Scores, Status | None]] | None
    )
    single: Callable[[CycleState, PodInfo, NodeInfo], tuple[int, Status | None]] | None
    normalize: Callable[[CycleState, PodInfo, fw.Scores], Status | None] | None


class FrameworkError(Exception):
    """The profile cannot be built (unknown plugin, wrong extension point, bad args, ...)."""


_POINTS: Final[tuple[tuple[str, type[Any], str], ...]] = (
    ("pre_enqueue", fw.PreEnqueuePlugin, "PreEnqueuePlugin"),
    ("queue_sort", fw.QueueSortPlugin, "QueueSortPlugin"),
    ("pre_filter", fw.PreFilterPlugin, "PreFilterPlugin"),
    ("post_filter", fw.PostFilterPlugin, "PostFilterPlugin"),
    ("pre_score", fw.PreScorePlugin, "PreScorePlugin"),
    ("reserve", fw.ReservePlugin, "ReservePlugin"),
    ("permit", fw.PermitPlugin, "PermitPlugin"),
    ("pre_bind", fw.PreBindPlugin, "PreBindPlugin"),
    ("bind", fw.BindPlugin, "BindPlugin"),
    ("post_bind", fw.PostBindPlugin, "PostBindPlugin"),
    ("pod_group_post_filter", fw.PodGroupPostFilterPlugin, "PodGroupPostFilterPlugin"),
)


def _error(what: str, plugin: str, status: Status) -> Status:
    """Upstream's wrapped plugin error, ``<what> "<plugin>": <message>``, owned by the plugin."""
    return Status.error(f'{what} "{plugin}": {status.message}').with_plugin(plugin)


def _failure(point: str, plugin: str, status: Status) -> Status:
    """A runner's answer to a plugin's status that is not a success (nor a Skip or Wait the
    runner accepts): a rejection stays the plugin's own, anything else (Skip and Wait included)
    becomes the error ``running <point> plugin "<plugin>": <message>`` (upstream's ``%q``)."""
    if status.is_rejected:
        return status.with_plugin(plugin)
    return _error(f"running {point} plugin", plugin, status)


_CODE_LABELS: Final = {code: code.label for code in Code}


def status_label(status: Status | None) -> str:
    """A status' metric label, upstream's ``Code.String()`` (``None`` is Success)."""
    return "Success" if status is None else _CODE_LABELS[status.code]


def sample_plugin_metrics() -> bool:
    """Whether a cycle times its plugins (upstream: ``rand.Intn(100) < 10``)."""
    return random.random() * 100 < m.PLUGIN_METRICS_SAMPLE_PERCENT


def _plugin_args(profile: ResolvedProfile, name: str) -> object:
    """The args a plugin's factory gets; empty args are none (an argless plugin listed in
    pluginConfig)."""
    args = profile.plugin_args.get(name)
    return None if isinstance(args, Mapping) and not args else args


class Framework:
    """Implements :class:`~corral.scheduler.framework.interface.Handle` for its plugins."""

    # The PodScheduler's random generator, for plugins that draw (preemption's offset); it
    # sets it (a simulation seeds it).
    rng: random.Random | None = None

    def __init__(
        self,
        profile: ResolvedProfile,
        registry: Mapping[str, fw.PluginFactory],
        *,
        pod_binder: fw.PodBinder | None = None,
        clock: Callable[[], float] = time.monotonic,
        objects: ObjectLister | None = None,
        pod_lister: PodLister | None = None,
        nominator: PodNominator | None = None,
        preemption_executor: PreemptionExecutor | None = None,
        claim_writer: ResourceClaimWriter | None = None,
        object_updater: ObjectUpdater | None = None,
        metrics: m.Recorder | None = None,
        generic_workload: bool = False,
        pod_groups: fw.PodGroupManager | None = None,
        activator: Callable[[Sequence[str]], None] | None = None,
        extenders: Sequence[Extender] = (),
    ) -> None:
        self.profile = profile
        self._generic_workload, self._pod_groups, self._activator = (
            generic_workload,
            pod_groups,
            activator,
        )
        self.clock = clock
        # Where the extension points' and (sampled) plugins' durations go; the engine passes
        # its own, shared by its profiles.
        self.metrics = metrics if metrics is not None else m.new_recorder()
        self._profile_name = profile.scheduler_name
        self._pod_binder = pod_binder
        self._objects = objects
        self._pod_lister = pod_lister
        self._nominator = nominator
        self._preemption_executor = preemption_executor
        self._claim_writer = claim_writer
        self._object_updater = object_updater
        self._snapshot: Snapshot | None = None
        # Shared by every profile, in upstream's order: configured order, ignorable ones last.
        # The PodScheduler filters, scores and binds with them; preemption asks them too.
        self._extenders = tuple(extenders)
        self.waiting_pods = WaitingPods()
        self.plugins: dict[str, fw.Plugin] = {}
        self._build_plugins(profile, registry)

        lists = {
            attr: self._point(getattr(profile, attr), kind, label) for attr, kind, label in _POINTS
        }
        self.pre_enqueue: list[fw.PreEnqueuePlugin] = lists["pre_enqueue"]
        queue_sort: list[fw.QueueSortPlugin] = lists["queue_sort"]
        self.pre_filter: list[fw.PreFilterPlugin] = lists["pre_filter"]
        self.post_filter: list[fw.PostFilterPlugin] = lists["post_filter"]
        self.pre_score: list[fw.PreScorePlugin] = lists["pre_score"]
        self.reserve: list[fw.ReservePlugin] = lists["reserve"]
        self.permit: list[fw.PermitPlugin] = lists["permit"]
        self.pre_bind: list[fw.PreBindPlugin] = lists["pre_bind"]
        # Each PreBind plugin's pre-flight check, if it has one: asked once here, as a
        # runtime Protocol check costs tens of microseconds and would run per pod.
        self._pre_flights = [
            (pl, pl.pre_bind_pre_flight if isinstance(pl, fw.PreBindPreFlightPlugin) else None)
            for pl in self.pre_bind
        ]
        self.bind: list[fw.BindPlugin] = lists["bind"]
        self.post_bind: list[fw.PostBindPlugin] = lists["post_bind"]
        self.pod_group_post_filter: list[fw.PodGroupPostFilterPlugin] = lists[
            "pod_group_post_filter"
        ]
        # Filter and Score accept either form; the batch form is preferred at run time.
        self.filter: list[fw.Plugin] = self._either(
            profile.filter, fw.BatchFilterPlugin, fw.FilterPlugin, "FilterPlugin"
        )
        self.score: list[fw.Plugin] = self._either(
            tuple(s.name for s in profile.score), fw.BatchScorePlugin, fw.ScorePlugin, "ScorePlugin"
        )
        self.score_weights: dict[str, int] = {s.name: s.weight or 1 for s in profile.score}
        self.filter_steps = [
            FilterStep(
                p.name,
                p.filter_batch if isinstance(p, fw.BatchFilterPlugin) else None,
                p.filter if isinstance(p, fw.FilterPlugin) else None,
            )
            for p in self.filter
        ]
        self.score_steps = [
            ScoreStep(
                p.name,
                self.score_weights[p.name],
                p.score_batch if isinstance(p, fw.BatchScorePlugin) else None,
                p.score if isinstance(p, fw.ScorePlugin) else None,
                p.normalize_score if isinstance(p, fw.ScoreExtensions) else None,
            )
            for p in self.score
        ]
        _check_score_total(self.score_weights)

        if not queue_sort:
            raise FrameworkError("no queue sort plugin is enabled")
        if len(queue_sort) > 1:
            raise FrameworkError("only one queue sort plugin can be enabled")
        if not self.bind:
            raise FrameworkError("at least one bind plugin is needed")
        self.queue_sort = queue_sort[0]
        self.pre_filter_extensions = [
            (pl.name, ext) for pl in self.pre_filter if (ext := pl.pre_filter_extensions())
        ]

    def _build_plugins(
        self, profile: ResolvedProfile, registry: Mapping[str, fw.PluginFactory]
    ) -> None:
        for name in profile.plugin_names():
            factory = registry.get(name)
            if factory is None:
                continue  # reported with the point it is listed at
            try:
                plugin = factory(_plugin_args(profile, name), self)
            except (TypeError, ValueError, KeyError) as exc:
                raise FrameworkError(f"initializing plugin {name!r}: {exc}") from exc
            if plugin.name != name:
                raise FrameworkError(f"plugin {name!r} calls itself {plugin.name!r}")
            self.plugins[name] = plugin

    # --- metrics ----------------------------------------------------------------------------

    def observe_point(self, point: str, status: Status | None, started: float) -> None:
        """One run of ``point`` since ``started`` (a ``perf_counter`` reading)."""
        self.metrics.observe(
            m.FRAMEWORK_EXTENSION_POINT_DURATION,
            (point, status_label(status), self._profile_name),
            perf_counter() - started,
        )

    def observe_plugin(
        self, plugin: str, point: str, status: Status | None, started: float
    ) -> None:
        """One call of ``plugin`` at ``point`` in a sampled cycle."""
        self.metrics.observe(
            m.PLUGIN_EXECUTION_DURATION,
            (plugin, point, status_label(status)),
            perf_counter() - started,
        )

    def _run_in_order(
        self,
        point: str,
        plugins: Sequence[_N],
        call: Callable[[_N], Status | None],
        *,
        sampled: bool,
        skip_passes: bool = False,
        record: Callable[[str, Status | None], None] | None = None,
    ) -> Status | None:
        """Upstream's plain runner (PreEnqueue, Reserve, PreBind): ``call`` every plugin in
        order and stop at the first that does not succeed, returning :func:`_failure` of its
        status. Skip counts as success only where ``skip_passes`` (PreBind); elsewhere it is an
        error. ``sampled``: each call's duration is recorded; ``record``: told each plugin's
        status (an explained cycle)."""
        for pl in plugins:
            started = perf_counter() if sampled else 0.0
            s = call(pl)
            if sampled:
                self.observe_plugin(pl.name, point, s, started)
            if record is not None:
                record(pl.name, s)
            if s is None or s.is_success or (skip_passes and s.is_skip):
                continue
            return _failure(point, pl.name, s)
        return None

    # --- build helpers ----------------------------------------------------------------------

    @functools.cached_property
    def placement_feasible(self) -> list[fw.PlacementFeasiblePlugin]:
        """Upstream uses GangScheduling, when it is enabled at any point, as the only
        PlacementFeasible plugin, and only with GenericWorkload."""
        gang = self.plugins.get(GANG_SCHEDULING) if self._generic_workload else None
        if gang is None:
            return []
        if not isinstance(gang, fw.PlacementFeasiblePlugin):
            raise FrameworkError(
                "GenericWorkload is enabled, but GangScheduling plugin does not fulfill "
                "PlacementFeasiblePlugin interface"
            )
        return [gang]

    def _lookup(self, name: str, label: str) -> fw.Plugin:
        plugin = self.plugins.get(name)
        if plugin is None:
            raise FrameworkError(f"{label} {name!r} does not exist")
        return plugin

    def _point(self, names: Sequence[str], kind: type[_P], label: str) -> list[_P]:
        out: list[_P] = []
        seen: set[str] = set()
        for name in names:
            plugin = self._lookup(name, label)
            if not isinstance(plugin, kind):
                raise FrameworkError(f"plugin {name!r} does not extend {label} plugin")
            if name in seen:
                raise FrameworkError(f"plugin {name!r} already registered as {label!r}")
            seen.add(name)
            out.append(plugin)
        return out

    def _either(
        self, names: Sequence[str], batch: type[Any], single: type[Any], label: str
    ) -> list[fw.Plugin]:
        out: list[fw.Plugin] = []
        for name in names:
            plugin = self._lookup(name, label)
            if not isinstance(plugin, batch | single):
                raise FrameworkError(f"plugin {name!r} does not extend {label} plugin")
            if plugin in out:
                raise FrameworkError(f"plugin {name!r} already registered as {label!r}")
            out.append(plugin)
        return out

    def close(self) -> None:
        """Tell plugins that wait in the binding cycle (VolumeBinding's PreBind) to stop: the
        engine is stopping. A plugin opts in with a ``close()`` method."""
        for plugin in self.plugins.values():
            close = getattr(plugin, "close", None)
            if callable(close):
                close()

    # --- Handle -----------------------------------------------------------------------------

    @property
    def pod_binder(self) -> fw.PodBinder | None:
        return self._pod_binder

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def iterate_waiting_pods(self) -> Iterator[WaitingPod]:
        return iter(self.waiting_pods)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    @property
    def objects(self) -> ObjectLister | None:
        return self._objects

    @property
    def pod_lister(self) -> PodLister | None:
        return self._pod_lister

    @property
    def nominator(self) -> PodNominator | None:
        return self._nominator

    @property
    def preemption_executor(self) -> PreemptionExecutor | None:
        return self._preemption_executor

    @property
    def claim_writer(self) -> ResourceClaimWriter | None:
        return self._claim_writer

    @property
    def object_updater(self) -> ObjectUpdater | None:
        return self._object_updater

    @property
    def extenders(self) -> tuple[Extender, ...]:
        return self._extenders

    def snapshot(self) -> Snapshot | None:
        return self._snapshot

    @property
    def generic_workload(self) -> bool:
        return self._generic_workload

    @property
    def pod_groups(self) -> fw.PodGroupManager | None:
        return self._pod_groups

    def activate(self, uids: Sequence[str]) -> None:
        if self._activator is not None:
            self._activator(uids)

    def set_snapshot(self, snapshot: Snapshot) -> None:
        """The runtime calls this at the start of each cycle (one cycle at a time)."""
        self._snapshot = snapshot

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        return any(name not in state.skip_filter_plugins for name, _ in self.pre_filter_extensions)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extensions(
            state,
            "AddPod",
            m.PRE_FILTER_EXTENSION_ADD_POD,
            lambda ext: ext.add_pod(state, pod, pod_to_add, node),
        )

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extensions(
            state,
            "RemovePod",
            m.PRE_FILTER_EXTENSION_REMOVE_POD,
            lambda ext: ext.remove_pod(state, pod, pod_to_remove, node),
        )

    def _run_pre_filter_extensions(
        self,
        state: CycleState,
        what: str,
        point: str,
        call: Callable[[fw.PreFilterExtensions], Status | None],
    ) -> Status | None:
        """``call`` the extensions of the PreFilter plugins that did not Skip, in order; any
        status but success (a rejection too) is the error ``running <what> on PreFilter plugin``.
        Upstream records only the plugins' durations here (sampled), not the point's."""
        sampled = state.record_plugin_metrics
        for name, ext in self.pre_filter_extensions:
            if name in state.skip_filter_plugins:
                continue
            started = perf_counter() if sampled else 0.0
            s = call(ext)
            if sampled:
                self.observe_plugin(name, point, s, started)
            if s is not None and not s.is_success:
                return _error(f"running {what} on PreFilter plugin", name, s)
        return None

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status | None:
        return nominated.run_filter_plugins_with_nominated_pods(self, state, pod, node)

    # --- queue-side points ------------------------------------------------------------------

    @property
    def has_score_plugins(self) -> bool:
        return bool(self.score)

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.queue_sort.less(a, b)

    def events_by_plugin(self) -> dict[str, tuple[ClusterEventWithHint, ...]]:
        return {
            name: tuple(cluster_events.with_hint(e) for e in p.events_to_register())
            for name, p in self.plugins.items()
            if isinstance(p, fw.EnqueueExtensions)
        }

    def run_pre_enqueue(self, pod: PodInfo, gating_plugin: str = "") -> Status | None:
        """Upstream's runPreEnqueuePluginsForPod, with its own sampling of the plugins'
        durations: the plugin that gated the pod last runs first, and if it still rejects the
        pod no other runs (a gated pod is asked again on every event its gating plugin
        registered)."""
        started = perf_counter()
        order = self.pre_enqueue
        if gating_plugin:
            first = [pl for pl in order if pl.name == gating_plugin]
            order = [*first, *(pl for pl in order if pl.name != gating_plugin)]
        s = self._run_in_order(
            m.PRE_ENQUEUE, order, lambda pl: pl.pre_enqueue(pod), sampled=sample_plugin_metrics()
        )
        self.observe_point(m.PRE_ENQUEUE, s, started)
        return s

    # --- scheduling cycle -------------------------------------------------------------------

    def run_pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[fw.PreFilterResult | None, Status | None, set[str]]:
        """Upstream ``RunPreFilterPlugins``: (merged result, status, narrowing plugins)."""
        started = perf_counter()
        answer = self._run_pre_filter(state, pod, snapshot)
        self.observe_point(m.PRE_FILTER, answer[1], started)
        return answer

    def _run_pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[fw.PreFilterResult | None, Status | None, set[str]]:
        result: fw.PreFilterResult | None = None
        with_nodes: set[str] = set()
        skipped: set[str] = set()
        returned: Status | None = None
        sampled = state.record_plugin_metrics
        rec = recording(state)
        for pl in self.pre_filter:
            started = perf_counter() if sampled else 0.0
            r, s = pl.pre_filter(state, pod, snapshot)
            if sampled:
                self.observe_plugin(pl.name, m.PRE_FILTER, s, started)
            if rec is not None:
                rec.pre_filter(pl.name, s, None if r is None or r.all_nodes() else r.node_names)
            if s is not None and s.is_skip:
                skipped.add(pl.name)
                continue
            if s is not None and not s.is_success:
                s = s.with_plugin(pl.name)
                if s.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, s, set()
                if s.code is Code.UNSCHEDULABLE:
                    returned = s  # keep running: preemption needs every PreFilter's state
                    continue
                return None, _error("running PreFilter plugin", pl.name, s), set()
            if r is not None and not r.all_nodes():
                with_nodes.add(pl.name)
            result = r if result is None else result.merge(r)
            if result is not None and result.node_names is not None and not result.node_names:
                names = sorted(with_nodes)
                if len(names) == 1:
                    msg = f"node(s) didn't satisfy plugin {names[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                return result, Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), with_nodes
        state.skip_filter_plugins = frozenset(skipped)
        return result, returned, with_nodes

    def run_post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[fw.PostFilterResult | None, Status]:
        started = perf_counter()
        answer = self._run_post_filter(state, pod, statuses)
        self.observe_point(m.POST_FILTER, answer[1], started)
        return answer

    def _run_post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[fw.PostFilterResult | None, Status]:
        result: fw.PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        sampled = state.record_plugin_metrics
        rec = recording(state)
        for pl in self.post_filter:
            started = perf_counter() if sampled else 0.0
            r, s = pl.post_filter(state, pod, statuses)
            if sampled:
                self.observe_plugin(pl.name, m.POST_FILTER, s, started)
            if rec is not None:
                rec.post_filter(pl.name, s, None if r is None else r.nominated_node_name)
            if s is None:
                return r, Status(Code.SUCCESS, plugin=pl.name)
            if s.is_success:  # its message goes into the FitError, as upstream's
                return r, s.with_plugin(pl.name)
            if s.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, s.with_plugin(pl.name)
            if not s.is_rejected:
                # Upstream returns the plugin's error as it is (AsStatus(s.AsError())): its
                # message alone becomes the FailedScheduling text's PostFilter part.
                return None, Status.error(s.message).with_plugin(pl.name)
            reasons.extend(s.reasons)
            rejector = rejector or pl.name
            if r is not None:
                result = r
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    def run_pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: fw.Slots
    ) -> Status | None:
        started = perf_counter()
        s = self._run_pre_score(state, pod, snapshot, slots)
        self.observe_point(m.PRE_SCORE, s, started)
        return s

    def _run_pre_score(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: fw.Slots
    ) -> Status | None:
        skipped: set[str] = set()
        sampled = state.record_plugin_metrics
        rec = recording(state)
        for pl in self.pre_score:
            started = perf_counter() if sampled else 0.0
            s = pl.pre_score(state, pod, snapshot, slots)
            if sampled:
                self.observe_plugin(pl.name, m.PRE_SCORE, s, started)
            if rec is not None:
                rec.pre_score(pl.name, s)
            if s is None or s.is_success:
                continue
            if s.is_skip:
                skipped.add(pl.name)
                continue
            return _error("running PreScore plugin", pl.name, s)
        state.skip_score_plugins = frozenset(skipped)
        return None

    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """The first failing plugin's status; on a failure the scheduling cycle then runs
        :meth:`run_unreserve` (every Reserve plugin, in reverse order)."""
        started = perf_counter()
        rec = recording(state)
        s = self._run_in_order(
            m.RESERVE,
            self.reserve,
            lambda pl: pl.reserve(state, pod, node_name),
            sampled=state.record_plugin_metrics,
            record=None if rec is None else rec.reserve,
        )
        self.observe_point(m.RESERVE, s, started)
        return s

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Reserve plugins in reverse order, as upstream."""
        started = perf_counter()
        sampled = state.record_plugin_metrics
        for pl in reversed(self.reserve):
            begun = perf_counter() if sampled else 0.0
            pl.unreserve(state, pod, node_name)
            if sampled:
                self.observe_plugin(pl.name, m.UNRESERVE, None, begun)
        self.observe_point(m.UNRESERVE, None, started)

    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Success, a rejection, an error, or Wait (the pod is then in ``waiting_pods``)."""
        started = perf_counter()
        s = self._run_permit(state, pod, node_name)
        self.observe_point(m.PERMIT, s, started)
        return s

    def _run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        timeouts: dict[str, float] = {}
        sampled = state.record_plugin_metrics
        rec = recording(state)
        for pl in self.permit:
            begun = perf_counter() if sampled else 0.0
            s, timeout = pl.permit(state, pod, node_name)
            if sampled:
                self.observe_plugin(pl.name, m.PERMIT, s, begun)
            if rec is not None:
                rec.permit(pl.name, s, timeout)
            if s is None or s.is_success:
                continue
            if s.is_wait:
                timeouts[pl.name] = min(timeout, MAX_PERMIT_TIMEOUT)
                continue
            return _failure("Permit", pl.name, s)
        if timeouts:
            self.waiting_pods.add(WaitingPod(pod, timeouts, self.clock))
            msg = f"one or more plugins asked to wait and no plugin rejected pod {pod.name!r}"
            return Status.of(Code.WAIT, msg)
        return None

    # --- binding cycle ----------------------------------------------------------------------

    def wait_on_permit(self, pod: PodInfo) -> Status | None:
        wp = self.waiting_pods.get(pod.uid)
        if wp is None:
            return None
        try:
            s = wp.wait()
        finally:
            self.waiting_pods.remove(pod.uid)
        if s is None or s.is_success or s.is_rejected:
            return s
        return Status.error(f"waiting on permit for pod: {s.message}").with_plugin(s.plugin)

    def will_wait_on_permit(self, pod: PodInfo) -> bool:
        return self.waiting_pods.get(pod.uid) is not None

    def run_pre_bind_pre_flights(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> Status | None:
        """Upstream's RunPreBindPreFlights: ``None`` (Success) when at least one PreBind plugin
        will act, Skip when none will, or the first error. Records in ``state`` the plugins that
        will not act, so that PreBind passes them by."""
        started = perf_counter()
        s = self._run_pre_bind_pre_flights(state, pod, node_name)
        self.observe_point(m.PRE_BIND_PRE_FLIGHT, s, started)
        return s

    def _run_pre_bind_pre_flights(
        self, state: CycleState, pod: PodInfo, node_name: str
    ) -> Status | None:
        answer: Status | None = Status(Code.SKIP)
        skipped: set[str] = set()
        sampled = state.record_plugin_metrics
        for pl, pre_flight in self._pre_flights:
            begun = perf_counter() if sampled else 0.0
            s = None if pre_flight is None else pre_flight(state, pod, node_name)
            if sampled and pre_flight is not None:
                self.observe_plugin(pl.name, m.PRE_BIND_PRE_FLIGHT, s, begun)
            if s is None or s.is_success:
                answer = None
            elif s.is_skip:
                skipped.add(pl.name)
            elif s.code == Code.ERROR:
                return _error("running PreBindPreFlight", pl.name, s)
            else:
                return Status.error(
                    f'PreBindPreFlight {pl.name} returned "{s.code.label}", which is '
                    "unsupported. It is supposed to return Success, Skip, or Error status"
                ).with_plugin(pl.name)
        state.skip_pre_bind_plugins = frozenset(skipped)
        return answer

    def run_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        started = perf_counter()
        skipped = state.skip_pre_bind_plugins
        s = self._run_in_order(
            m.PRE_BIND,
            [pl for pl in self.pre_bind if pl.name not in skipped],
            lambda pl: pl.pre_bind(state, pod, node_name),
            sampled=state.record_plugin_metrics,
            skip_passes=True,
        )
        self.observe_point(m.PRE_BIND, s, started)
        return s

    def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """The first binder that does not Skip decides; Skip from every binder is returned."""
        started = perf_counter()
        s = self._run_bind(state, pod, node_name)
        self.observe_point(m.BIND, s, started)
        return s

    def _run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: Status | None = Status(Code.SKIP)
        sampled = state.record_plugin_metrics
        for pl in self.bind:
            begun = perf_counter() if sampled else 0.0
            s = pl.bind(state, pod, node_name)
            if sampled:
                self.observe_plugin(pl.name, m.BIND, s, begun)
            if s is not None and s.is_skip:
                continue
            if s is None or s.is_success:
                return None
            return _failure("Bind", pl.name, s)
        return s

    def run_post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        started = perf_counter()
        sampled = state.record_plugin_metrics
        for pl in self.post_bind:
            begun = perf_counter() if sampled else 0.0
            pl.post_bind(state, pod, node_name)
            if sampled:
                self.observe_plugin(pl.name, m.POST_BIND, None, begun)
        self.observe_point(m.POST_BIND, None, started)

    # --- pod-group cycle ----------------------------------------------------------------------

    def run_pod_group_post_filter(
        self,
        group: PodGroupRecord,
        members: Sequence[PodInfo],
        snapshot: fw.MutableSnapshot,
        schedule: fw.PodGroupSchedulingFunc,
        states: Mapping[str, CycleState],
    ) -> tuple[Mapping[str, str], Status | None]:
        """Upstream RunPodGroupPostFilterPlugins: the first success or UnschedulableAndUnresolvable
        decides; Unschedulable reasons are gathered; anything else is an error."""
        reasons: list[str] = []
        rejector = ""
        for pl in self.pod_group_post_filter:
            nominations, s = pl.pod_group_post_filter(group, members, snapshot, schedule, states)
            if s is None or s.is_success:
                return dict(nominations or {}), s
            if s.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return dict(nominations or {}), s.with_plugin(pl.name)
            if s.code is Code.UNSCHEDULABLE:
                reasons.extend(s.reasons)
                rejector = rejector or pl.name
                continue
            return {}, Status.error(
                f'error in "{pl.name}" PodGroupPostFilter plugins: {s.message}'
            ).with_plugin(pl.name)
        return {}, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    def run_placement_feasible(
        self, group: PodGroupRecord, remaining: int, scheduled: int
    ) -> Status | None:
        """Upstream RunPlacementFeasiblePlugins: Success (None) when every plugin succeeds;
        the first Unschedulable; else the last Wait; anything else is an Error."""
        result: Status | None = None
        for pl in self.placement_feasible:
            s = pl.placement_feasible(group, remaining, scheduled)
            if s is None or s.is_success:
                continue
            if s.is_wait:
                result = s.with_plugin(pl.name)
                continue
            if s.code is Code.UNSCHEDULABLE:
                return s.with_plugin(pl.name)
            if s.code is Code.ERROR:
                return Status.error(f"running PlacementFeasible plugin: {s.message}").with_plugin(
                    pl.name
                )
            return Status.error(
                f"unexpected status from PlacementFeasible plugin: {s.code.label}"
            ).with_plugin(pl.name)
        return result


def _check_score_total(weights: Mapping[str, int]) -> None:
    """Upstream's overflow check: the weighted maximum scores must sum within MaxTotalScore."""
    total = 0
    for name, weight in weights.items():
        if total > fw.MAX_TOTAL_SCORE - weight * fw.MAX_NODE_SCORE:
            raise FrameworkError(f"total score of Score plugins could overflow at {name!r}")
        total += weight * fw.MAX_NODE_SCORE
