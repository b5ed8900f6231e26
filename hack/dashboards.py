"""Generate Corral's Grafana dashboards (config/prometheus/dashboards/*.json) with Grafana's
own typed builders (grafana-foundation-sdk), so their JSON follows Grafana's dashboard schema.

    .venv/bin/python hack/dashboards.py            # rewrite the JSON files
    .venv/bin/python hack/dashboards.py --check    # exit 1 if a committed file is stale

``Corral / Scheduler`` is one profile's view (pick it in ``$schedulerprofile``): the panels of
kube-scheduler's dashboards (kubernetes-mixin: up, scheduling rate and latency, API requests
and their latency, memory, CPU) on upstream's metric names, the scheduling SLI, extension
points and plugins, the queue, and Corral's own (the scheduling thread's phases, dropped
Events). ``Corral / Operator`` is the operator's. Queries read the jobs the ServiceMonitors
make (config/prometheus/monitors.yaml).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.builders import common, dashboard, prometheus, stat, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DataSourceRef

OUT = Path(__file__).resolve().parents[1] / "config" / "prometheus" / "dashboards"
DS = DataSourceRef(type_val="prometheus", uid="${datasource}")
ENGINE = 'job="corral-scheduler", schedulerprofile=~"$schedulerprofile"'
OPERATOR = 'job="corral-operator"'
WINDOW = "$__rate_interval"


def query(expr: str, legend: str = "", ref: str = "A") -> prometheus.Dataquery:
    q = prometheus.Dataquery().expr(expr).ref_id(ref)
    return q.legend_format(legend) if legend else q


def series(title: str, unit: str, *queries: tuple[str, str], width: int = 12) -> Any:
    legend = common.VizLegendOptions().display_mode("list").placement("bottom").show_legend(True)
    tooltip = common.VizTooltipOptions().mode("multi").sort("desc")
    panel = (
        timeseries.Panel()
        .title(title)
        .unit(unit)
        .datasource(DS)
        .span(width)
        .height(8)
        .legend(legend)
        .tooltip(tooltip)
    )
    for i, (expr, legend) in enumerate(queries):
        panel = panel.with_target(query(expr, legend, chr(ord("A") + i)))
    return panel


def single(title: str, expr: str, unit: str = "none", width: int = 4) -> Any:
    reduce = common.ReduceDataOptions().calcs(["lastNotNull"]).values(False)
    return (
        stat.Panel()
        .title(title)
        .unit(unit)
        .datasource(DS)
        .span(width)
        .height(4)
        .reduce_options(reduce)
        .graph_mode("area")
        .with_target(query(expr))
    )


def p99(metric: str, by: str, selector: str) -> str:
    return (
        f"histogram_quantile(0.99, sum by (le, {by}) "
        f"(rate({metric}_bucket{{{selector}}}[{WINDOW}])))"
    )


def base(title: str, uid: str, description: str) -> Any:
    return (
        dashboard.Dashboard(title)
        .uid(uid)
        .description(description)
        .tags(["corral", "kubernetes", "scheduler"])
        .refresh("30s")
        .time("now-1h", "now")
        .timezone("browser")
        .with_variable(
            dashboard.DatasourceVariable("datasource").label("Data source").type("prometheus")
        )
    )


def scheduler() -> Any:
    profiles = (
        dashboard.QueryVariable("schedulerprofile")
        .label("SchedulerProfile")
        .datasource(DS)
        .query('label_values(up{job="corral-scheduler"}, schedulerprofile)')
        .refresh(2)  # on time range change
    )
    return (
        base(
            "Corral / Scheduler",
            "corral-scheduler",
            "One SchedulerProfile's engines: kube-scheduler's metrics and Corral's own.",
        )
        .with_variable(profiles)
        .with_row(dashboard.Row("Overview"))
        .with_panel(single("Engines up", f"sum(up{{{ENGINE}}})"))
        .with_panel(single("Leaders", f"sum(leader_election_master_status{{{ENGINE}}})"))
        .with_panel(
            single("Pending pods", f'sum(scheduler_pending_pods{{{ENGINE}, queue!="gated"}})')
        )
        .with_panel(
            single(
                "Scheduled / s",
                "sum(rate(scheduler_schedule_attempts_total"
                f'{{{ENGINE}, result="scheduled"}}[{WINDOW}]))',
                "ops",
            )
        )
        .with_panel(
            single(
                "SLI p99",
                p99("scheduler_pod_scheduling_sli_duration_seconds", "job", ENGINE),
                "s",
            )
        )
        .with_panel(
            single(
                "Memory",
                f"max(process_resident_memory_bytes{{{ENGINE}}})",
                "bytes",
            )
        )
        .with_row(dashboard.Row("Scheduling"))
        .with_panel(
            series(
                "Scheduling rate",
                "ops",
                (
                    "sum by (result) (rate(scheduler_schedule_attempts_total"
                    f"{{{ENGINE}}}[{WINDOW}]))",
                    "{{result}}",
                ),
            )
        )
        .with_panel(
            series(
                "Scheduling latency 99th quantile",
                "s",
                (
                    p99("scheduler_scheduling_attempt_duration_seconds", "result", ENGINE),
                    "attempt {{result}}",
                ),
                (
                    p99("scheduler_scheduling_algorithm_duration_seconds", "job", ENGINE),
                    "algorithm",
                ),
            )
        )
        .with_panel(
            series(
                "Pod scheduling SLI (from first attempt to bound)",
                "s",
                (
                    "histogram_quantile(0.5, sum by (le) (rate("
                    f"scheduler_pod_scheduling_sli_duration_seconds_bucket{{{ENGINE}}}[{WINDOW}])))",
                    "p50",
                ),
                (p99("scheduler_pod_scheduling_sli_duration_seconds", "job", ENGINE), "p99"),
            )
        )
        .with_panel(
            series(
                "Extension points 99th quantile",
                "s",
                (
                    p99(
                        "scheduler_framework_extension_point_duration_seconds",
                        "extension_point",
                        ENGINE,
                    ),
                    "{{extension_point}}",
                ),
            )
        )
        .with_panel(
            series(
                "Plugins 99th quantile (10% of cycles)",
                "s",
                (
                    p99(
                        "scheduler_plugin_execution_duration_seconds",
                        "plugin, extension_point",
                        ENGINE,
                    ),
                    "{{plugin}} {{extension_point}}",
                ),
            )
        )
        .with_panel(
            series(
                "Preemption",
                "short",
                (
                    f"sum(rate(scheduler_preemption_attempts_total{{{ENGINE}}}[{WINDOW}]))",
                    "attempts / s",
                ),
                (
                    f"sum(rate(scheduler_preemption_victims_sum{{{ENGINE}}}[{WINDOW}]))",
                    "victims / s",
                ),
            )
        )
        .with_row(dashboard.Row("Queue"))
        .with_panel(
            series(
                "Pending pods by queue",
                "short",
                (f"sum by (queue) (scheduler_pending_pods{{{ENGINE}}})", "{{queue}}"),
            )
        )
        .with_panel(
            series(
                "Unschedulable pods by plugin",
                "short",
                (f"sum by (plugin) (scheduler_unschedulable_pods{{{ENGINE}}})", "{{plugin}}"),
            )
        )
        .with_panel(
            series(
                "Pods entering the queues",
                "ops",
                (
                    "sum by (queue, event) (rate(scheduler_queue_incoming_pods_total"
                    f"{{{ENGINE}}}[{WINDOW}]))",
                    "{{queue}} {{event}}",
                ),
                width=24,
            )
        )
        .with_row(dashboard.Row("API server and process"))
        .with_panel(
            series(
                "Kube API request rate",
                "ops",
                (
                    f"sum by (code) (rate(rest_client_requests_total{{{ENGINE}}}[{WINDOW}]))",
                    "{{code}}",
                ),
            )
        )
        .with_panel(
            series(
                "Kube API request latency 99th quantile",
                "s",
                (p99("rest_client_request_duration_seconds", "verb", ENGINE), "{{verb}}"),
            )
        )
        .with_panel(
            series(
                "Memory",
                "bytes",
                (f"process_resident_memory_bytes{{{ENGINE}}}", "{{pod}}"),
                width=8,
            )
        )
        .with_panel(
            series(
                "CPU usage",
                "percentunit",
                (f"rate(process_cpu_seconds_total{{{ENGINE}}}[{WINDOW}])", "{{pod}}"),
                width=8,
            )
        )
        .with_panel(
            series(
                "Events dropped",
                "short",
                (f"max by (pod) (corral_scheduler_events_dropped{{{ENGINE}}})", "{{pod}}"),
                width=8,
            )
        )
        .with_row(dashboard.Row("Corral's engine"))
        .with_panel(
            series(
                "Scheduling thread CPU by phase",
                "percentunit",
                (
                    "sum by (phase) (rate(corral_scheduler_thread_seconds"
                    f'{{{ENGINE}, clock="cpu"}}[{WINDOW}]))',
                    "{{phase}}",
                ),
                width=24,
            )
        )
    )


def operator() -> Any:
    return (
        base(
            "Corral / Operator",
            "corral-operator",
            "The SchedulerProfile operator: profiles, reconciles, pods no scheduler takes.",
        )
        .with_row(dashboard.Row("Overview"))
        .with_panel(single("Replicas up", f"sum(up{{{OPERATOR}}})"))
        .with_panel(single("Active replicas", f"sum(corral_operator_active{{{OPERATOR}}})"))
        .with_panel(single("Profiles Ready", f'max(corral_profiles{{{OPERATOR}, ready="true"}})'))
        .with_panel(
            single(
                "Profiles Stalled",
                "count(max by (profile) (corral_profile_condition"
                f'{{{OPERATOR}, type="Stalled"}}) == 1) or vector(0)',
            )
        )
        .with_panel(
            single(
                "Pods not served",
                f"sum(max by (scheduler_name, reason) (corral_pending_pods{{{OPERATOR}}}))",
            )
        )
        .with_panel(single("Work queue", f"sum(corral_workqueue_depth{{{OPERATOR}}})"))
        .with_row(dashboard.Row("Reconciles"))
        .with_panel(
            series(
                "Reconcile rate",
                "ops",
                (
                    f"sum by (result) (rate(corral_reconcile_total{{{OPERATOR}}}[{WINDOW}]))",
                    "{{result}}",
                ),
            )
        )
        .with_panel(
            series(
                "Reconcile latency 99th quantile",
                "s",
                (p99("corral_reconcile_duration_seconds", "result", OPERATOR), "{{result}}"),
            )
        )
        .with_panel(
            series(
                "Profiles not Ready or Stalled",
                "short",
                (
                    f'max by (profile) (corral_profile_condition{{{OPERATOR}, type="Ready"}}) == 0',
                    "not Ready: {{profile}}",
                ),
                (
                    "max by (profile) (corral_profile_condition"
                    f'{{{OPERATOR}, type="Stalled"}}) == 1',
                    "Stalled: {{profile}}",
                ),
            )
        )
        .with_panel(
            series(
                "Pods no scheduler takes",
                "short",
                (
                    f"max by (scheduler_name, reason) (corral_pending_pods{{{OPERATOR}}})",
                    "{{scheduler_name}} {{reason}}",
                ),
            )
        )
        .with_row(dashboard.Row("API server and process"))
        .with_panel(
            series(
                "Kube API request rate",
                "ops",
                (
                    f"sum by (code) (rate(rest_client_requests_total{{{OPERATOR}}}[{WINDOW}]))",
                    "{{code}}",
                ),
            )
        )
        .with_panel(
            series(
                "Kube API request latency 99th quantile",
                "s",
                (p99("rest_client_request_duration_seconds", "verb", OPERATOR), "{{verb}}"),
            )
        )
        .with_panel(
            series("Memory", "bytes", (f"process_resident_memory_bytes{{{OPERATOR}}}", "{{pod}}"))
        )
        .with_panel(
            series(
                "CPU usage",
                "percentunit",
                (f"rate(process_cpu_seconds_total{{{OPERATOR}}}[{WINDOW}])", "{{pod}}"),
            )
        )
    )


DASHBOARDS = {"corral-scheduler.json": scheduler, "corral-operator.json": operator}


def render(build: Any) -> str:
    return json.dumps(build().build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a file is stale")
    args = parser.parse_args()
    stale = []
    for name, build in DASHBOARDS.items():
        text = render(build)
        path = OUT / name
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path}", file=sys.stderr)
    if stale:
        print(f"stale: {', '.join(stale)}; run hack/dashboards.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
