"""Kubernetes name rules: upstream's messages, length error first, then the format error."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from corral.scheduler.config.names import (
    check_dns1035_label,
    check_dns1123_label,
    check_dns1123_subdomain,
    check_label_value,
    check_qualified_name,
    is_extended_resource_name,
)

LABEL_FORMAT = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name')"
)
DNS1035_FORMAT = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name')"
)
SUBDOMAIN_FORMAT = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com')"
)
NAME_PART_FORMAT = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')"
)
LABEL_VALUE_FORMAT = (
    "a valid label value must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character"
)


LONG_63 = "must be no more than 63 characters"
LABEL, DNS1035, SUBDOMAIN = check_dns1123_label, check_dns1035_label, check_dns1123_subdomain
QUALIFIED, VALUE = check_qualified_name, check_label_value


@pytest.mark.parametrize(
    ("check", "value", "want"),
    [
        pytest.param(LABEL, "my-name", [], id="label ok"),
        pytest.param(LABEL, "", [LABEL_FORMAT], id="label empty"),
        pytest.param(LABEL, "-" * 64, [LONG_63, LABEL_FORMAT], id="label long and malformed"),
        pytest.param(DNS1035, "1abc", [DNS1035_FORMAT], id="1035 digit first"),
        pytest.param(DNS1035, "a" * 64, [LONG_63], id="1035 long"),
        pytest.param(SUBDOMAIN, "a.b-c", [], id="subdomain ok"),
        pytest.param(SUBDOMAIN, "a..b", [SUBDOMAIN_FORMAT], id="subdomain dots"),
        pytest.param(SUBDOMAIN, "a" * 254, [LONG_63.replace("63", "253")], id="subdomain long"),
        pytest.param(QUALIFIED, "example.com/MyName", [], id="qualified ok"),
        pytest.param(QUALIFIED, "/x", ["prefix part must be non-empty"], id="empty prefix"),
        pytest.param(QUALIFIED, "Ex_ample/x", [f"prefix part {SUBDOMAIN_FORMAT}"], id="bad prefix"),
        pytest.param(QUALIFIED, "a/", ["name part must be non-empty"], id="no name"),
        pytest.param(
            QUALIFIED, "_" * 64, [f"name part {LONG_63}", NAME_PART_FORMAT], id="long bad name"
        ),
        pytest.param(VALUE, "", [], id="empty label value"),
        pytest.param(VALUE, "v_1.0", [], id="label value ok"),
        pytest.param(VALUE, "-v", [LABEL_VALUE_FORMAT], id="label value malformed"),
        pytest.param(VALUE, "v" * 64, [LONG_63], id="label value long"),
    ],
)
def test_name_rules(check: Callable[[str], list[str]], value: str, want: list[str]) -> None:
    assert check(value) == want


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("example.com/gpu", True),
        ("gpu", False),
        ("kubernetes.io/gpu", False),
        ("foo.kubernetes.io/gpu", False),
        ("requests.example.com/gpu", False),
    ],
)
def test_is_extended_resource_name(name: str, want: bool) -> None:
    assert is_extended_resource_name(name) is want
