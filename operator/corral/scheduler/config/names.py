"""Kubernetes name rules (apimachinery ``util/validation``), returning messages, not booleans.

Each ``check_*`` returns the list of reasons the value is invalid (empty when valid), worded like
upstream so users recognise them.
"""

from __future__ import annotations

import re
from typing import Final

_DNS1123_LABEL_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN_RE: Final = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
_DNS1035_LABEL_RE: Final = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME_RE: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
# Upstream's labelValueFmt: a qualified name, or empty.
_LABEL_VALUE_RE: Final = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

DNS1123_LABEL_MAX: Final = 63
DNS1123_SUBDOMAIN_MAX: Final = 253
QUALIFIED_NAME_MAX: Final = 63
LABEL_VALUE_MAX: Final = 63


def _check(value: str, max_len: int, pattern: re.Pattern[str], format_message: str) -> list[str]:
    """Upstream's two checks of every name rule, in its order: ``MaxLenError`` when ``value`` is
    longer than ``max_len``, then ``format_message`` when it does not match ``pattern``."""
    errs = []
    if len(value) > max_len:
        errs.append(f"must be no more than {max_len} characters")
    if not pattern.fullmatch(value):
        errs.append(format_message)
    return errs


def check_dns1123_label(value: str) -> list[str]:
    return _check(
        value,
        DNS1123_LABEL_MAX,
        _DNS1123_LABEL_RE,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
        "'-', and must start and end with an alphanumeric character (e.g. 'my-name')",
    )


def check_dns1035_label(value: str) -> list[str]:
    return _check(
        value,
        DNS1123_LABEL_MAX,
        _DNS1035_LABEL_RE,
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
        "with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name')",
    )


def check_dns1123_subdomain(value: str) -> list[str]:
    return _check(
        value,
        DNS1123_SUBDOMAIN_MAX,
        _DNS1123_SUBDOMAIN_RE,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
        "'-' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'example.com')",
    )


def check_qualified_name(value: str) -> list[str]:
    """A label key: an optional DNS subdomain prefix and ``/``, then a name of ≤63 characters."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        errs = [f"prefix part {m}" for m in check_dns1123_subdomain(prefix)]
        if errs:
            return errs
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character, with an optional DNS subdomain prefix "
            "and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        return ["name part must be non-empty"]
    problems = _check(
        name,
        QUALIFIED_NAME_MAX,
        _QUALIFIED_NAME_RE,
        "must consist of alphanumeric characters, '-', '_' or '.', and must start "
        "and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')",
    )
    return [f"name part {m}" for m in problems]


def check_label_value(value: str) -> list[str]:
    return _check(
        value,
        LABEL_VALUE_MAX,
        _LABEL_VALUE_RE,
        "a valid label value must be an empty string or consist of alphanumeric characters, "
        "'-', '_' or '.', and must start and end with an alphanumeric character",
    )


def is_extended_resource_name(name: str) -> bool:
    """Upstream ``IsExtendedResourceName``: a qualified name outside kubernetes.io, no
    ``requests.`` prefix, and valid once prefixed with ``requests.``."""
    if name.startswith("requests."):
        return False
    if "/" not in name:
        return False
    domain = name.split("/", 1)[0]
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return False
    return not check_qualified_name("requests." + name)
