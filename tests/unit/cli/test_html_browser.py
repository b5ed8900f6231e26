"""The ``--html`` pages rendered in headless Chromium (Debian's package, installed when missing),
and their screenshots read back: the bars have the lengths the numbers say, the node x plugin
table has its rejections where the cycle rejected, a shadow's breakdown has a bar per deciding
plugin in proportion. Marked ``browser``: not in `make test` (a fresh machine would install
Chromium for it); `make browser` runs it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from corral.cli import html_report, main
from corral.scheduler.engine.shadow import compare as c
from corral.scheduler.engine.shadow import tally as t
from corral_dev.browser import screenshot

pytestmark = pytest.mark.browser

BAR_WIDTH = 360  # html_report's .bar, in CSS pixels (device scale factor 1)
ADDED = (0x3C, 0x9A, 0x3C)
USED = (0x7A, 0x8C, 0xA8)
REJECTED = (0xF6, 0xC4, 0xC4)
PLUGIN_BAR = (0xC0, 0x39, 0x2B)

NODES = "".join(
    f"---\nkind: Node\nmetadata: {{name: kube-node-{i}}}\n"
    'status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}\n'
    for i in range(1, 5)
)
RUNNING = "".join(  # two of cluster-capacity's rc.yml pods already on node 1
    f"---\nkind: Pod\nmetadata: {{name: nginx-{i}}}\nspec: {{nodeName: kube-node-1, "
    "containers: [{name: nginx, resources: {requests: {cpu: 150m, memory: 100Mi}}}]}\n"
    for i in range(2)
)
TEMPLATE = """\
kind: Pod
metadata: {name: small-pod}
spec:
  containers:
  - name: php-redis
    resources: {requests: {cpu: 150m, memory: 100Mi}}
"""


def rectangles(image: npt.NDArray[np.uint8], color: tuple[int, int, int]) -> list[tuple[int, int]]:
    """(width, height) of each solid rectangle of ``color``: runs of one row stacked with the
    same start and width on the rows below."""
    mask = np.all(np.abs(image.astype(np.int16) - np.array(color)) <= 3, axis=2)
    open_runs: dict[tuple[int, int], int] = {}  # (x0, width) -> height so far
    done: list[tuple[int, int]] = []
    for row in mask:
        padded = np.concatenate([[False], row, [False]])
        edges = np.flatnonzero(padded[1:] != padded[:-1])
        runs = {(int(a), int(b - a)) for a, b in zip(edges[::2], edges[1::2], strict=True)}
        for run, height in list(open_runs.items()):
            if run in runs:
                open_runs[run] = height + 1
            else:
                done.append((run[1], height))
                del open_runs[run]
        for run in runs - set(open_runs):
            open_runs[run] = 1
    done += [(w, h) for (_, w), h in open_runs.items()]
    return [(w, h) for w, h in done if w >= 3 and h >= 3]  # text anti-aliasing is no rectangle


def regions(image: npt.NDArray[np.uint8], color: tuple[int, int, int]) -> list[int]:
    """The area of each connected region of ``color`` (text inside a cell does not split it:
    its padding joins it around the text), largest first."""
    mask = np.all(np.abs(image.astype(np.int16) - np.array(color)) <= 3, axis=2)
    parent: list[int] = []
    area: list[int] = []

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    previous: list[tuple[int, int, int]] = []  # (start, end, run id) on the row above
    for row in mask:
        padded = np.concatenate([[False], row, [False]])
        edges = np.flatnonzero(padded[1:] != padded[:-1])
        current = []
        for a, b in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
            parent.append(len(parent))
            area.append(b - a)
            me = len(parent) - 1
            for pa, pb, other in previous:
                if pa < b and a < pb:  # overlapping runs touch: one region
                    ra, rb = root(me), root(other)
                    if ra != rb:
                        parent[rb] = ra
                        area[ra] += area[rb]
            current.append((a, b, me))
        previous = current
    return sorted((area[i] for i in range(len(parent)) if parent[i] == i), reverse=True)


def shot(page: Path) -> npt.NDArray[np.uint8]:
    png = screenshot(page, page.with_suffix(".png"))
    with Image.open(png) as img:
        return np.asarray(img.convert("RGB"))


@pytest.fixture(scope="module")
def capacity_image(tmp_path_factory: pytest.TempPathFactory) -> npt.NDArray[np.uint8]:
    """One screenshot of the capacity page for the tests below (Chromium costs seconds)."""
    tmp = tmp_path_factory.mktemp("capacity")
    for name, text in (("nodes.yaml", NODES), ("running.yaml", RUNNING), ("pod.yaml", TEMPLATE)):
        (tmp / name).write_text(text)
    page = tmp / "capacity.html"
    code = main([
        "simulate", "--capacity", "-f", str(tmp / "nodes.yaml"), "-f", str(tmp / "running.yaml"),
        "-f", str(tmp / "pod.yaml"), "--html", str(page),
    ])  # fmt: skip
    assert code == 0
    assert "50 more of default/small-pod" in page.read_text()
    return shot(page)


def test_the_capacity_page_shows_each_nodes_bars_to_scale(
    capacity_image: npt.NDArray[np.uint8],
) -> None:
    """cluster-capacity's example with two pods running on node 1: 11 more fit there, 13 on
    each other node. Every node's cpu bar is (13 x 150m) / 2 CPUs full; node 1's is 2 parts
    in use before and 11 placed, the others all placed."""
    added = sorted(w for w, _ in rectangles(capacity_image, ADDED) if w > 20)
    used = [w for w, _ in rectangles(capacity_image, USED) if w > 20]
    cpu_13, cpu_11, cpu_2 = (round(BAR_WIDTH * n * 150 / 2000) for n in (13, 11, 2))
    memory_13, memory_11 = (round(BAR_WIDTH * n * 100 / 4096) for n in (13, 11))
    pods_13, pods_11 = (round(BAR_WIDTH * n / 110) for n in (13, 11))

    def near(got: int, want: int) -> bool:
        return abs(got - want) <= 2  # a rounding pixel each side

    assert sum(near(w, cpu_13) for w in added) == 3, added
    assert sum(near(w, cpu_11) for w in added) == 1, added
    assert sum(near(w, memory_13) for w in added) == 3, added
    assert sum(near(w, memory_11) for w in added) == 1, added
    assert sum(near(w, pods_13) for w in added) == 3, added
    assert sum(near(w, pods_11) for w in added) == 1, added
    assert any(near(w, cpu_2) for w in used), used


def test_the_next_pods_table_has_a_rejection_per_node(
    capacity_image: npt.NDArray[np.uint8],
) -> None:
    cells = [a for a in regions(capacity_image, REJECTED) if a > 500]
    assert len(cells) == 4, cells  # NodeResourcesFit: Insufficient cpu, on each of the 4 nodes


def test_the_shadow_page_has_a_bar_per_deciding_plugin_in_proportion(tmp_path: Path) -> None:
    tally = t.Tally("default-scheduler", "h", "2026-12-01T00:00:00Z")
    for plugin, n in (("NodeResourcesFit", 30), ("PodTopologySpread", 10)):
        for _ in range(n):
            tally.record(c.DISAGREED, c.Disagreement("ns/p", c.DISAGREED, deciding_plugin=plugin),
                         burst=False)  # fmt: skip
    for _ in range(60):
        tally.record(c.AGREED, None, burst=False)
    page = tmp_path / "shadow.html"
    html_report.write(page, html_report.shadow_page("shadow-a", tally.status("now")))
    bars = sorted(w for w, _ in rectangles(shot(page), PLUGIN_BAR))
    assert len(bars) == 2, bars
    assert abs(bars[1] - 225) <= 2
    assert abs(bars[0] - 75) <= 2
