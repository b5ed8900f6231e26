"""The local engine runtime with a stand-in engine (a script recording its argv and env):
the Deployment's flags, distinct POD_NAMEs, restart on config change, stop on shrink/removal."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from corral.api import load_profile
from corral.controller.engines import LocalEngines, container_command, local_argv
from corral.k8s import Client
from corral.render import render

FAKE_ENGINE = """
import json, os, sys, time
out = os.path.join(os.path.dirname(sys.argv[sys.argv.index("--config") + 1]),
                   os.environ["POD_NAME"] + ".json")
with open(out, "w") as f:
    json.dump({"argv": sys.argv[1:], "pod": os.environ["POD_NAME"],
               "ns": os.environ["POD_NAMESPACE"], "pid": os.getpid()}, f)
time.sleep(60)
"""


def profile(replicas: int, args: dict[str, Any] | None = None) -> Any:
    spec: dict[str, Any] = {"namespace": "ns", "replicas": replicas}
    spec["tenancy"] = {"namespaces": ["team"]}
    if args:
        spec["pluginConfig"] = [{"name": "NodeResourcesFit", "args": args}]
    return load_profile(
        {
            "apiVersion": "corral.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": "t", "uid": "u"},
            "spec": spec,
        }
    )


@pytest.fixture
def engines(tmp_path: Path) -> Any:
    script = tmp_path / "engine.py"
    script.write_text(FAKE_ENGINE)
    client = Client.from_token("https://127.0.0.1:6443", "admin", None)
    tokens: list[tuple[str, str, int]] = []

    def token(ns: str, sa: str, seconds: int) -> str:
        tokens.append((ns, sa, seconds))
        return f"token-{len(tokens)}"

    rt = LocalEngines(
        client=client,
        directory=tmp_path / "run",
        tokens=token,
        launcher=(sys.executable, str(script)),
    )
    rt.tokens_issued = tokens  # type: ignore[attr-defined]
    yield rt
    rt.stop_all()


def records(directory: Path, count: int) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        found = {}
        for p in directory.glob("*.json"):
            try:
                found[p.stem] = json.loads(p.read_text())
            except ValueError:
                continue  # being written
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def wait_for(engines: LocalEngines, count: int) -> dict[tuple[str, int], Any]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        engines.supervise()
        running = engines.running()
        if len(running) == count:
            return running
        time.sleep(0.05)
    raise AssertionError(f"{len(engines.running())} engines running, wanted {count}")


def test_local_argv_keeps_the_deployment_flags() -> None:
    command = container_command(render(profile(2)))
    argv = local_argv(
        command,
        launcher=["py", "-m", "corral"],
        config=Path("/c.yaml"),
        port=1234,
        kubeconfig=Path("/kc"),
    )
    assert argv[:5] == ["py", "-m", "corral", "scheduler", "--config"]
    assert argv[5] == "/c.yaml"
    assert "--bind-address=127.0.0.1:1234" in argv
    assert "--namespaces=team" in argv
    assert "--log-level=Normal" in argv
    assert argv[-1] == "--kubeconfig=/kc"
    assert len(argv) == len(command) + 3  # launcher replaces "corral", plus --kubeconfig


def test_one_process_per_replica_restart_on_config_change_and_shrink(
    engines: LocalEngines, tmp_path: Path
) -> None:
    p = profile(2)
    engines.want(p, render(p))
    first = wait_for(engines, 2)
    base = tmp_path / "run" / "t"
    seen = records(base, 2)
    assert sorted(r["pod"] for r in seen.values()) == ["corral-t-local-0", "corral-t-local-1"]
    assert {r["ns"] for r in seen.values()} == {"ns"}
    assert engines.tokens_issued == [("ns", "corral-t", 6 * 3600)]  # type: ignore[attr-defined]
    kubeconfig = (base / "kubeconfig").read_text()
    assert "token-1" in kubeconfig
    assert oct((base / "kubeconfig").stat().st_mode)[-3:] == "600"

    # Same profile again: nothing restarts.
    engines.want(p, render(p))
    assert wait_for(engines, 2) == first

    # New plugin args: new config hash, every replica restarts with the new config.
    changed = profile(2, {"scoringStrategy": {"type": "MostAllocated"}})
    engines.want(changed, render(changed))
    for f in base.glob("*.json"):
        f.unlink()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        engines.supervise()
        now = engines.running()
        if len(now) == 2 and {v["pid"] for v in now.values()}.isdisjoint(
            {v["pid"] for v in first.values()}
        ):
            break
        time.sleep(0.05)
    else:
        raise AssertionError("engines were not restarted")
    assert "MostAllocated" in (base / "config.yaml").read_text()

    # Shrink to one replica, then remove the profile.
    one = profile(1, {"scoringStrategy": {"type": "MostAllocated"}})
    engines.want(one, render(one))
    assert list(wait_for(engines, 1)) == [("t", 0)]
    engines.forget("t")
    wait_for(engines, 0)


def test_a_crashing_engine_is_restarted_with_backoff(tmp_path: Path) -> None:
    script = tmp_path / "crash.py"
    script.write_text("raise SystemExit(3)\n")
    clock = [0.0]
    rt = LocalEngines(
        client=Client.from_token("https://127.0.0.1:6443", "admin", None),
        directory=tmp_path / "run",
        tokens=lambda *_: "t",
        launcher=(sys.executable, str(script)),
        clock=lambda: clock[0],
    )
    p = profile(1)
    rt.want(p, render(p))
    rt.supervise()
    first = rt._running[("t", 0)].process
    first.wait(10)
    rt.supervise()  # notices the crash, schedules a restart in 1 s
    assert rt._running[("t", 0)].process is first
    clock[0] = 1.5
    rt.supervise()
    assert rt._running[("t", 0)].process is not first
    rt.stop_all()
