"""The protobuf pod watch against a real API server: every event decodes to exactly the dict the
JSON watch delivers, over pods that use every part of the Pod schema the API server accepts here,
their status updates and their deletion; an object the schema does not describe switches the
informer to JSON without losing it; and the shipped schema is what the pinned ``k8s.io/api``
generates."""

from __future__ import annotations

import asyncio
import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

from corral.k8s import JSON, Client
from corral.k8s import protobuf_objects as po
from corral.k8s.aio import AsyncClient
from corral.k8s.informer import EventType, Informer

ROOT = Path(__file__).resolve().parents[2]


def _container(name: str, **extra: Any) -> JSON:
    return {"name": name, "image": "registry.k8s.io/pause:3.10.1", **extra}


def _full_pod(name: str, owner_uid: str) -> JSON:
    """Nearly every PodSpec field the API server validates without other objects existing."""
    probe = {
        "httpGet": {
            "path": "/healthz",
            "port": 8080,
            "scheme": "HTTP",
            "httpHeaders": [{"name": "X-A", "value": "b"}],
        },
        "initialDelaySeconds": 0,
        "periodSeconds": 3,
        "failureThreshold": 1,
    }
    main = _container(
        "main",
        command=["/pause"], args=["-v"], workingDir="/w",
        ports=[{"name": "http", "containerPort": 8080, "protocol": "TCP"},
               {"containerPort": 53, "protocol": "UDP", "hostPort": 5353}],
        env=[{"name": "A", "value": ""}, {"name": "B", "value": "é ✓"},
             {"name": "C", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
             {"name": "D", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                              "divisor": "1Mi"}}},
             {"name": "E", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k",
                                                              "optional": True}}},
             {"name": "F", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
        envFrom=[{"prefix": "P_", "configMapRef": {"name": "cm", "optional": False}},
                 {"secretRef": {"name": "s"}}],
        resources={"requests": {"cpu": "250m", "memory": "64Mi", "ephemeral-storage": "1Gi"},
                   "limits": {"cpu": "1", "memory": "128Mi"}},
        volumeMounts=[{"name": "scratch", "mountPath": "/scratch", "readOnly": True},
                      {"name": "config", "mountPath": "/config", "subPath": "a",
                       "mountPropagation": "None"}],
        livenessProbe=probe,
        readinessProbe={"tcpSocket": {"port": "http"}, "timeoutSeconds": 2},
        startupProbe={"exec": {"command": ["true"]}, "successThreshold": 1},
        lifecycle={"preStop": {"sleep": {"seconds": 1}},
                   "postStart": {"exec": {"command": ["true"]}}},
        terminationMessagePolicy="FallbackToLogsOnError",
        imagePullPolicy="IfNotPresent",
        securityContext={"runAsUser": 1000, "runAsNonRoot": True, "readOnlyRootFilesystem": True,
                         "allowPrivilegeEscalation": False,
                         "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
                         "seccompProfile": {"type": "RuntimeDefault"}},
        stdin=False, tty=False,
    )  # fmt: skip
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app": "corpus", "empty": ""},
            "annotations": {"note": "ünïcode ✓", "json": '{"a": [1, 2]}'},
            "finalizers": ["corral.dev/test-hold"],
            # A real owner: the garbage collector would delete a pod whose owner is missing,
            # racing the updates below.
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                 "uid": owner_uid, "controller": True,
                                 "blockOwnerDeletion": False}],
        },
        "spec": {
            # No scheduler serves this name: nothing binds these pods meanwhile.
            "schedulerName": "nobody",
            "initContainers": [
                _container("init", command=["true"]),
                _container("sidecar", restartPolicy="Always",
                           resources={"requests": {"cpu": "10m"}}),
            ],
            "containers": [main, _container("second")],
            "volumes": [
                {"name": "scratch", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
                {"name": "config", "configMap": {
                    "name": "cm", "defaultMode": 420,
                    "items": [{"key": "a", "path": "a", "mode": 256}]}},
                {"name": "secret", "secret": {"secretName": "s", "optional": True}},
                {"name": "projected", "projected": {"sources": [
                    {"downwardAPI": {"items": [{"path": "labels",
                                                "fieldRef": {"fieldPath": "metadata.labels"}}]}},
                    {"configMap": {"name": "cm"}}]}},
                {"name": "host", "hostPath": {"path": "/tmp", "type": "Directory"}},
                {"name": "claim", "persistentVolumeClaim": {"claimName": "data", "readOnly": True}},
                {"name": "eph", "ephemeral": {"volumeClaimTemplate": {
                    "metadata": {"labels": {"k": "v"}},
                    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                             "resources": {"requests": {"storage": "1Gi"}}}}}},
                {"name": "image", "image": {"reference": "registry.k8s.io/pause:3.10.1",
                                            "pullPolicy": "IfNotPresent"}},
            ],
            "restartPolicy": "OnFailure",
            "terminationGracePeriodSeconds": 5,
            "activeDeadlineSeconds": 3600,
            "dnsPolicy": "None",
            "dnsConfig": {"nameservers": ["10.0.0.10"], "searches": ["a.svc"],
                          "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]},
            "nodeSelector": {"disk": "ssd"},
            "hostname": "corpus", "subdomain": "sub",
            "hostAliases": [{"ip": "10.1.2.3", "hostnames": ["a", "b"]}],
            "securityContext": {"runAsUser": 1000, "runAsGroup": 3000, "fsGroup": 2000,
                                "supplementalGroups": [4000, 5000],
                                "sysctls": [{"name": "net.ipv4.ip_local_port_range",
                                             "value": "32768 60999"}],
                                "fsGroupChangePolicy": "OnRootMismatch"},
            "imagePullSecrets": [{"name": "regcred"}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In",
                                               "values": ["a", "b"]}],
                         "matchFields": [{"key": "metadata.name", "operator": "NotIn",
                                          "values": ["n9"]}]}]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 5, "preference": {"matchExpressions": [
                            {"key": "gpu", "operator": "Exists"}]}}],
                },
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "db"}},
                     "topologyKey": "zone", "namespaces": ["other"],
                     "matchLabelKeys": ["pod-template-hash"]}]},
                "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "podAffinityTerm": {
                        "labelSelector": {"matchExpressions": [
                            {"key": "app", "operator": "In", "values": ["corpus"]}]},
                        "namespaceSelector": {}, "topologyKey": "kubernetes.io/hostname"}}]},
            },
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
                {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
            ],
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                 "labelSelector": {"matchLabels": {"app": "corpus"}}, "minDomains": 2,
                 "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore",
                 "matchLabelKeys": ["pod-template-hash"]}],
            "readinessGates": [{"conditionType": "example.com/ready"}],
            "enableServiceLinks": False,
            "automountServiceAccountToken": False,
            "shareProcessNamespace": True,
            "schedulingGates": [{"name": "corral.dev/hold"}],
            "os": {"name": "linux"},
            "hostUsers": True,
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}],
        },
    }  # fmt: skip


def _small_pod(name: str) -> JSON:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "finalizers": ["corral.dev/test-hold"]},
        "spec": {"schedulerName": "nobody", "containers": [_container("c")]},
    }  # fmt: skip


def _status(pod: JSON) -> JSON:
    """A running pod's status, as a kubelet writes it (times, container states, IPs)."""
    started = "2026-11-28T10:00:00Z"
    return {
        **pod,
        "status": {
            "phase": "Running", "hostIP": "10.0.0.5", "hostIPs": [{"ip": "10.0.0.5"}],
            "podIP": "10.244.0.7", "podIPs": [{"ip": "10.244.0.7"}, {"ip": "fd00::7"}],
            "startTime": started, "nominatedNodeName": "n1",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": started,
                 "lastProbeTime": None},
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": "0/3 nodes are available", "lastTransitionTime": started,
                 "observedGeneration": 1},
            ],
            "containerStatuses": [{
                "name": "c", "image": "registry.k8s.io/pause:3.10.1",
                "imageID": "sha256:abc", "containerID": "containerd://1", "ready": True,
                "started": True, "restartCount": 2,
                "state": {"running": {"startedAt": started}},
                "lastState": {"terminated": {"exitCode": 0, "reason": "Completed",
                                             "startedAt": started, "finishedAt": started,
                                             "containerID": "containerd://0"}},
                "allocatedResources": {"cpu": "100m"},
                "resources": {"requests": {"cpu": "100m"}},
                "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": True}],
            }],
        },
    }  # fmt: skip


def _events(client: AsyncClient, namespace: str, version: str, protobuf: bool,
            into: list[JSON], **extra: str | bool) -> asyncio.Task[None]:  # fmt: skip
    async def collect() -> None:
        params = {"resourceVersion": version, "timeoutSeconds": 60, **extra}
        path = f"/api/v1/namespaces/{namespace}/pods"
        async for event in client.watch(path, params, protobuf_objects=protobuf):
            into.append(event)

    return asyncio.create_task(collect())


async def _until(events: list[JSON], count: int) -> None:
    async with asyncio.timeout(30):
        while len(events) < count:
            await asyncio.sleep(0.05)


def _mutate(kube: Client, namespace: str) -> int:
    """Create, update, finish: returns how many pod events that makes."""
    base = f"/api/v1/namespaces/{namespace}/pods"
    owner = kube.request(
        "POST", f"/api/v1/namespaces/{namespace}/configmaps",
        body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}},
    )  # fmt: skip
    full = kube.request("POST", base, body=_full_pod("full", owner["metadata"]["uid"]))
    small = kube.request("POST", base, body=_small_pod("small"))
    kube.request("PUT", f"{base}/small/status", body=_status(small))
    # Lift the gate and add a label: a plain update of the full pod.
    full["spec"]["schedulingGates"] = []
    full["metadata"]["labels"]["phase"] = "two"
    full = kube.request("PUT", f"{base}/full", body=full)
    # Deletion with a finalizer held: deletionTimestamp and deletionGracePeriodSeconds arrive.
    kube.request("DELETE", f"{base}/full")
    kube.request("DELETE", f"{base}/small")
    for name in ("full", "small"):  # release the finalizers: DELETED
        pod = kube.request("GET", f"{base}/{name}")
        pod["metadata"]["finalizers"] = []
        kube.request("PUT", f"{base}/{name}", body=pod)
    return 8


def test_protobuf_watch_delivers_what_json_does(kube: Client, namespace: str) -> None:
    version = kube.request("GET", f"/api/v1/namespaces/{namespace}/pods")["metadata"][
        "resourceVersion"
    ]
    json_events: list[JSON] = []
    protobuf_events: list[JSON] = []

    async def main() -> int:
        client = AsyncClient(kube)
        try:
            tasks = [_events(client, namespace, version, False, json_events),
                     _events(client, namespace, version, True, protobuf_events)]  # fmt: skip
            count = await asyncio.to_thread(_mutate, kube, namespace)
            await _until(json_events, count)
            await _until(protobuf_events, count)
            for task in tasks:
                task.cancel()
            return count
        finally:
            await client.close()

    count = asyncio.run(main())
    kinds = [e["type"] for e in json_events]
    assert len(kinds) == count
    assert kinds == ["ADDED", "ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "MODIFIED",
                     "DELETED", "DELETED"]  # fmt: skip
    for number, (want, got) in enumerate(zip(json_events, protobuf_events, strict=True)):
        assert got == want, f"event {number} ({want['type']} {want['object']['metadata']['name']})"
    # The corpus really reached the rules it is there for.
    full = json_events[0]["object"]
    assert full["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] == "64Mi"  # inline VolumeSource
    assert full["metadata"]["managedFields"][0]["fieldsV1"]  # FieldsV1
    assert any("deletionTimestamp" in e["object"]["metadata"] for e in json_events)


def test_initial_events_and_their_bookmark(kube: Client, namespace: str) -> None:
    """A watch that starts with the current state (``sendInitialEvents``, as client-go's
    WatchList does) ends it with a BOOKMARK: its object is a Pod carrying only a version and an
    annotation, and decodes as its JSON does."""
    base = f"/api/v1/namespaces/{namespace}/pods"
    for name in ("one", "two"):
        kube.request("POST", base, body={**_small_pod(name), "metadata": {"name": name}})
    initial: dict[str, str | bool] = {
        "sendInitialEvents": True,
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": True,
    }
    got: dict[bool, list[JSON]] = {False: [], True: []}

    async def main() -> None:
        client = AsyncClient(kube)
        try:
            for protobuf, events in got.items():
                task = _events(client, namespace, "", protobuf, events, **initial)
                await _until(events, 3)
                task.cancel()
        finally:
            await client.close()

    asyncio.run(main())
    json_events, protobuf_events = got[False], got[True]
    assert [e["type"] for e in json_events] == ["ADDED", "ADDED", "BOOKMARK"]
    assert protobuf_events[:2] == json_events[:2]
    # The bookmark's version is the server's at that moment: other namespaces move it.
    bookmarks = [e["object"] for e in (json_events[2], protobuf_events[2])]
    for bookmark in bookmarks:
        assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        assert bookmark["metadata"].pop("resourceVersion")
    assert bookmarks[1] == bookmarks[0]


def test_informer_falls_back_to_json_on_an_unknown_field(
    kube: Client, namespace: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A schema without PodSpec.schedulerName stands for a server newer than the schema.
    pod_spec = po.schema().kinds["Pod"].fields[1].message
    assert pod_spec is not None
    trimmed = {t: v for t, v in pod_spec.by_tag.items() if v[2].json != "schedulerName"}
    monkeypatch.setattr(pod_spec, "by_tag", trimmed)
    seen: list[tuple[EventType, str]] = []

    async def main() -> None:
        client = AsyncClient(kube)
        informer = Informer(
            client,
            f"/api/v1/namespaces/{namespace}/pods",
            lambda kind, obj: seen.append((kind, obj["spec"]["schedulerName"])),
            protobuf_objects=True,
        )
        task = asyncio.create_task(informer.run())
        try:
            await asyncio.wait_for(informer.synced.wait(), 10)
            await asyncio.to_thread(
                kube.request, "POST", f"/api/v1/namespaces/{namespace}/pods",
                body={**_small_pod("late"), "metadata": {"name": "late"}},
            )  # fmt: skip
            async with asyncio.timeout(20):
                while not seen:
                    await asyncio.sleep(0.05)
            assert not informer.protobuf_objects
        finally:
            task.cancel()
            await client.close()

    with caplog.at_level(logging.WARNING, logger="corral.k8s.informer"):
        asyncio.run(main())
    assert seen == [("ADDED", "nobody")]
    assert "unknown field number" in caplog.text
    assert "watching as JSON from now on" in caplog.text


def test_shipped_schema_is_what_the_pinned_api_generates() -> None:
    result = subprocess.run(
        [str(ROOT / "hack" / "gen-wire-schema"), "--check"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
