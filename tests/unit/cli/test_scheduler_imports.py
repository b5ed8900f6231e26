"""What the ``corral scheduler`` process loads: what only some of them need comes on first use.

A process keeps every module it imported. The operator's libraries (kopf, jinja2) and
cryptography cost a scheduler about 14 MB of resident memory, cel-python with its parser about
6 MB more; a scheduler never runs the operator, a cluster without CEL device selectors never
needs CEL, and a scheduler given its serving pair never signs one. Each case runs in a fresh
interpreter, since this test process has imported them all.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# `corral scheduler` parsed, the default profile (DynamicResources in it) built.
STARTED = """
import corral.cli
corral.cli.build_parser(["scheduler", "--config", "scheduler.yaml"])
from corral.scheduler.engine.frameworks import build_frameworks, engine_registry, load_engine_config
engine = load_engine_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                             "kind": "KubeSchedulerConfiguration"})
build_frameworks(engine, engine_registry(), None)
"""

# ... then one claim allocated through a DeviceClass with a CEL selector.
ALLOCATED_WITH_SELECTOR = """
from corral.scheduler.plugins.dynamic_resources.allocator import Allocator
from corral.scheduler.plugins.dynamic_resources.pools import Node
cls = {"metadata": {"name": "c"}, "spec": {"selectors": [
    {"cel": {"expression": 'device.driver == "d.example.com"'}}]}}
slice_ = {"metadata": {"name": "s"}, "spec": {"driver": "d.example.com", "nodeName": "n1",
          "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
          "devices": [{"name": "dev"}]}}
claim = {"metadata": {"name": "claim", "namespace": "ns", "uid": "u"}, "spec": {"devices": {
         "requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}}}
node = Node("n1", {})
assert Allocator({"c": cls}, [slice_], set()).allocate(node, [claim])
"""

# ... then a self-signed serving pair (no --tls-cert-file).
SELF_SIGNED = """
from corral.k8s.secure_serving import server_context
server_context(None, None)
"""

# ... or the parser of every command (`corral --help`).
EVERY_COMMAND = """
import corral.cli
corral.cli.build_parser(["--help"])
"""

HEAVY = ("celpy", "cryptography", "kopf", "jinja2")
NONE = dict.fromkeys(HEAVY, False)


def loaded_after(script: str) -> dict[str, bool]:
    probe = f"import json, sys\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script) + "\n" + probe],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, bool] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.parametrize(
    ("script", "want"),
    [
        pytest.param(STARTED, NONE, id="started"),
        pytest.param(
            STARTED + ALLOCATED_WITH_SELECTOR, NONE | {"celpy": True}, id="a-cel-selector-loads-cel"
        ),
        pytest.param(
            STARTED + SELF_SIGNED,
            NONE | {"cryptography": True},
            id="a-self-signed-pair-loads-cryptography",
        ),
        pytest.param(
            EVERY_COMMAND,
            NONE | {"cryptography": True, "kopf": True, "jinja2": True},
            id="every-commands-parser-loads-the-operators-libraries",
        ),
    ],
)
def test_heavy_libraries_load_on_first_use(script: str, want: dict[str, bool]) -> None:
    assert loaded_after(script) == want
