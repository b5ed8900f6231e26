"""The demo of docs/plugins/{CheckCSIStorageCapacity,LvmVolumeCapacity}.md: both capacity plugins
in one corral simulate run."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.cli import main

# --- the demo of docs/plugins/{CheckCSIStorageCapacity,LvmVolumeCapacity}.md ------------------


def test_seed_sample_demo_in_corral_simulate(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/simulate/seed-storage.yaml under config/samples/seed-storage.yaml: two claims
    that fit zone b one by one but not together go to zone a; LVM claims go where the device
    class has room, or nowhere."""
    root = Path(__file__).resolve().parents[4]
    code = main(["simulate", "-f", str(root / "config" / "samples" / "seed-storage.yaml"),
                 "-f", str(root / "examples" / "simulate" / "seed-storage.yaml")])  # fmt: skip
    assert code == 3  # a pod not placed (docs/cli.md)
    assert capsys.readouterr().out.splitlines() == [
        "default/two-zonal-claims -> node-a  (evaluated 2 nodes, 1 feasible)",
        "default/lvm-db -> node-b  (evaluated 2 nodes, 1 feasible)",
        "default/lvm-archive: unschedulable: 0/2 nodes are available: 2 node(s) did not have "
        'enough free LVM capacity in device class "ssd" (LvmVolumeCapacity).',
    ]
