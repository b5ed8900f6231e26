"""The soak's verdict, table and plot (``bench.soak`` writes the samples).

Growth is judged between the run's sixth (minute 10 of 60: past the warm-up, caches full,
allocator pools grown) and its end: each side is the median of the samples within
:data:`WINDOW` minutes of it, so one sample's noise does not decide. Flat means:

- RSS, threads and open files grew by at most :data:`MAX_GROWTH` (5%);
- every structure's entries (``corral_engine_entries``, the cache sizes) grew by at most 5%
  plus :data:`SLACK` entries (queues and in-flight sets move by a few pods from one sample to
  the next; what was ever seen, kept for good, grows with the churn by thousands).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

MAX_GROWTH: Final = 0.05
SLACK: Final = 25
WINDOW: Final = 2.5
PROCESS: Final = ("rss_mib", "threads", "open_files")
DOCS_PLOT: Final = Path("docs/reliability/soak.png")
# Structures drawn next to the process figures (the rest are in the table).
PLOTTED: Final = (
    "cache.pods",
    "cache.pods.label_values",
    "cache.pods.affinity_specs",
    "objects.ResourceClaim",
    "events.series",
    "queue.in_flight_events",
)


def _at(samples: Sequence[dict[str, Any]], minute: float, key: str) -> float | None:
    near = [s[key] for s in samples if key in s and abs(s["minute"] - minute) <= WINDOW]
    return statistics.median(near) if near else None


def _structures(samples: Sequence[dict[str, Any]]) -> list[str]:
    keys = {k for s in samples for k in s}
    return sorted(k for k in keys if k.startswith(("cache", "queue", "objects", "informers",
                                                   "handlers", "nominator", "events")))  # fmt: skip


def summarize(samples: Sequence[dict[str, Any]], minutes: float, *, rate: float) -> dict[str, Any]:
    start, end = minutes / 6, minutes
    figures: dict[str, dict[str, Any]] = {}
    for key in (*PROCESS, *_structures(samples)):
        first, last = _at(samples, start, key), _at(samples, end, key)
        if first is None or last is None:
            continue
        growth = (last - first) / first if first else (0.0 if last == 0 else float("inf"))
        allowed = first * (1 + MAX_GROWTH) + (0 if key in PROCESS else SLACK)
        figures[key] = {"start": first, "end": last, "growth": growth, "flat": last <= allowed}
    created = samples[-1].get("churn.created Pod", 0) if samples else 0
    return {
        "minutes": minutes,
        "target_rate": rate,
        "reached_rate": round(created / (minutes * 60), 1) if minutes else 0.0,
        "window": [start, end],
        "figures": figures,
        "flat": all(f["flat"] for f in figures.values()),
        "errors": {k: v for k, v in (samples[-1] if samples else {}).items() if "errors" in k},
    }


def line(sample: dict[str, Any]) -> str:
    """One progress line per sample."""
    return (
        f"[soak] minute {sample['minute']:5.1f}: rss {sample['rss_mib']:.1f} MiB, "
        f"{sample['threads']} threads, {sample['open_files']} files, "
        f"{sample.get('cache.pods', 0):.0f} pods cached, "
        f"{sample.get('churn.created Pod', 0)} created, "
        f"{sample.get('churn.deleted Pod', 0)} deleted"
    )


def table(summary: dict[str, Any]) -> str:
    """The verdict as a Markdown table (docs/reliability.md)."""
    start, end = summary["window"]
    rows = [
        f"| figure | minute {start:g} | minute {end:g} | growth | flat |",
        "|---|---:|---:|---:|---|",
    ]
    for key, f in summary["figures"].items():
        rows.append(
            f"| {key} | {f['start']:.1f} | {f['end']:.1f} | {100 * f['growth']:+.1f}% | "
            f"{'yes' if f['flat'] else '**no**'} |"
        )
    return "\n".join(rows)


def plot(samples: Sequence[dict[str, Any]], path: Path) -> None:
    """RSS, threads and open files over the run; the plotted structures beside them."""
    import matplotlib  # noqa: PLC0415  (the `bench` extra)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    minutes = [s["minute"] for s in samples]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    for ax, key, label in (
        (axes[0][0], "rss_mib", "RSS (MiB)"),
        (axes[0][1], "threads", "threads"),
        (axes[1][0], "open_files", "open files"),
    ):
        ax.plot(minutes, [s[key] for s in samples], marker=".")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    ax = axes[1][1]
    for key in PLOTTED:
        if any(key in s for s in samples):
            ax.plot(minutes, [s.get(key, 0) for s in samples], label=key)
    ax.set_ylabel("entries")
    ax.set_yscale("symlog")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("minute")
    fig.suptitle("corral scheduler under an hour of churn (bench.soak)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
