"""Rendering a valid, defaulted SchedulerProfile to the Kubernetes objects that run it.

Contract:
- :func:`render` returns the objects in a fixed order (ServiceAccount, RBAC, ConfigMap, metrics
  Service, Deployment, PodDisruptionBudget) as plain data; :func:`dump` writes them as YAML.
  The same profile always gives the same bytes.
- Each template's output is parsed back before use; a template that would produce invalid YAML
  raises, it is never passed on.
- The config hash is the SHA-256 of the ConfigMap's ``config.yaml`` text; it sits on the
  ConfigMap and on the Deployment's pod template, so any config change rolls the pods.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from corral.api import Catalog, SchedulerProfile, default_catalog, scheduler_config_data
from corral.api.scheduler_config import extender_tls_dir
from corral.render import names, rbac
from corral.render.environment import environment
from corral.scheduler.config.decode import encode

Object = dict[str, Any]

# The templates' output is parsed by libyaml when PyYAML has it (4x less CPU per render, which
# the operator pays on every profile change; bench.operator_apply), else by the pure-Python
# loader. Both build the data with SafeConstructor, and the templates write only tojson's
# quoted scalars, which the two parsers read alike but for lone surrogates (see _render_one;
# tests/unit/render/test_render_hostile.py renders through both).
_TEMPLATE_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(
    yaml, "CSafeLoader", yaml.SafeLoader
)

DEFAULT_RESOURCES: dict[str, dict[str, str]] = {
    "requests": {"cpu": "100m", "memory": "128Mi"},
    "limits": {"memory": "1Gi"},
}


@dataclass(frozen=True, slots=True)
class Rendered:
    objects: list[Object]
    config_yaml: str
    config_hash: str


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the embedded config) as literal blocks, so they read as YAML."""


def _literal_ok(value: str) -> bool:
    # Only plain text: YAML treats \x85, U+2028/2029 and \r as line breaks inside blocks, a
    # leading space or newline would be read as the block's indentation, and PyYAML refuses a
    # block for trailing spaces. Indented lines after the first (nested YAML) are fine.
    if "\n" not in value or value.startswith((" ", "\n")):
        return False
    if any(line != line.rstrip(" ") for line in value.split("\n")):
        return False
    return all(
        c == "\n" or " " <= c <= "~" or (ord(c) >= 0xA0 and c not in "\u2028\u2029\ufeff")
        for c in value
    )


_BREAKS = frozenset("\x85\u2028\u2029\r\ufeff")


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style: str | None = "|" if _literal_ok(value) else None
    if style is None and any(c in _BREAKS for c in value):
        style = '"'  # PyYAML writes these raw in other styles, and they load back as newlines
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def dump_yaml(data: object) -> str:
    """Deterministic block YAML: keys in the order built, UTF-8 kept, no line folding.
    PyYAML falls back to a quoted scalar whenever a literal block could not hold a string
    exactly, so what is dumped always loads back equal."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=2**31 - 1)


def config_hash(config_yaml: str) -> str:
    return hashlib.sha256(config_yaml.encode("utf-8")).hexdigest()


def engine_command(profile: SchedulerProfile) -> list[str]:
    spec = profile.spec
    cmd = [*names.ENGINE_COMMAND, f"--bind-address=0.0.0.0:{names.METRICS_PORT}"]
    cmd.append("--secure-serving")  # HTTPS; /metrics only for authorized tokens
    cmd.append(f"--log-level={spec.log_level}")
    gates = profile.gates.flag()
    if gates:
        cmd.append(f"--feature-gates={gates}")
    tenancy = spec.tenancy
    if tenancy is not None and tenancy.namespaces:
        cmd.append("--namespaces=" + ",".join(tenancy.namespaces))
    if tenancy is not None and tenancy.namespace_selector is not None:
        cmd.append("--namespace-selector=" + _selector_string(encode(tenancy.namespace_selector)))
    if spec.shadow is not None:
        cmd += [f"--shadow-of={spec.shadow.scheduler_name}", f"--shadow-profile={profile.name}"]
    return cmd


def _selector_string(selector: dict[str, Any]) -> str:
    """A label selector in kubectl's string syntax (``a=b,c in (d,e),!f``)."""
    parts = [f"{k}={v}" for k, v in sorted(selector.get("matchLabels", {}).items())]
    for req in selector.get("matchExpressions", []):
        key, op, values = req["key"], req["operator"], req.get("values", [])
        if op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            parts.append(f"{key} {'in' if op == 'In' else 'notin'} ({','.join(values)})")
    return ",".join(parts)


def _context(profile: SchedulerProfile, plan: rbac.RbacPlan, config_yaml: str) -> dict[str, Any]:
    spec = profile.spec
    deployment = spec.deployment
    digest = config_hash(config_yaml)
    pod_annotations = dict(deployment.pod_annotations) if deployment else {}
    pod_annotations[names.CONFIG_HASH_ANNOTATION] = digest
    resources = encode(deployment.resources) if deployment and deployment.resources else None
    return {
        "labels": names.labels(profile),
        "selector_labels": names.selector_labels(profile),
        "owner_references": names.owner_references(profile),
        "namespace": spec.namespace,
        "names": {
            "service_account": names.base_name(profile),
            "deployment": names.base_name(profile),
            "cluster_role": names.cluster_role_name(profile),
            "config_map": names.config_map_name(profile),
            "metrics_service": names.metrics_service_name(profile),
        },
        "rbac": plan,
        "config_key": names.CONFIG_KEY,
        "config_dir": names.CONFIG_DIR,
        "config_yaml": config_yaml,
        "config_hash": digest,
        "config_hash_annotation": names.CONFIG_HASH_ANNOTATION,
        "replicas": spec.replicas,
        "image": spec.image,
        "command": engine_command(profile),
        "container_name": names.CONTAINER_NAME,
        "metrics_port": names.METRICS_PORT,
        "metrics_port_name": names.METRICS_PORT_NAME,
        "run_as_user": names.RUN_AS_USER,
        "pod_annotations": pod_annotations,
        # Extender client TLS: Secrets mounted read-only, never copied into the ConfigMap.
        "extender_tls": [
            {
                "volume": f"extender-tls-{i}",
                "secret": e.tls_secret_ref.name,
                "path": extender_tls_dir(i),
            }
            for i, e in enumerate(spec.extenders)
            if e.tls_secret_ref is not None
        ],
        "resources": resources or DEFAULT_RESOURCES,
        "deployment": {
            "priority_class_name": deployment.priority_class_name if deployment else None,
            "node_selector": dict(deployment.node_selector) if deployment else {},
            "tolerations": encode(deployment.tolerations) if deployment else [],
            "image_pull_secrets": encode(deployment.image_pull_secrets) if deployment else [],
            "image_pull_policy": deployment.image_pull_policy if deployment else None,
        },
    }


def _render_one(template: str, context: dict[str, Any]) -> Object:
    text = environment().get_template(template).render(**context)
    try:
        obj = yaml.load(text, Loader=_TEMPLATE_LOADER)
    except yaml.YAMLError:
        # libyaml refuses a \uXXXX escape of a lone surrogate, which tojson writes for one
        # (a profile read from YAML may hold it); the pure-Python loader reads it back.
        obj = yaml.safe_load(text)
    if not isinstance(obj, dict):  # pragma: no cover - a broken template
        raise RuntimeError(f"template {template} did not render one object")
    return obj


def render(profile: SchedulerProfile, catalog: Catalog | None = None) -> Rendered:
    """The objects of a profile that passed :func:`corral.api.load_profile`."""
    config_yaml = dump_yaml(scheduler_config_data(profile))
    plan = rbac.plan(profile, catalog or default_catalog())
    ctx = _context(profile, plan, config_yaml)
    objects = [
        _render_one("serviceaccount.yaml.j2", ctx),
        _render_one("clusterrole.yaml.j2", ctx),
        _render_one("clusterrolebinding.yaml.j2", ctx),
    ]
    le = profile.spec.leader_election
    if le is not None and le.leader_elect:
        objects += _role_pair(
            ctx,
            names.leader_election_role_name(profile),
            profile.spec.namespace,
            plan.leader_election_rules,
        )
    for ns in plan.tenant_namespaces:
        objects += _role_pair(ctx, names.cluster_role_name(profile), ns, plan.tenant_rules)
    objects.append(_render_one("configmap.yaml.j2", ctx))
    objects.append(_render_one("service.yaml.j2", ctx))
    objects.append(_render_one("deployment.yaml.j2", ctx))
    if (profile.spec.replicas or 0) > 1:
        objects.append(_render_one("poddisruptionbudget.yaml.j2", ctx))
    return Rendered(objects=objects, config_yaml=config_yaml, config_hash=ctx["config_hash"])


def _role_pair(
    ctx: dict[str, Any], name: str, namespace: str | None, rules: list[rbac.PolicyRule]
) -> list[Object]:
    role_ctx = {**ctx, "role_name": name, "role_namespace": namespace, "rules": rules}
    return [_render_one("role.yaml.j2", role_ctx), _render_one("rolebinding.yaml.j2", role_ctx)]


def dump(objects: Iterable[Object]) -> str:
    """One multi-document YAML stream."""
    return "".join(f"---\n{dump_yaml(obj)}" for obj in objects)


def file_name(index: int, obj: Object) -> str:
    """``NN-<kind>[-<namespace>]-<name>.yaml``, safe as a file name and unique per render."""
    meta = obj.get("metadata", {})
    parts = [obj.get("kind", "object").lower()]
    if meta.get("namespace"):
        parts.append(meta["namespace"])
    parts.append(str(meta.get("name", "")).replace(":", "-"))
    return f"{index:02d}-" + "-".join(parts) + ".yaml"
