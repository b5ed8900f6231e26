"""Every metric the engine exports, declared once (upstream ``pkg/scheduler/metrics``).

Names, labels, help and buckets are kube-scheduler v1.37's (``metrics.go``) and client-go's
(``component-base/metrics/prometheus/restclient``), so its dashboards, alerts and SLOs work on
Corral unchanged; ``corral_*`` metrics are Corral's own. To add one: declare it here, add it
to :data:`DECLARED`, and record it through the engine's :class:`Recorder`
(``recorder.inc/observe/set``, or ``gauge_source`` for a value computed when scraped).

Where Corral differs from upstream, by design:

- ``scheduler_plugin_execution_duration_seconds`` is sampled as upstream (10% of scheduling
  cycles, :data:`PLUGIN_METRICS_SAMPLE_PERCENT`), but a batch Filter or Score plugin is one
  call per cycle over every node, so it is observed once per cycle, not once per node;
- ``rest_client_*`` carry client-go's labels; ``host`` is the API server's ``host:port``.

This package imports nothing of Corral: the framework runtime, the queue and the engine all
record into it (as upstream's framework, queue and scheduler do).
"""

from __future__ import annotations

from typing import Final

from corral.scheduler.metrics.recorder import Labels, Metric, Recorder, exponential_buckets

# Upstream's pluginMetricsSamplePercent (schedule_one.go).
PLUGIN_METRICS_SAMPLE_PERCENT: Final = 10

# --- the scheduling cycle --------------------------------------------------------------------

SCHEDULE_ATTEMPTS: Final = Metric(
    "scheduler_schedule_attempts_total",
    "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
    "not be scheduled, while 'error' means an internal scheduler problem.",
    "counter",
    ("result", "profile"),
)
SCHEDULING_ATTEMPT_DURATION: Final = Metric(
    "scheduler_scheduling_attempt_duration_seconds",
    "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
    "histogram",
    ("result", "profile"),
    exponential_buckets(0.001, 2, 15),
)
SCHEDULING_ALGORITHM_DURATION: Final = Metric(
    "scheduler_scheduling_algorithm_duration_seconds",
    "Scheduling algorithm latency in seconds",
    "histogram",
    (),
    exponential_buckets(0.001, 2, 15),
)
POD_SCHEDULING_SLI_DURATION: Final = Metric(
    "scheduler_pod_scheduling_sli_duration_seconds",
    "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue "
    "and might involve multiple scheduling attempts.",
    "histogram",
    ("attempts",),
    exponential_buckets(0.01, 2, 20),
)
POD_SCHEDULING_ATTEMPTS: Final = Metric(
    "scheduler_pod_scheduling_attempts",
    "Number of attempts to successfully schedule a pod.",
    "histogram",
    (),
    exponential_buckets(1, 2, 5),
)
FRAMEWORK_EXTENSION_POINT_DURATION: Final = Metric(
    "scheduler_framework_extension_point_duration_seconds",
    "Latency for running all plugins of a specific extension point.",
    "histogram",
    ("extension_point", "status", "profile"),
    exponential_buckets(0.0001, 2, 12),
)
PLUGIN_EXECUTION_DURATION: Final = Metric(
    "scheduler_plugin_execution_duration_seconds",
    "Duration for running a plugin at a specific extension point.",
    "histogram",
    ("plugin", "extension_point", "status"),
    exponential_buckets(0.00001, 1.5, 20),
)
PREEMPTION_ATTEMPTS: Final = Metric(
    "scheduler_preemption_attempts_total",
    "Total preemption attempts in the cluster till now",
    "counter",
)
PREEMPTION_VICTIMS: Final = Metric(
    "scheduler_preemption_victims",
    "Number of selected preemption victims for preemption initiated by a single pod",
    "histogram",
    (),
    exponential_buckets(1, 2, 7),
)

# --- the queue -------------------------------------------------------------------------------

PENDING_PODS: Final = Metric(
    "scheduler_pending_pods",
    # Upstream's words, including the pod-group queues ('incomplete', 'pending') Corral has not.
    "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
    "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
    "unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the "
    "number of unschedulable pods that the scheduler never attempted to schedule because they "
    "are gated; 'incomplete' means number of pods in incompletePodGroupPods; 'pending' means "
    "number of pods in pendingPodGroupPods.",
    "gauge",
    ("queue",),
)
UNSCHEDULABLE_PODS: Final = Metric(
    "scheduler_unschedulable_pods",
    "The number of unschedulable pods broken down by plugin name. A pod will increment the "
    "gauge for all plugins that caused it to not schedule and so this metric have meaning only "
    "when broken down by plugin.",
    "gauge",
    ("plugin", "profile"),
)
QUEUE_INCOMING_PODS: Final = Metric(
    "scheduler_queue_incoming_pods_total",
    "Number of pods added to scheduling queues by event and queue type.",
    "counter",
    ("queue", "event"),
)
QUEUE_INCOMING_ENTITIES: Final = Metric(
    "scheduler_queue_incoming_entities_total",
    "Number of scheduling entities added to scheduling queues by event, queue type, and entity "
    "type. Entity types are either 'pod' (for individual pods that are not members of any "
    "podgroup) or 'podgroup'.",
    "counter",
    ("queue", "event", "type"),
)
QUEUED_ENTITIES: Final = Metric(
    "scheduler_queued_entities",
    "Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' stands for individual pods "
    "that are not members of any podgroup) by the queue type. 'active' means number of entities "
    "in activeQ; 'backoff' means number of entities in backoffQ; 'unschedulable' means number of "
    "entities in unschedulableEntities that the scheduler attempted to schedule and failed; "
    "'gated' is the number of unschedulable entities that the scheduler never attempted to "
    "schedule because they are gated.",
    "gauge",
    ("queue", "type"),
)

# --- the API client (client-go's names) -------------------------------------------------------

_REST_LATENCY_BUCKETS: Final = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
REST_CLIENT_REQUESTS: Final = Metric(
    "rest_client_requests_total",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    "counter",
    ("code", "method", "host"),
)
REST_CLIENT_REQUEST_DURATION: Final = Metric(
    "rest_client_request_duration_seconds",
    "Request latency in seconds. Broken down by verb, and host.",
    "histogram",
    ("verb", "host"),
    _REST_LATENCY_BUCKETS,
)
# Observed for every request the client-side rate limiter passes (component-base
# metrics/prometheus/restclient, client-go's tryThrottle): the wait for its token.
REST_CLIENT_RATE_LIMITER_DURATION: Final = Metric(
    "rest_client_rate_limiter_duration_seconds",
    "Client side rate limiter latency in seconds. Broken down by verb, and host.",
    "histogram",
    ("verb", "host"),
    _REST_LATENCY_BUCKETS,
)

# --- leader election and Corral's own ---------------------------------------------------------

LEADER: Final = Metric(
    "leader_election_master_status",
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
    "indicates master. 'name' is the string used to identify the lease.",
    "gauge",
    ("name",),
)
EVENTS_DROPPED: Final = Metric(
    "corral_scheduler_events_dropped",
    "Events not recorded because the recorder's queue was full.",
    "gauge",
)
# A shadow profile's decisions against the live scheduler's (engine/shadow/compare.py names
# the outcomes); those made while other pods were in flight are also counted in the second.
SHADOW_DECISIONS: Final = Metric(
    "corral_shadow_decisions_total",
    "Decisions of a shadow profile compared with the live scheduler's, by outcome: agreed, "
    "tie, disagreed, live_unschedulable, shadow_unschedulable.",
    "counter",
    ("outcome",),
)
SHADOW_BURST_DECISIONS: Final = Metric(
    "corral_shadow_burst_decisions_total",
    "The shadow decisions of corral_shadow_decisions_total made while other pods of the live "
    "scheduler were in flight (the cluster it judged on may differ from the live one's).",
    "counter",
    ("outcome",),
)

# --- pod groups (GenericWorkload; registered only with the gate, as upstream's) -------------

PODGROUP_SCHEDULE_ATTEMPTS: Final = Metric(
    "scheduler_podgroup_schedule_attempts_total",
    "Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod "
    "group could not be scheduled, while 'error' means an internal scheduler problem.",
    "counter",
    ("result", "profile"),
)
PODGROUP_SCHEDULING_ATTEMPT_DURATION: Final = Metric(
    "scheduler_podgroup_scheduling_attempt_duration_seconds",
    "Pod group scheduling attempt latency in seconds",
    "histogram",
    ("result", "profile"),
    exponential_buckets(0.001, 2, 15),
)
PODGROUP_SCHEDULING_ALGORITHM_DURATION: Final = Metric(
    "scheduler_podgroup_scheduling_algorithm_duration_seconds",
    "Pod group scheduling algorithm latency in seconds",
    "histogram",
    (),
    exponential_buckets(0.001, 2, 15),
)
GENERIC_WORKLOAD: Final[tuple[Metric, ...]] = (
    PODGROUP_SCHEDULE_ATTEMPTS,
    PODGROUP_SCHEDULING_ATTEMPT_DURATION,
    PODGROUP_SCHEDULING_ALGORITHM_DURATION,
)

DECLARED: Final[tuple[Metric, ...]] = (
    SCHEDULE_ATTEMPTS,
    SCHEDULING_ATTEMPT_DURATION,
    SCHEDULING_ALGORITHM_DURATION,
    POD_SCHEDULING_SLI_DURATION,
    POD_SCHEDULING_ATTEMPTS,
    FRAMEWORK_EXTENSION_POINT_DURATION,
    PLUGIN_EXECUTION_DURATION,
    PREEMPTION_ATTEMPTS,
    PREEMPTION_VICTIMS,
    PENDING_PODS,
    UNSCHEDULABLE_PODS,
    QUEUE_INCOMING_PODS,
    QUEUE_INCOMING_ENTITIES,
    QUEUED_ENTITIES,
    REST_CLIENT_REQUESTS,
    REST_CLIENT_REQUEST_DURATION,
    REST_CLIENT_RATE_LIMITER_DURATION,
    LEADER,
    EVENTS_DROPPED,
    SHADOW_DECISIONS,
    SHADOW_BURST_DECISIONS,
)


def new_recorder(*, generic_workload: bool = False) -> Recorder:
    """A recorder of every declared metric (one per engine); with GenericWorkload also the
    pod groups' (:data:`GENERIC_WORKLOAD`)."""
    return Recorder(DECLARED + GENERIC_WORKLOAD if generic_workload else DECLARED)


def attempts_label(attempts: int) -> str:
    """Upstream's getAttemptsLabel: the SLI's ``attempts``, capped at ``15+``."""
    return "15+" if attempts >= 15 else str(attempts)


# Upstream's extension point labels (metrics.go), the ones Corral's runtime has.
PRE_ENQUEUE: Final = "PreEnqueue"
PRE_FILTER: Final = "PreFilter"
FILTER: Final = "Filter"
PRE_FILTER_EXTENSION_ADD_POD: Final = "PreFilterExtensionAddPod"
PRE_FILTER_EXTENSION_REMOVE_POD: Final = "PreFilterExtensionRemovePod"
POST_FILTER: Final = "PostFilter"
PRE_SCORE: Final = "PreScore"
SCORE: Final = "Score"
SCORE_EXTENSION_NORMALIZE: Final = "ScoreExtensionNormalize"
PRE_BIND_PRE_FLIGHT: Final = "PreBindPreFlight"
PRE_BIND: Final = "PreBind"
BIND: Final = "Bind"
POST_BIND: Final = "PostBind"
RESERVE: Final = "Reserve"
UNRESERVE: Final = "Unreserve"
PERMIT: Final = "Permit"

__all__ = [
    "DECLARED",
    "PLUGIN_METRICS_SAMPLE_PERCENT",
    "Labels",
    "Metric",
    "Recorder",
    "attempts_label",
    "exponential_buckets",
    "new_recorder",
]
