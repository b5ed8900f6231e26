"""Rendering a SchedulerProfile to Kubernetes objects (Jinja2 over ``templates/``).

Imports nothing of corral but :mod:`corral.api` (and :mod:`corral.scheduler.config` through
it). The public surface::

    rendered = render(load_profile(data))     # .objects, .config_yaml, .config_hash
    text = dump(rendered.objects)             # one deterministic multi-document YAML stream
"""

from __future__ import annotations

from corral.render import names
from corral.render.rbac import RbacPlan, enabled_plugins
from corral.render.renderer import Rendered, config_hash, dump, dump_yaml, file_name, render

__all__ = [
    "RbacPlan",
    "Rendered",
    "config_hash",
    "dump",
    "dump_yaml",
    "enabled_plugins",
    "file_name",
    "names",
    "render",
]
