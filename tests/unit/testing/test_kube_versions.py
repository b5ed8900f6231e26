"""since_kube: a test needing a newer Kubernetes minor is a strict xfail against an older one."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from support.kube_versions import expected_failure, minor


class _Item:
    def __init__(self, *marks: pytest.MarkDecorator) -> None:
        self.marks = [m.mark for m in marks]

    def get_closest_marker(self, name: str) -> Any:
        return next((m for m in self.marks if m.name == name), None)


def _item(*marks: pytest.MarkDecorator) -> pytest.Item:
    return cast(pytest.Item, _Item(*marks))


def test_minor_reads_releases_and_minors() -> None:
    assert minor("v1.33.13") == (1, 33)
    assert minor("1.34") == (1, 34)
    assert minor("v1.37.2") > minor("1.9")
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        minor("latest")


def test_older_control_plane_gets_a_strict_xfail_naming_both() -> None:
    item = _item(pytest.mark.since_kube("1.34", reason="PodLevelResources is alpha in 1.33"))
    xfail = expected_failure(item, "v1.33.13")
    assert xfail is not None
    assert xfail.mark.name == "xfail"
    assert xfail.mark.kwargs["strict"] is True
    assert xfail.mark.kwargs["reason"] == (
        "expected against v1.33.13 (needs 1.34+): PodLevelResources is alpha in 1.33"
    )


def test_same_or_newer_control_plane_runs_as_usual() -> None:
    item = _item(pytest.mark.since_kube("1.34", reason="r"))
    assert expected_failure(item, "v1.34.0") is None
    assert expected_failure(item, "v1.37.2") is None
    assert expected_failure(_item(), "v1.33.13") is None  # unmarked


def test_pins_in_force_decide_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pins = tmp_path / "versions.env"
    pins.write_text("KUBE_VERSION=v1.33.13\nETCD_VERSION=v3.5.35\nKWOK_VERSION=v0.8.0\n")
    item = _item(pytest.mark.since_kube("1.34"))
    assert expected_failure(item) is None  # the shipped pins: v1.37.2
    monkeypatch.setenv("CORRAL_VERSIONS_FILE", str(pins))
    xfail = expected_failure(item)
    assert xfail is not None
    assert xfail.mark.kwargs["reason"] == "expected against v1.33.13 (needs 1.34+)"
