"""Loading a KubeSchedulerConfiguration v1 document: parse, decode, default, validate.

Contract: :func:`load_config` accepts YAML/JSON text or an already-parsed mapping and either
returns a defaulted, valid :class:`KubeSchedulerConfiguration` or raises
:class:`ValidationError` listing every problem with its field path. With a ``registry``
(plugin name -> extension points) plugin names are checked too and every profile is expanded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from corral.scheduler.config.decode import decode, encode
from corral.scheduler.config.defaults import set_defaults
from corral.scheduler.config.document import type_meta_errors, yaml_documents
from corral.scheduler.config.errors import FieldError, FieldPath, ValidationError
from corral.scheduler.config.features import DEFAULT, FeatureGates
from corral.scheduler.config.multipoint import ExpandedProfile, Registry, check_plugin_names, expand
from corral.scheduler.config.types import API_VERSION, KIND, KubeSchedulerConfiguration
from corral.scheduler.config.validation import validate


def parse_yaml(text: str | bytes, what: str = "document") -> Any:
    """One YAML document; a syntax error becomes a :class:`ValidationError` with its position."""
    docs = yaml_documents(text, lambda line, col: f"line {line}, column {col}", "input")
    if len(docs) != 1:
        raise ValidationError(
            [FieldError("<root>", f"expected exactly one {what}, found {len(docs)}")]
        )
    return docs[0]


def decode_config(data: object) -> tuple[KubeSchedulerConfiguration | None, list[FieldError]]:
    """Decode without defaulting; checks apiVersion and kind."""
    if not isinstance(data, Mapping):
        return None, [FieldError("<root>", "must be an object (a KubeSchedulerConfiguration)")]
    errs = type_meta_errors(data, API_VERSION, KIND)
    cfg = decode(KubeSchedulerConfiguration, data, FieldPath(), errs)
    return cfg, errs


def load_config(
    data: str | bytes | Mapping[str, Any],
    *,
    registry: Registry | None = None,
    gates: FeatureGates = DEFAULT,
) -> KubeSchedulerConfiguration:
    """Parse, default (for the engine's feature ``gates``: they change the default plugin set)
    and validate; raise :class:`ValidationError` with every problem."""
    raw = parse_yaml(data, "KubeSchedulerConfiguration") if isinstance(data, str | bytes) else data
    cfg, errs = decode_config(raw)
    if cfg is None or errs:
        raise ValidationError(errs)
    if registry is not None:
        for i, profile in enumerate(cfg.profiles):
            if profile.plugins is not None:
                errs += check_plugin_names(
                    FieldPath.root("profiles").index(i).child("plugins"), profile.plugins, registry
                )
    set_defaults(cfg, errs, gates)
    if not errs:
        errs += validate(cfg)
    if registry is not None and not errs:
        for i, profile in enumerate(cfg.profiles):
            errs += expand(FieldPath.root("profiles").index(i), profile, registry)[1]
    if errs:
        raise ValidationError(errs)
    return cfg


def expand_profiles(cfg: KubeSchedulerConfiguration, registry: Registry) -> list[ExpandedProfile]:
    """Every profile's plugins per extension point; raises :class:`ValidationError`."""
    out: list[ExpandedProfile] = []
    errs: list[FieldError] = []
    for i, profile in enumerate(cfg.profiles):
        expanded, problems = expand(FieldPath.root("profiles").index(i), profile, registry)
        out.append(expanded)
        errs += problems
    if errs:
        raise ValidationError(errs)
    return out


def dump_config(cfg: KubeSchedulerConfiguration) -> dict[str, Any]:
    """The JSON form (``None`` fields left out), ready for ``yaml.safe_dump``."""
    data = encode(cfg)
    assert isinstance(data, dict)
    return data
