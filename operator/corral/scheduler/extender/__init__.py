"""The HTTP extender client (upstream ``pkg/scheduler/extender.go``) and its wiring.

The runtime calls extenders through :class:`corral.scheduler.framework.extender.Extender`;
:class:`HTTPExtender` implements it over HTTP(S) with upstream's wire format (shared with the
server library :mod:`corral.extender`). Wiring, once per engine::

    extenders = build_extenders(cfg.extenders)           # ignorable ones last
    profiles = with_ignored_resources(profiles, ignored_resources(cfg.extenders))
    Framework(profile, registry, extenders=extenders, ...)  # one list shared by every profile
"""

from corral.scheduler.extender.build import (
    build_extenders,
    ignored_resources,
    sends_node_objects,
    with_ignored_resources,
)
from corral.scheduler.extender.client import HTTPExtender
from corral.scheduler.extender.transport import (
    DEFAULT_TIMEOUT_SECONDS,
    PoolTransport,
    Transport,
    tls_context,
)

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "HTTPExtender",
    "PoolTransport",
    "Transport",
    "build_extenders",
    "ignored_resources",
    "sends_node_objects",
    "tls_context",
    "with_ignored_resources",
]
