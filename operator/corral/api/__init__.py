"""The SchedulerProfile API: parse, default and validate profiles; the plugin catalog.

Imports nothing of corral but :mod:`corral.scheduler.config`. The public surface::

    profile = load_profile(data)              # raises ValidationError([FieldError(path, msg)])
    profile, errors = check_profile(data)     # the same without raising
    config = to_scheduler_config(profile)     # the KubeSchedulerConfiguration it stands for
    default_catalog()["NodeResourcesFit"]     # what a plugin extends, its args, what it reads
"""

from __future__ import annotations

from corral.api.catalog import (
    ENTRY_POINT_GROUP,
    Catalog,
    build_catalog,
    default_catalog,
)
from corral.api.defaults import OperatorDefaults, apply_defaults
from corral.api.load import check_profile, load_profile, load_profiles_text
from corral.api.parse import load_documents, parse_profile
from corral.api.scheduler_config import scheduler_config_data, to_scheduler_config
from corral.api.types import (
    API_VERSION,
    GROUP,
    KIND,
    PLURAL,
    VERSION,
    DeploymentSpec,
    LeaderElectionSpec,
    SchedulerProfile,
    SchedulerProfileSpec,
    Tenancy,
)
from corral.api.validation import validate_profile
from corral.scheduler.config import FieldError, ValidationError

__all__ = [
    "API_VERSION",
    "ENTRY_POINT_GROUP",
    "GROUP",
    "KIND",
    "PLURAL",
    "VERSION",
    "Catalog",
    "DeploymentSpec",
    "FieldError",
    "LeaderElectionSpec",
    "OperatorDefaults",
    "SchedulerProfile",
    "SchedulerProfileSpec",
    "Tenancy",
    "ValidationError",
    "apply_defaults",
    "build_catalog",
    "check_profile",
    "default_catalog",
    "load_documents",
    "load_profile",
    "load_profiles_text",
    "parse_profile",
    "scheduler_config_data",
    "to_scheduler_config",
    "validate_profile",
]
