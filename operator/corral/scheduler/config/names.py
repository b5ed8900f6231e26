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
_LABEL_VALUE_RE: Final = _QUALIFIED_NAME_RE

DNS1123_LABEL_MAX: Final = 63
DNS1123_SUBDOMAIN_MAX: Final = 253
QUALIFIED_NAME_MAX: Final = 63
LABEL_VALUE_MAX: Final = 63


def check_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _DNS1123_LABEL_RE.fullmatch(value):
        errs.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
            "'-', and must start and end with an alphanumeric character (e.g. 'my-name')"
        )
    return errs


def check_dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
            "with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name')"
        )
    return errs


def check_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'example.com')"
        )
    return errs


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
    errs = []
    if len(name) > QUALIFIED_NAME_MAX:
        errs.append(f"name part must be no more than {QUALIFIED_NAME_MAX} characters")
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
            "and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')"
        )
    return errs


def check_label_value(value: str) -> list[str]:
    errs = []
    if len(value) > LABEL_VALUE_MAX:
        errs.append(f"must be no more than {LABEL_VALUE_MAX} characters")
    if value and not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(
            "a valid label value must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character"
        )
    return errs


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
