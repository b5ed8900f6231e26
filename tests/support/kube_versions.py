"""Tests that need a Kubernetes feature newer than the control plane they run against.

``hack/compat`` runs the engine's e2e smoke against older API servers (``$CORRAL_VERSIONS_FILE``).
A test marked ``@pytest.mark.since_kube("1.34", reason=...)`` needs a feature that is alpha
(off by default) or absent before that minor: against an older control plane it is expected to
fail (a strict xfail, so a pass there is reported too), never skipped, and it runs as usual
against the pinned one.
"""

from __future__ import annotations

import re

import pytest

from corral.testing.binaries import load_versions


def minor(version: str) -> tuple[int, int]:
    """``v1.33.13`` or ``1.34`` -> ``(1, 33)`` / ``(1, 34)``."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", version)
    if not match:
        raise ValueError(f"not a Kubernetes version: {version!r}")
    return int(match[1]), int(match[2])


def expected_failure(item: pytest.Item, kube: str | None = None) -> pytest.MarkDecorator | None:
    """The strict xfail ``item`` gets against ``kube`` (default: the pins in force), or None."""
    mark = item.get_closest_marker("since_kube")
    if mark is None:
        return None
    since = mark.args[0]
    server = kube or load_versions().kube
    if minor(server) >= minor(since):
        return None
    reason = mark.kwargs.get("reason", "")
    return pytest.mark.xfail(
        strict=True, reason=f"expected against {server} (needs {since}+): {reason}".rstrip(": ")
    )
