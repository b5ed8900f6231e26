"""The SchedulerProfile (``corral.dev/v1alpha1``) as dataclasses.

Contract: the shape mirrors the CRD in ``crds/``; JSON keys are the camelCase of the field names.
``plugins``, ``pluginConfig`` and ``extenders`` reuse the KubeSchedulerConfiguration v1 types, so
anything valid there is valid here. ``None`` means "not set"; :mod:`corral.api.defaults` fills
the defaults in.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from corral.scheduler import config as cfg

GROUP: Final = "corral.dev"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
KIND: Final = "SchedulerProfile"
PLURAL: Final = "schedulerprofiles"

LogLevel = Literal["Normal", "Debug", "Trace"]
_OMIT: Final = {"omitempty": True}


@dataclass(slots=True)
class LeaderElectionSpec:
    leader_elect: bool | None = None
    lease_duration: str | None = field(default=None, metadata={"duration": True})
    renew_deadline: str | None = field(default=None, metadata={"duration": True})
    retry_period: str | None = field(default=None, metadata={"duration": True})
    resource_name: str | None = None


@dataclass(slots=True)
class LabelSelectorRequirement:
    key: str
    operator: str
    values: list[str] = field(default_factory=list, metadata=_OMIT)


@dataclass(slots=True)
class LabelSelector:
    match_labels: dict[str, str] = field(default_factory=dict, metadata=_OMIT)
    match_expressions: list[LabelSelectorRequirement] = field(default_factory=list, metadata=_OMIT)


@dataclass(slots=True)
class Tenancy:
    namespaces: list[str] = field(default_factory=list, metadata=_OMIT)
    namespace_selector: LabelSelector | None = None
    node_selector: dict[str, str] = field(default_factory=dict, metadata=_OMIT)
    # The operator's pod webhook gives pods created in the tenant's namespaces this scheduler
    # (corral.controller.pod_admission); None: off.
    assign_pods: bool | None = None


@dataclass(slots=True)
class ResourceRequirements:
    # Quantities: strings ("100m", "64Mi") or numbers, as in Kubernetes.
    requests: dict[str, Any] = field(default_factory=dict, metadata=_OMIT)
    limits: dict[str, Any] = field(default_factory=dict, metadata=_OMIT)


@dataclass(slots=True)
class Toleration:
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = field(default=None, metadata={"bits": 64})


@dataclass(slots=True)
class LocalObjectReference:
    name: str


@dataclass(slots=True)
class ProfileExtender(cfg.Extender):
    """An extender as in KubeSchedulerConfiguration, plus where its TLS material lives:
    ``tlsSecretRef`` names a Secret in the profile's namespace (``tls.crt``, ``tls.key``,
    ``ca.crt``, as cert-manager writes them) mounted into the scheduler pods; the rendered
    config points ``tlsConfig`` at the mounted files, so no key is ever in the ConfigMap."""

    tls_secret_ref: LocalObjectReference | None = None

    def engine_extender(self) -> cfg.Extender:
        """The KubeSchedulerConfiguration extender (without ``tlsSecretRef``)."""
        base = {f.name: getattr(self, f.name) for f in dataclasses.fields(cfg.Extender)}
        return cfg.Extender(**base)


@dataclass(slots=True)
class DeploymentSpec:
    resources: ResourceRequirements | None = None
    node_selector: dict[str, str] = field(default_factory=dict, metadata=_OMIT)
    tolerations: list[Toleration] = field(default_factory=list, metadata=_OMIT)
    priority_class_name: str | None = None
    image_pull_policy: str | None = None
    image_pull_secrets: list[LocalObjectReference] = field(default_factory=list, metadata=_OMIT)
    pod_annotations: dict[str, str] = field(default_factory=dict, metadata=_OMIT)


@dataclass(slots=True)
class ShadowSpec:
    """Run as a shadow of a live scheduler: decide the pods naming ``schedulerName`` as this
    profile would, compare with where the live scheduler bound them (``status.shadow``), and
    never write to them."""

    scheduler_name: str


@dataclass(slots=True)
class SchedulerProfileSpec:
    scheduler_name: str | None = None
    namespace: str | None = None
    replicas: int | None = None
    image: str | None = None
    log_level: LogLevel | None = None
    # kube-scheduler's --feature-gates for this scheduler (upstream's gate names and table).
    feature_gates: dict[str, bool] = field(default_factory=dict, metadata=_OMIT)
    leader_election: LeaderElectionSpec | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = field(default=None, metadata={"bits": 64})
    pod_max_backoff_seconds: int | None = field(default=None, metadata={"bits": 64})
    plugins: cfg.Plugins | None = None
    plugin_config: list[cfg.PluginConfig] = field(default_factory=list, metadata=_OMIT)
    extenders: list[ProfileExtender] = field(default_factory=list, metadata=_OMIT)
    tenancy: Tenancy | None = None
    deployment: DeploymentSpec | None = None
    shadow: ShadowSpec | None = None


@dataclass(slots=True)
class ObjectMeta:
    name: str
    uid: str | None = None
    labels: dict[str, str] = field(default_factory=dict, metadata=_OMIT)
    annotations: dict[str, str] = field(default_factory=dict, metadata=_OMIT)


@dataclass(slots=True)
class SchedulerProfile:
    metadata: ObjectMeta
    spec: SchedulerProfileSpec = field(default_factory=SchedulerProfileSpec)
    api_version: str = API_VERSION
    kind: str = KIND

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def gates(self) -> cfg.FeatureGates:
        """The feature gates its engine runs with."""
        return cfg.FeatureGates(dict(self.spec.feature_gates))
