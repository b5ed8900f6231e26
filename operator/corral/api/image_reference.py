"""Container image references, by the grammar the kubelet pulls with.

The kubelet parses a container's ``image`` with ``reference.ParseNormalizedNamed``
(github.com/distribution/reference v0.6.0, ``regexp.go``), digests with go-digest v1.0.0: what
does not parse there is a pod stuck in ``InvalidImageName``, so it is refused here, at the field
or flag that gave it. :func:`check_image_reference` returns upstream's reasons (empty when valid).
"""

from __future__ import annotations

import re
from typing import Final

# distribution/reference regexp.go, transcribed (RE2 and Python agree on every construct here).
_ALPHANUMERIC: Final = r"[a-z0-9]+"
_SEPARATOR: Final = r"(?:[._]|__|[-]+)"
_DOMAIN_COMPONENT: Final = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME: Final = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*"
_IPV6: Final = r"\[(?:[a-fA-F0-9:]+)\]"
_DOMAIN_AND_PORT: Final = rf"(?:{_DOMAIN_NAME}|{_IPV6})(?::[0-9]+)?"
_TAG: Final = r"[\w][\w.-]{0,127}"
_DIGEST: Final = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"
_PATH_COMPONENT: Final = rf"{_ALPHANUMERIC}(?:{_SEPARATOR}{_ALPHANUMERIC})*"
_REMOTE_NAME: Final = rf"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_NAME: Final = rf"(?:{_DOMAIN_AND_PORT}/)?{_REMOTE_NAME}"

REFERENCE_RE: Final = re.compile(rf"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?", re.ASCII)
_ANCHORED_NAME_RE: Final = re.compile(rf"(?:({_DOMAIN_AND_PORT})/)?({_REMOTE_NAME})", re.ASCII)
_IDENTIFIER_RE: Final = re.compile(r"[a-f0-9]{64}")
# go-digest: the algorithms it implements and the hex length of each.
DIGEST_HEX_LENGTHS: Final = {"sha256": 64, "sha384": 96, "sha512": 128}
REPOSITORY_NAME_MAX: Final = 255  # RepositoryNameTotalLengthMax
IMAGE_MAX: Final = 512  # the CRD's maxLength of spec.image (and a bound on the match's work)

EXAMPLE: Final = "registry.example.com/team/corral:v1"


def check_image_reference(value: str) -> list[str]:
    """Why ``value`` is not an image reference the kubelet can pull (``[]`` when it is), in
    upstream's words: ``invalid reference format``, ``repository name must be lowercase``..."""
    if not value:
        return ["repository name must have at least one component"]
    if len(value) > IMAGE_MAX:
        return [f"must be no more than {IMAGE_MAX} characters"]
    if _IDENTIFIER_RE.fullmatch(value):
        return ["cannot specify 64-byte hexadecimal strings (give a name, or name@sha256:...)"]
    match = REFERENCE_RE.fullmatch(value)
    if match is None:
        if REFERENCE_RE.fullmatch(value.lower()) is not None:
            return ["invalid reference format: repository name must be lowercase"]
        return [f"invalid reference format (e.g. {EXAMPLE!r})"]
    name, _, digest = match.groups()
    named = _ANCHORED_NAME_RE.fullmatch(name)
    path = named.group(2) if named is not None else name
    if len(path) > REPOSITORY_NAME_MAX:
        return [f"repository name must not be more than {REPOSITORY_NAME_MAX} characters"]
    if digest:
        algorithm, _, encoded = digest.partition(":")
        length = DIGEST_HEX_LENGTHS.get(algorithm)
        if length is None:
            return [f"unsupported digest algorithm (one of {', '.join(DIGEST_HEX_LENGTHS)})"]
        if len(encoded) != length:
            return [f"invalid checksum digest length ({algorithm} has {length} hex digits)"]
        if not re.fullmatch(r"[a-f0-9]+", encoded):
            return ["invalid checksum digest format (lowercase hex digits)"]
    return []
