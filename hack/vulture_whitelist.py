"""Names vulture (``make lint``'s dead-code check) cannot see used, each with the reason. A name
nothing uses is deleted, not listed here."""

# ruff: noqa: B018, F821
# mypy: ignore-errors

# Called by their framework, not by Corral: asyncio Protocol callbacks, kopf handlers and
# settings, the Kubernetes client's configuration attributes.
_.connection_made  # asyncio.Protocol (k8s/aio_transport.py)
_.data_received
_.eof_received
_.connection_lost
on_profile  # kopf handlers registered by decorator (controller/handlers.py)
admit
_.converter  # kopf settings (cli/scheduler.py)
_.api_key  # kubernetes.client.Configuration (k8s/client.py)
_.api_key_prefix

# Protocol members and their implementations (the framework's Handle and WaitingPod).
_.allow
_.iterate_waiting_pods
_.reject_waiting_pod

# API fields: KubeSchedulerConfiguration and args types mirror upstream's, read by decoding
# and dumping (dataclasses.fields), not by name; likewise the fields of JSON records.
match_label_keys
placement_generate
placement_score
pod_group_post_filter
accept_content_types
delay_cache_until_active
cluster_rules  # render/rbac.py RbacPlan, dumped into templates
invalid_reason  # dynamic_resources/pools.py, upstream's pool validity
binding_finished  # backend/cache.py, as upstream's cache podState.bindingFinished
links  # corral_dev/hoststate.py HostState, compared by dataclasses.fields
addresses
throughput_series  # bench/driver.py results, written with dataclasses.asdict
created_series
scheduler_cpu_total_s
apiserver_cpu_s
setup_s
ready_s
_.opened  # connection counters, read by tests and benchmarks
_.hits  # the DRA search memo's counters (dynamic_resources/allocator.py), read in tests
_.misses

# Public API used by tests, plugin authors and the development harness's users.
pod_info  # corral.testing.builders
node_record
snapshot_of
service_account_client  # corral.testing.pytest_plugin fixture
csi_storage  # corral_dev.pytest_plugin fixture
_.compact_etcd  # LocalCluster
_.node_infos  # framework/snapshot.py Snapshot, every node's NodeInfo (plugin tests)
_.update_node  # backend/cache.py, the informer's update (tests call it; add_node does both)
decode_object  # k8s/protobuf_objects.py, the decoder's entry point (tests, fuzz)
code_of  # framework/status.py, upstream's Code() of a nil Status
UNSCHEDULABLE_TIMEOUT  # framework/cluster_events.py, upstream's event of that name
ensure_helm  # corral_dev.builds, the chart tests
TestDriver  # corral_dev.dra, the DRA e2e tests
gpus
_.register_nodes  # corral_dev.storage.CsiStorage
pin_self  # bench/pinning.py (bench: benchdocs' scope)
