"""Cross-plugin: the volume plugins look a pod's claims up alike (``plugins.helper.volumes``),
with upstream's message and code when a claim is missing. Each plugin's own tables are in its
own file."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.plugins import (
    volume_binding,
    volume_restrictions,
    volume_zone,
)
from support.volume_pods import (
    MISSING_CLAIM,
    PVC_POD,
    pairs_handle,
    pre_filter_status,
)


@pytest.mark.parametrize(
    "module", [volume_binding, volume_zone, volume_restrictions], ids=lambda m: m.NAME
)
def test_missing_claim_in_pre_filter(module: Any) -> None:
    assert pre_filter_status(module.new(None, pairs_handle()), PVC_POD) == MISSING_CLAIM
