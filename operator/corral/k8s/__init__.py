"""The only door to the API server: client setup, raw JSON requests, watches, apply, tokens."""

from corral.k8s.client import (
    CONTENT_APPLY_PATCH,
    CONTENT_JSON,
    CONTENT_MERGE_PATCH,
    CONTENT_STRATEGIC_MERGE_PATCH,
    JSON,
    ApiError,
    Client,
    ResourceInfo,
    api_prefix,
)

__all__ = [
    "CONTENT_APPLY_PATCH",
    "CONTENT_JSON",
    "CONTENT_MERGE_PATCH",
    "CONTENT_STRATEGIC_MERGE_PATCH",
    "JSON",
    "ApiError",
    "Client",
    "ResourceInfo",
    "api_prefix",
]
