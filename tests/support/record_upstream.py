"""``hack/record-upstream-config``: record the pinned kube-scheduler's answers the unit tier's
config tests run against: its verdict and written configuration for every case of
``tests/e2e/data/kube_scheduler_config/`` and its defaulted default configuration."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import yaml

from corral.testing.binaries import ensure_binaries
from support import config_acceptance, default_profile


def main() -> int:
    binary = ensure_binaries().kube_scheduler
    with tempfile.TemporaryDirectory(prefix="corral-record-") as tmp:
        work = Path(tmp)
        kubeconfig = work / "kubeconfig"
        kubeconfig.write_text(config_acceptance._KUBECONFIG)
        verdicts = config_acceptance.live_verdicts(binary, work, kubeconfig)
        config_acceptance.record(verdicts, kubeconfig)
        defaults = default_profile.live_default_config(binary, work)
        default_profile.RECORDED.write_text(yaml.safe_dump(defaults, width=1000))
    accepted = sum(v.accepted for v in verdicts.values())
    print(f"recorded {len(verdicts)} cases ({accepted} accepted) and the default configuration "
          f"into {config_acceptance.RECORDED}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
