"""The Jinja2 environment over the top-level ``templates/`` directory.

Contract: undefined variables are errors (StrictUndefined), nothing is auto-escaped for HTML,
and the ``tojson`` filter is :func:`corral.render.quoting.tojson` (YAML-safe quoting; Jinja's
own would HTML-escape). The templates directory is ``$CORRAL_TEMPLATES`` when set, else the
package's ``corral/templates``: in a checkout a symlink to the top-level ``templates/`` (the
source of truth), in a wheel a copy shipped as package data. Each template is read and compiled
once per process (``auto_reload=False``): Jinja would otherwise stat its file on every
``get_template``, on every render the operator makes (bench.operator_apply's profile).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import jinja2

from corral.render.quoting import tojson

TEMPLATES_ENV: str = "CORRAL_TEMPLATES"


def templates_dir() -> Path:
    override = os.environ.get(TEMPLATES_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1] / "templates"


@functools.cache
def environment(directory: str | None = None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(directory or str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=False,
        lstrip_blocks=False,
        auto_reload=False,
    )
    env.filters["tojson"] = tojson
    env.policies["json.dumps_kwargs"] = {"sort_keys": False}
    return env
