"""The operator's metrics in the Prometheus text format (no client library needed).

Served on ``--metrics-address`` at ``/metrics``:

- ``corral_pending_pods{scheduler_name,reason}``: pods the detector reports (gauge);
- ``corral_reconcile_total{result}``: reconciles by result ``ok``/``retry``/``error`` (counter);
- ``corral_reconcile_seconds_sum`` / ``_count``: time spent reconciling;
- ``corral_profiles{ready}``: profiles by Ready status (gauge).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

Labels = tuple[tuple[str, str], ...]


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[Labels, float] = {}
        self._reconciles: dict[Labels, float] = {}
        self._seconds = 0.0
        self._count = 0
        self._profiles: dict[Labels, float] = {}

    def set_pending(self, counts: Mapping[tuple[str, str], int]) -> None:
        with self._lock:
            self._pending = {
                (("scheduler_name", s), ("reason", r)): float(n) for (s, r), n in counts.items()
            }

    def set_profiles(self, by_ready: Mapping[str, int]) -> None:
        with self._lock:
            self._profiles = {(("ready", k),): float(v) for k, v in by_ready.items()}

    def reconciled(self, result: str, seconds: float) -> None:
        with self._lock:
            key = (("result", result),)
            self._reconciles[key] = self._reconciles.get(key, 0.0) + 1
            self._seconds += seconds
            self._count += 1

    def value(self, name: str, **labels: str) -> float:
        key = tuple(sorted(labels.items()))
        with self._lock:
            table = {
                "corral_pending_pods": self._pending,
                "corral_reconcile_total": self._reconciles,
                "corral_profiles": self._profiles,
            }[name]
            return next((v for k, v in table.items() if tuple(sorted(k)) == key), 0.0)

    def render(self) -> str:
        lines: list[str] = []
        with self._lock:
            for name, kind, help_, table in (
                (
                    "corral_pending_pods",
                    "gauge",
                    "Pods waiting for a scheduler that will not take them.",
                    self._pending,
                ),
                (
                    "corral_reconcile_total",
                    "counter",
                    "Profile reconciles by result.",
                    self._reconciles,
                ),
                ("corral_profiles", "gauge", "SchedulerProfiles by Ready status.", self._profiles),
            ):
                lines += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}"]
                for labels, value in sorted(table.items()):
                    text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
                    lines.append(f"{name}{{{text}}} {value:g}")
            lines += [
                "# HELP corral_reconcile_seconds Time spent reconciling profiles.",
                "# TYPE corral_reconcile_seconds summary",
                f"corral_reconcile_seconds_sum {self._seconds:.6f}",
                f"corral_reconcile_seconds_count {self._count}",
            ]
        return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
