"""Shared fixtures: the real local control plane and its clients (see corral.testing)."""

import pytest

pytest_plugins = ["corral.testing.pytest_plugin", "corral_dev.pytest_plugin", "support.http_peer"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Everything under tests/e2e talks to the real control plane.
    for item in items:
        if "/tests/e2e/" in str(item.path):
            item.add_marker(pytest.mark.e2e)
        if "/tests/e2e/realnode/" in str(item.path):
            item.add_marker(pytest.mark.realnode)
