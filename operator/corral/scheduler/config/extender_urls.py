"""An extender's ``urlPrefix`` and verbs: what the client may call, and how a URL is shown.

Contract:
- :func:`url_problem` says why a ``urlPrefix`` can never be called (``None`` when it can): it
  must parse (a bracketed IPv6 host closed, a port a number), be ``http`` or ``https`` with a
  host, and carry no credentials, query or fragment. Upstream accepts any string and fails at
  each call; a URL with ``user:password@`` would also travel into the rendered ConfigMap and
  every error message naming the extender, so Corral refuses it (client certificates, through
  ``tlsConfig``, are the way to authenticate to an extender).
- :func:`verb_problem` holds a verb to one path segment: the client appends it to the prefix,
  so ``../..`` or ``filter?watch=1`` would call another path.
- :func:`redact_url` is how any URL is echoed: credentials and a query never shown. Messages
  name an extender through it; it never raises, whatever the text.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

_VERB: Final = re.compile(r"[A-Za-z0-9._~-]+")
_USERINFO: Final = re.compile(r"\A([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")
CREDENTIALS_REFUSED: Final = (
    "must not carry credentials (user:password@): they would be copied into the rendered "
    "ConfigMap and into error messages; authenticate with tlsConfig client certificates"
)


def url_problem(url: str) -> str | None:
    if any(c.isspace() or not c.isprintable() for c in url):
        return "must not contain spaces or control characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port raises for one that is not a number
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "must be an http:// or https:// URL"
    if parts.username is not None or parts.password is not None:
        return CREDENTIALS_REFUSED
    if not parts.hostname:
        return "must name a host"
    if "?" in url or "#" in url:
        return "must not carry a query or a fragment (the verb is appended to the URL)"
    return None


def verb_problem(verb: str) -> str | None:
    if not _VERB.fullmatch(verb) or verb in (".", ".."):
        return (
            "must be one path segment of letters, digits and . _ ~ - (not . or ..): "
            "it is appended to urlPrefix"
        )
    return None


def redact_url(url: str) -> str:
    """``url`` without credentials or a query (``https://***@host/x``), for messages."""
    shown = _USERINFO.sub(r"\1***@", url)
    for mark in ("?", "#"):
        if mark in shown:
            shown = shown.split(mark, 1)[0] + mark + "***"
    return shown
