"""An HTTP extender (examples/extender-example) on loopback, the same one for both schedulers.

Its filter keeps the nodes labelled ``example.corral.dev/allowed=true`` (the others appear in
FailedScheduling messages as the extender's reason); its prioritizer gives 10 to the nodes
labelled ``example.corral.dev/preferred=true``, scaled by the seed's weight (1-5).
"""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Final

from bench.conformance.generate import JSON, Scenario, build
from bench.conformance.kinds import Kind, Sizes, register
from corral.testing import LocalCluster
from corral.testing.processes import free_port

EXAMPLE: Final = Path(__file__).resolve().parents[3] / "examples/extender-example/extender.py"
ALLOWED: Final = "example.corral.dev/allowed"
PREFERRED: Final = "example.corral.dev/preferred"
READY_TIMEOUT: Final = 30.0


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    scenario = build(rng, seed, nodes=sizes.nodes, running=sizes.running, pods=sizes.pods)
    for node in scenario.nodes:
        labels = node["metadata"]["labels"]
        if rng.random() < 0.75:
            labels[ALLOWED] = "true"
        if rng.random() < 0.4:
            labels[PREFERRED] = "true"
    return scenario


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _services(stack: ExitStack, cluster: LocalCluster, scenario: Scenario) -> JSON:
    port = free_port()
    log = stack.enter_context((cluster.directory / "logs" / "extender.log").open("wb"))
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )

    def stop() -> None:
        process.terminate()
        process.wait(timeout=10)

    stack.callback(stop)
    deadline = time.monotonic() + READY_TIMEOUT
    while not _listening(port):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the example extender did not listen on 127.0.0.1:{port}")
        time.sleep(0.05)
    extender = {
        "urlPrefix": f"http://127.0.0.1:{port}",
        "filterVerb": "filter",
        "prioritizeVerb": "prioritize",
        "weight": 1 + scenario.seed % 5,
        "nodeCacheCapable": False,
        "httpTimeout": "5s",
    }
    return {"extenders": [extender]}


register(
    Kind(
        "extenders",
        "an HTTP extender filtering and prioritizing, both schedulers",
        _make,
        Sizes(nodes=30, running=60, pods=60),
        services=_services,
        replayable=False,
    )
)
