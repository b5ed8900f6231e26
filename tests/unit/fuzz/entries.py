"""Corral's entry points for untrusted input, each as ``entry(case) -> (outcome, text)``.

They call what a user or a peer reaches: the ``corral`` CLI for files, the operator's
check-and-render path for a profile the API server hands over, the informer's dispatch for an
API object, the HTTP extender client for a reply, the extender library's server for a request,
the credentials loader for a kubeconfig. An accepted profile or configuration must also build
its engine offline (:func:`start_offline`); one that does not is a crash.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from corral.api import SchedulerProfile, check_profile, load_profiles_text
from corral.api.catalog import default_catalog
from corral.api.scheduler_config import EXTENDER_TLS_ROOT, scheduler_config_data
from corral.cli import UsageError
from corral.cli import main as corral
from corral.cli.scheduler import make_client
from corral.controller import guards, refusals
from corral.controller import pod_admission as pod_admission_module
from corral.controller.settings import Settings
from corral.extender import (
    Extender,
    ExtenderArgs,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    serve_in_thread,
)
from corral.k8s import Client
from corral.k8s import client as k8s_client
from corral.k8s.informer import Informer
from corral.render import render
from corral.scheduler.config import ValidationError
from corral.scheduler.config.types import Extender as ExtenderConfig
from corral.scheduler.engine.app import Engine, EngineOptions
from corral.scheduler.engine.frameworks import EngineConfig, load_engine_config
from corral.scheduler.engine.preflight import check_startable
from corral.scheduler.extender import HTTPExtender
from corral.scheduler.framework.extender import ExtenderError, Victims
from corral.scheduler.framework.types import NodeRecord, PodInfo
from corral.yamlload import load_all

Result = tuple[str, str]
# Exec plugins are killed after 30 s in production; the fuzz only needs to see that they are.
k8s_client.EXEC_TIMEOUT_SECONDS = 2.0
OFFLINE = Client.from_token("https://127.0.0.1:1", "offline", None)


def start_offline(engine: EngineConfig) -> None:
    """Build the whole engine (frameworks, extenders, queue, leader election) without an API
    server; raises when a configuration that validation accepted cannot start."""
    Engine(engine, OFFLINE, EngineOptions(identity="fuzz", bind_port=0))


def start_profile_offline(profile: SchedulerProfile) -> None:
    """:func:`start_offline` for a profile's rendered configuration. An extender's
    ``tlsSecretRef`` names files mounted from the Secret in the engine's pod: absent here, so
    that refusal (and only that one) is what such a profile gets offline."""
    try:
        start_offline(load_engine_config(scheduler_config_data(profile)))
    except ValidationError as exc:
        uses_secret = any(e.tls_secret_ref for e in profile.spec.extenders)
        if not (uses_secret and EXTENDER_TLS_ROOT in str(exc)):
            raise


def _cli(args: list[str], text: str | bytes) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.yaml"
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = corral([*args, str(path)])
    return code, out.getvalue(), err.getvalue().replace(str(path), "input.yaml")


def validate(text: str | bytes) -> Result:
    code, _out, err = _cli(["validate", "-f"], text)
    if code != 0:
        return "rejected", err
    for profile in load_profiles_text(text):
        try:
            start_profile_offline(profile)
        except ValidationError as exc:
            raise AssertionError(f"valid profile does not start: {exc}") from None
    return "accepted", ""


def scheduler_config(text: str | bytes) -> Result:
    """What ``corral scheduler`` checks before it loads credentials."""
    try:
        engine = load_engine_config(text.encode() if isinstance(text, str) else text)
        check_startable(engine)
    except ValidationError as exc:
        return "rejected", "\n".join(str(e) for e in exc.errors)
    try:
        start_offline(engine)
    except ValidationError as exc:
        raise AssertionError(f"valid configuration does not start: {exc}") from None
    return "accepted", ""


def simulate(text: str | bytes) -> Result:
    code, _out, err = _cli(["simulate", "-f"], text)
    if code in (1, 2):  # invalid input, usage (docs/cli.md); 3 is a pod not placed
        return "rejected", err
    return "accepted", f"exit {code}"


def reconcile(data: Any) -> Result:
    """What the operator does with a profile the API server hands over."""
    profile, errors = check_profile(data)
    if profile is None:
        return "rejected", "\n".join(str(e) for e in errors)
    for obj in render(profile).objects:
        json.dumps(obj)  # what server-side apply sends
    try:
        start_profile_offline(profile)
    except ValidationError as exc:
        raise AssertionError(f"the operator accepts a profile that does not start: {exc}") from None
    return "accepted", ""


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            raise AssertionError(f"logged a traceback: {record.getMessage()}")
        self.lines.append(record.getMessage())


@functools.cache
def _engine() -> Engine:
    """One offline engine per worker, fed every event of the worker's cases."""
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler"}],
    }
    return Engine(load_engine_config(cfg), OFFLINE, EngineOptions(identity="fuzz", bind_port=0))


def informer(case: tuple[str, str, Any]) -> Result:
    """A watch event for the engine's informers: the real dispatch into the real handlers."""
    path, event, obj = case
    handlers = {i.path: i for i in _engine().informers}
    target: Informer = handlers[path]
    lines = _Lines()
    logger = logging.getLogger()
    logger.addHandler(lines)
    try:
        target._emit(event, obj)  # type: ignore[arg-type]
    finally:
        logger.removeHandler(lines)
    return ("rejected", "\n".join(lines.lines)) if lines.lines else ("accepted", "")


class _Canned:
    def __init__(self, status: int, body: bytes) -> None:
        self.status, self.body = status, body

    def post(self, url: str, body: bytes, *, max_reply: int) -> tuple[int, bytes]:
        return self.status, self.body


_NODES = [NodeRecord(name=f"n{i}") for i in range(3)]


def extender_client(case: tuple[str, bool, int, bytes]) -> Result:
    """An extender's HTTP reply, as the scheduler's client decodes it."""
    verb, cache_capable, status, body = case
    ext = HTTPExtender(
        ExtenderConfig(
            url_prefix="http://127.0.0.1:1/x",
            filter_verb="filter",
            prioritize_verb="prioritize",
            bind_verb="bind",
            preempt_verb="preempt",
            weight=1,
            node_cache_capable=cache_capable,
        ),
        transport=_Canned(status, body),
    )
    pod = PodInfo(uid="u", namespace="d", name="p")
    try:
        if verb == "filter":
            ext.filter(pod, _NODES)
        elif verb == "prioritize":
            ext.prioritize(pod, _NODES)
        elif verb == "bind":
            ext.bind(pod, "n0")
        else:
            ext.process_preemption(pod, {"n0": Victims((), 0)}, lambda _node: [])
    except ExtenderError as exc:
        return "rejected", f"extender {verb}: {exc}"
    return "accepted", ""


def extender_server(case: tuple[str, bytes]) -> Result:
    """A request to an extender built with corral.extender (trivial handlers)."""
    verb, body = case
    req = urllib.request.Request(
        f"{_extender_url()}/{verb}", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            resp.read()
            return "accepted", ""
    except urllib.error.HTTPError as err:
        text = err.read().decode(errors="replace")
        if err.code >= 500:
            raise AssertionError(f"HTTP {err.code}: {text[:200]}") from None
        return "rejected", f"HTTP {err.code}: {text}"


@functools.cache
def _extender_url() -> str:
    ext = Extender()

    @ext.filter
    def _filter(args: ExtenderArgs) -> ExtenderFilterResult:
        return ExtenderFilterResult.keep(args, list(args.candidates))

    @ext.prioritize
    def _score(args: ExtenderArgs) -> dict[str, int]:
        return dict.fromkeys(args.candidates, 1)

    @ext.bind
    def _bind(_args: Any) -> None:
        return None

    @ext.preempt
    def _preempt(args: ExtenderPreemptionArgs) -> ExtenderPreemptionResult:
        return ExtenderPreemptionResult.from_json({"nodeNameToMetaVictims": {}})

    url: str = _SERVING.enter_context(serve_in_thread(ext))
    return url


_SERVING = contextlib.ExitStack()  # the worker's extender server lives as long as the worker


def kubeconfig(text: str | bytes) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kubeconfig"
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        try:
            make_client(str(path), None)
        except UsageError as exc:
            return "rejected", str(exc).replace(str(path), "kubeconfig")
    return "accepted", ""


def render_profiles(case: tuple[str, str | bytes]) -> Result:
    """``corral render -o FORMAT -f``: what a user renders offline, to stdout."""
    fmt, text = case
    code, out, err = _cli(["render", "-o", fmt, "-f"], text)
    if code != 0:
        return "rejected", err
    # A document that is no SchedulerProfile is skipped with a note: anything else on stderr is
    # not expected of a render that succeeded.
    noise = [line for line in err.splitlines() if line.strip() and ": skipped: " not in line]
    if noise:
        raise AssertionError(f"render succeeded but wrote to stderr: {err[:300]}")
    if fmt == "json":
        json.loads(out)
    else:
        load_all(out, "rendered")
    return "accepted", ""


def explain(text: str | bytes) -> Result:
    """``corral simulate --explain -f``: the cluster, and a profile or configuration in it."""
    code, _out, err = _cli(["simulate", "--explain", "-f"], text)
    if code in (1, 2):  # invalid input, usage (docs/cli.md); 3 is a pod not placed
        return "rejected", err
    if code not in (0, 3):
        raise AssertionError(f"simulate --explain exited {code}: {err[:300]}")
    return "accepted", f"exit {code}"


def admission(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> Result:
    """The profile webhook's answer (:func:`corral.controller.refusals.check`) for ``body``,
    given profiles the API server already holds (schema-valid, maybe never admitted)."""
    body, existing = case
    claims = [guards.claim_of(other) for other in existing]
    _profile, refusal = refusals.check(
        body, settings=Settings(), catalog=default_catalog(), claims=claims
    )
    refusals.advisories(body)
    if refusal is None:
        return "accepted", ""
    if refusal.reason == "InvalidSpec":  # one message listing every error: judged one by one
        _, errors = check_profile(body, catalog=default_catalog())
        listed = [str(e) for e in errors]
        if not listed or not all(e in refusal.message for e in listed):
            raise AssertionError(f"the webhook's message lacks errors: {refusal.message[:300]}")
        return "rejected", "\n".join(listed)
    return "rejected", refusal.message
    return "accepted", ""


def pod_admission(case: tuple[dict[str, Any], str, list[dict[str, Any]]]) -> Result:
    """The pod webhook's decision for a pod, given the profiles the API server holds."""
    pod, namespace, existing = case
    index = pod_admission_module.TenantIndex(lambda: existing, lambda _ns: {"tier": "a"})
    decision = index.decide(pod, namespace)
    if decision.refusal is not None:
        return "rejected", f"pod admission: {decision.refusal}"
    return "accepted", ""
