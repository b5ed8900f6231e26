"""`--html FILE` on simulate: one self-contained page (nothing to fetch, every input text
escaped), a node x plugin table with the cycle's verdicts, a capacity bar per node and resource
to scale. Read back with the standard library's HTML parser (tests/unit/cli/test_html_browser.py
renders it in a browser)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from tests.unit.cli.conftest import ROOT, Run

EXAMPLES = ROOT / "examples" / "simulate"


class Page(HTMLParser):
    """Tags, attributes, and the text of each table cell in order."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.cells: list[tuple[str, str]] = []  # (class, text)
        self._cell: list[str] | None = None
        self._class = ""
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        self.tags.append((tag, attributes))
        if tag == "td":
            self._cell, self._class = [], attributes.get("class", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.cells.append((self._class, "".join(self._cell).strip()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def widths(page: Page, css: str) -> list[float]:
    return [
        float(a["style"].removeprefix("width:").removesuffix("%"))
        for tag, a in page.tags
        if tag == "div" and a.get("class") == css
    ]


def test_the_page_is_self_contained_and_escapes_what_it_was_given(
    tmp_path: Path, corral: Run
) -> None:
    odd = tmp_path / "odd.yaml"
    odd.write_text("kind: <script>alert(1)</script>\nmetadata: {name: x}\n")
    page = tmp_path / "out.html"
    code, _, _ = corral("simulate", "-f", str(EXAMPLES / "cluster.yaml"), "-f", str(odd),
                        "--html", str(page))  # fmt: skip
    assert code == 3
    text = page.read_text()
    assert "<script" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # the note of what was ignored
    parsed = Page(text)
    assert {tag for tag, _ in parsed.tags} <= {
        "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "table", "tr",
        "th", "td", "div", "span", "br",
    }  # fmt: skip
    assert not [a for _, a in parsed.tags if {"src", "href"} & set(a)]
    assert "url(" not in text
    assert "@import" not in text


def test_the_cycle_table_has_each_nodes_verdicts(tmp_path: Path, corral: Run) -> None:
    page = tmp_path / "out.html"
    corral("simulate", "-f", str(EXAMPLES / "cluster.yaml"), "--html", str(page))
    cells = Page(page.read_text()).cells
    rejected = [text for css, text in cells if css == "no"]
    # shop/batch: Insufficient cpu on node-a and node-b, the taint on gpu-1 (as --explain says).
    assert rejected.count("Insufficient cpu") >= 2, rejected
    assert "node(s) had untolerated taint(s)" in rejected


@pytest.mark.parametrize(
    ("files", "cpu", "note"),
    [
        # cluster-capacity's example: 13 copies of 150m on each 2-CPU node: 1950m of 2000m.
        pytest.param(["capacity-cluster.yaml"], [97.5] * 4, "13 more fit", id="capacity"),
    ],
)  # fmt: skip
def test_capacity_bars_are_to_scale(
    tmp_path: Path, corral: Run, files: list[str], cpu: list[float], note: str
) -> None:
    page = tmp_path / "out.html"
    argv = [a for f in files for a in ("-f", str(EXAMPLES / f))]
    code, _, _ = corral("simulate", "--capacity", *argv, "-f", str(EXAMPLES / "capacity-pod.yaml"),
                        "--html", str(page))  # fmt: skip
    assert code == 0
    parsed = Page(page.read_text())
    added = widths(parsed, "added")
    resources = [text for css, text in parsed.cells if text in ("cpu", "memory", "pods")]
    assert len(added) == len(resources) == 12  # 4 nodes x cpu, memory, pods
    cpu_bars = [w for w, r in zip(added, resources, strict=True) if r == "cpu"]
    assert cpu_bars == cpu
    assert all(w == 0.0 for w in widths(parsed, "used"))  # nothing ran before
    assert sum(note in text for _, text in parsed.cells) == 4


def test_html_that_cannot_be_written_is_one_line(tmp_path: Path, corral: Run) -> None:
    target = tmp_path / "missing" / "out.html"
    code, out, err = corral("simulate", "-f", str(EXAMPLES / "cluster.yaml"), "--html",
                            str(target))  # fmt: skip
    assert (code, out) == (2, "")
    assert err.strip().splitlines()[-1].startswith(f"corral: --html: cannot write {target}: ")
