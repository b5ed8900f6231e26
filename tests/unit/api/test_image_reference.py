"""Image references by the kubelet's grammar (distribution/reference v0.6.0, go-digest v1.0.0):
upstream's own test rows (reference_test.go, normalize_test.go) where they apply."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from corral.api.image_reference import IMAGE_MAX, check_image_reference

SHA = "sha256:" + "ffff" * 16
CRD = Path(__file__).parents[3] / "crds" / "schedulerprofiles.corral.dev.yaml"


@pytest.mark.parametrize(
    "ref",
    [
        pytest.param("test_com", id="name"),
        pytest.param("test.com:tag", id="name-tag"),
        pytest.param("test.com:5000", id="port-looking-tag"),
        pytest.param("test.com/repo:tag", id="domain-tag"),
        pytest.param("test:5000/repo", id="domain-port"),
        pytest.param("test:5000/repo:tag", id="domain-port-tag"),
        pytest.param(f"test:5000/repo@{SHA}", id="domain-port-digest"),
        pytest.param(f"test:5000/repo:tag@{SHA}", id="tag-and-digest"),
        pytest.param("lowercase:Uppercase", id="uppercase-tag"),
        pytest.param("foo_bar.com:8080", id="underscore"),
        pytest.param("foo/foo_bar.com:8080", id="path-underscore"),
        pytest.param("[2001:db8::1]:5000/repo", id="ipv6-port"),
        pytest.param("[2001:db8::1]/repo:tag", id="ipv6-tag"),
        pytest.param("localhost/corral:dev", id="localhost"),
        pytest.param("a---b/c__d", id="separators"),
        pytest.param(f"x@sha512:{'0' * 128}", id="sha512"),
        pytest.param("a" * 255, id="name-at-the-limit"),
    ],
)
def test_a_reference_the_kubelet_pulls_is_accepted(ref: str) -> None:
    assert check_image_reference(ref) == []


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        pytest.param("", "repository name must have at least one component", id="empty"),
        pytest.param(":", "invalid reference format", id="colon"),
        pytest.param(":justtag", "invalid reference format", id="tag-only"),
        pytest.param(f"@{SHA}", "invalid reference format", id="digest-only"),
        pytest.param("repo@sha256:ffffffffffffffffffffffffffffffffff", "invalid checksum digest "
                     "length", id="digest-short"),
        pytest.param(f"repo@sha256:{'F' * 64}", "invalid checksum digest format",
                     id="digest-uppercase"),
        pytest.param(f"repo@md5:{'f' * 32}", "unsupported digest algorithm", id="md5"),
        pytest.param("validname@invaliddigest:ffffffffffffffffffffffffffffffff",
                     "unsupported digest algorithm", id="unknown-algorithm"),
        pytest.param("Uppercase:tag", "invalid reference format: repository name must be lowercase",
                     id="uppercase-name"),
        pytest.param("test:5000/Uppercase/lowercase:tag",
                     "invalid reference format: repository name must be lowercase",
                     id="uppercase-path"),
        pytest.param("aa/asdf$$^/aa", "invalid reference format", id="symbols"),
        pytest.param("a" * 256, "repository name must not be more than 255 characters",
                     id="name-too-long"),
        pytest.param("x:" + "t" * 129, "invalid reference format", id="tag-too-long"),
        pytest.param("a..b", "invalid reference format", id="double-dot"),
        pytest.param("-a", "invalid reference format", id="leading-dash"),
        pytest.param("my image", "invalid reference format", id="space"),
        pytest.param("[fe80::1%eth0]/x", "invalid reference format", id="ipv6-zone"),
        pytest.param("ffff" * 16, "cannot specify 64-byte hexadecimal strings", id="identifier"),
        pytest.param("a/" * 300 + "a", f"must be no more than {IMAGE_MAX} characters",
                     id="past-the-crd-limit"),
    ],
)  # fmt: skip
def test_what_the_kubelet_refuses_is_refused(ref: str, reason: str) -> None:
    got = check_image_reference(ref)
    assert len(got) == 1, got
    assert got[0].startswith(reason), got


def test_the_length_bound_is_the_crds() -> None:
    crd = yaml.safe_load(CRD.read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["properties"]["image"]["maxLength"] == IMAGE_MAX
