"""Code several plugins share, as upstream's ``plugins/helper``; nothing here is a plugin, and
nothing here imports one (an import contract).

- :mod:`.normalize`: upstream's default score normalization;
- :mod:`.common`: the missing-state error and the PreFilter that does nothing;
- :mod:`.resource_scoring`: the resource scorers of NodeResourcesFit and VolumeBinding's shape;
- :mod:`.volumes`: a pod's volumes and claims as the volume plugins read them;
- :mod:`.pending_claims`: the claims a pod waits on (the storage-capacity plugins);
- :mod:`.csi_translation`: in-tree volume plugins' CSI names (NodeVolumeLimits);
- :mod:`.dra_extended_resources`: extended resources backed by DRA device classes.
- :mod:`.golayout`: Go's ``time.Parse`` layouts (NodeMetadata);
- :mod:`.preemption`: the preemption evaluator (DefaultPreemption, PreemptionToleration).

The most used names are re-exported here (``helper.default_normalize_score``,
``helper.missing_state``, ``helper.NoOpPreFilter``).
"""

from __future__ import annotations

from corral.scheduler.plugins.helper.common import NoOpPreFilter, missing_state
from corral.scheduler.plugins.helper.normalize import default_normalize_score

__all__ = ["NoOpPreFilter", "default_normalize_score", "missing_state"]
