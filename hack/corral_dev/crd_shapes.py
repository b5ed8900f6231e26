"""``operator/corral/scheduler/backend/crd_shapes.json``: the shapes of the third-party CRD kinds
the engine watches, derived from their CRDs' ``openAPIV3Schema`` (``crds/scheduler-plugins``),
in the form of ``shapes.json`` (which hack/gen-object-shapes derives from the Go types).

Per kind (keyed as the engine files it, ``<plural>.<version>.<group>``): its ``apiVersion``, its
``kind`` and a root type. Each object schema with ``properties`` is a struct type named after
its path (``scheduling.x-k8s.io/v1alpha1.PodGroup.spec``) with its fields in the schema's order
and its ``required`` fields; ``additionalProperties`` is a map, ``items`` a list;
``x-kubernetes-int-or-string`` with the quantity pattern is a quantity; integers take their
``format`` (int64 without one) and their ``minimum``/``maximum``; ``date-time`` strings are
times; the root's ``metadata`` is ObjectMeta (the API server checks it as for every kind).

Run: ``python -m corral_dev.crd_shapes`` (writes the file) or ``--check`` (exit 1 when stale;
a unit test runs the same comparison).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CRDS = ROOT / "crds/scheduler-plugins"
OUT = ROOT / "operator/corral/scheduler/backend/crd_shapes.json"
# The CRDs whose kinds the engine watches (objects.WATCHED), in this order.
FILES = (
    "podgroups.scheduling.x-k8s.io.yaml",
    "elasticquotas.scheduling.x-k8s.io.yaml",
    "noderesourcetopologies.topology.node.k8s.io.yaml",
)
OBJECT_META = "k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta"
# resource.Quantity's pattern, as controller-gen writes it for a Quantity field.
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
    r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_FORMATS = {"int32": "int32", "int64": "int64"}


def derive(paths: list[Path]) -> dict[str, Any]:
    kinds: dict[str, Any] = {}
    types: dict[str, Any] = {}
    for path in paths:
        crd = yaml.safe_load(path.read_text())
        spec = crd["spec"]
        for version in spec["versions"]:
            if not version.get("served"):
                continue
            api_version = f"{spec['group']}/{version['name']}"
            root = f"{api_version}.{spec['names']['kind']}"
            key = f"{spec['names']['plural']}.{version['name']}.{spec['group']}"
            kinds[key] = {"apiVersion": api_version, "kind": spec["names"]["kind"], "type": root}
            _struct(version["schema"]["openAPIV3Schema"], root, types, top=True)
    return {"source": "crds/scheduler-plugins (openAPIV3Schema)", "kinds": kinds, "types": types}


def _struct(schema: dict[str, Any], name: str, types: dict[str, Any], *, top: bool = False) -> None:
    fields = []
    for field, sub in schema.get("properties", {}).items():
        if top and field == "metadata":
            fields.append([field, {"kind": "struct", "name": OBJECT_META}])
        else:
            fields.append([field, _shape(sub, f"{name}.{field}", types)])
    types[name] = {"fields": fields, "required": list(schema.get("required", ()))}


def _shape(schema: dict[str, Any], name: str, types: dict[str, Any]) -> dict[str, Any]:
    if schema.get("x-kubernetes-int-or-string"):
        quantity = schema.get("pattern") == QUANTITY_PATTERN
        return {"kind": "quantity" if quantity else "intorstring"}
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return {"kind": "any"}
    kind = schema.get("type")
    if kind == "object":
        if "properties" in schema:
            _struct(schema, name, types)
            return {"kind": "struct", "name": name}
        of = schema.get("additionalProperties")
        return {"kind": "map", "of": _shape(of, f"{name}[]", types) if of else {"kind": "any"}}
    if kind == "array":
        return {"kind": "list", "of": _shape(schema["items"], f"{name}[]", types)}
    if kind == "integer":
        out: dict[str, Any] = {"kind": _FORMATS.get(schema.get("format", ""), "int64")}
        out.update({k: schema[k] for k in ("minimum", "maximum") if k in schema})
        return out
    if kind == "number":
        return {"kind": "float64"}
    if kind == "boolean":
        return {"kind": "bool"}
    if kind == "string":
        return {"kind": "time" if schema.get("format") == "date-time" else "string"}
    raise ValueError(f"{name}: a schema the shapes cannot say: {schema}")


def render() -> str:
    return json.dumps(derive([CRDS / f for f in FILES]), indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    fresh = render()
    if argv[1:] == ["--check"]:
        if OUT.read_text() != fresh:
            print(f"{OUT} is stale; run python -m corral_dev.crd_shapes", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(fresh)
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
