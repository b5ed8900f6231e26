"""pytest fixtures of the development harness, beside ``corral.testing.pytest_plugin``'s.

- ``csi_storage``: a :class:`corral_dev.storage.CsiStorage` per test: the real CSI
  external-provisioner (publishing CSIStorageCapacity) and its driver as host processes, no
  capacity anywhere until the test sets some; stopped and cleaned up afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from corral.k8s import Client
from corral_dev.storage import CsiStorage


@pytest.fixture
def csi_storage(kube: Client, tmp_path: Path) -> Iterator[CsiStorage]:
    storage = CsiStorage.start(kube, tmp_path / "csi-storage", capacity={})
    try:
        yield storage
    finally:
        storage.stop()
