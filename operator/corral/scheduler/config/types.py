"""KubeSchedulerConfiguration v1 (``kubescheduler.config.k8s.io/v1``) as dataclasses.

Field names follow the upstream Go types (``staging/src/k8s.io/kube-scheduler/config/v1``);
JSON keys are the camelCase forms. ``None`` means "not set" so defaulting can tell an explicit
zero from an absent value, as upstream's pointer fields do. Plugin args stay raw JSON here;
:mod:`corral.scheduler.config.args` turns them into typed values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
KIND: Final = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"

# Extension points in upstream's order (framework.getExtensionPoints), as JSON keys.
EXTENSION_POINTS: Final = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
    # Pod-group (workload) scheduling points, v1 since 1.36 (podGroupPostFilter 1.37): upstream
    # runs them only with the GenericWorkload gate, off by default; Corral accepts, validates
    # and expands them but runs no pod-group cycle (docs/schedulerprofile.md).
    "placementGenerate",
    "placementScore",
    "podGroupPostFilter",
)
MULTI_POINT: Final = "multiPoint"
ALL_PLUGINS: Final = "*"

_OMIT: Final = {"omitempty": True}


@dataclass(slots=True)
class Plugin:
    name: str
    weight: int | None = None


@dataclass(slots=True)
class PluginSet:
    enabled: list[Plugin] = field(default_factory=list, metadata=_OMIT)
    disabled: list[Plugin] = field(default_factory=list, metadata=_OMIT)


@dataclass(slots=True)
class Plugins:
    pre_enqueue: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    queue_sort: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    pre_filter: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    filter: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    post_filter: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    pre_score: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    score: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    reserve: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    permit: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    pre_bind: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    bind: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    post_bind: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    multi_point: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    placement_generate: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    placement_score: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)
    pod_group_post_filter: PluginSet = field(default_factory=PluginSet, metadata=_OMIT)

    def point(self, name: str) -> PluginSet:
        """The set for an extension point named by its JSON key (``"filter"``, ``"multiPoint"``)."""
        attr = _ATTR_BY_POINT[name]
        value: PluginSet = getattr(self, attr)
        return value

    def set_point(self, name: str, value: PluginSet) -> None:
        setattr(self, _ATTR_BY_POINT[name], value)


_ATTR_BY_POINT: Final = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "queue_sort",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    "multiPoint": "multi_point",
    "placementGenerate": "placement_generate",
    "placementScore": "placement_score",
    "podGroupPostFilter": "pod_group_post_filter",
}


@dataclass(slots=True)
class PluginConfig:
    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class KubeSchedulerProfile:
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = field(default_factory=list, metadata=_OMIT)


@dataclass(slots=True)
class LeaderElectionConfiguration:
    leader_elect: bool | None = None
    lease_duration: str | None = field(default=None, metadata={"duration": True})
    renew_deadline: str | None = field(default=None, metadata={"duration": True})
    retry_period: str | None = field(default=None, metadata={"duration": True})
    resource_lock: str | None = None
    resource_name: str | None = None
    resource_namespace: str | None = None


@dataclass(slots=True)
class ClientConnectionConfiguration:
    kubeconfig: str | None = None
    accept_content_types: str | None = None
    content_type: str | None = None
    qps: float | None = field(default=None, metadata={"json": "qps", "bits": 32})
    burst: int | None = None


@dataclass(slots=True)
class ExtenderTLSConfig:
    insecure: bool | None = None
    server_name: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    ca_file: str | None = None
    cert_data: str | None = None
    key_data: str | None = None
    ca_data: str | None = None


@dataclass(slots=True)
class ExtenderManagedResource:
    name: str
    ignored_by_scheduler: bool | None = None


@dataclass(slots=True)
class Extender:
    # Not required upstream (an empty prefix is accepted; its calls fail at run time).
    url_prefix: str = ""
    filter_verb: str | None = None
    preempt_verb: str | None = None
    prioritize_verb: str | None = None
    weight: int | None = field(default=None, metadata={"bits": 64})
    bind_verb: str | None = None
    enable_https: bool | None = field(default=None, metadata={"json": "enableHTTPS"})
    tls_config: ExtenderTLSConfig | None = field(default=None, metadata={"json": "tlsConfig"})
    http_timeout: str | None = field(
        default=None, metadata={"json": "httpTimeout", "duration": True}
    )
    node_cache_capable: bool | None = None
    managed_resources: list[ExtenderManagedResource] = field(default_factory=list, metadata=_OMIT)
    ignorable: bool | None = None


@dataclass(slots=True)
class KubeSchedulerConfiguration:
    api_version: str = API_VERSION
    kind: str = KIND
    parallelism: int | None = None
    leader_election: LeaderElectionConfiguration = field(
        default_factory=LeaderElectionConfiguration, metadata=_OMIT
    )
    client_connection: ClientConnectionConfiguration = field(
        default_factory=ClientConnectionConfiguration, metadata=_OMIT
    )
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = field(default=None, metadata={"bits": 64})
    pod_max_backoff_seconds: int | None = field(default=None, metadata={"bits": 64})
    profiles: list[KubeSchedulerProfile] = field(default_factory=list, metadata=_OMIT)
    extenders: list[Extender] = field(default_factory=list, metadata=_OMIT)
    delay_cache_until_active: bool | None = None
