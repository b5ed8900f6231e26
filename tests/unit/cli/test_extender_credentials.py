"""Credentials in an extender's URL never reach the rendered objects or any output: the
profile is refused at ``spec.extenders[0].urlPrefix`` and the URL is shown redacted."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.cli.conftest import Run

HEAD = "apiVersion: corral.dev/v1alpha1\nkind: SchedulerProfile\nmetadata:\n  name: a\n"


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("https://user:s3cr3t@e:1", id="user and password"),
        pytest.param("https://s3cr3t@e:1", id="a token as the user"),
        pytest.param("https://e:1/x?token=s3cr3t", id="a token in the query"),
        pytest.param("http://u:s3cr3t@[::1/x", id="in a URL that does not parse"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "render"])
def test_credentials_in_an_extender_url_never_reach_the_output(
    tmp_path: Path, corral: Run, url: str, command: str
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + f"spec:\n  extenders:\n  - {{urlPrefix: '{url}', filterVerb: f}}\n")
    code, out, err = corral(command, "-f", str(path))
    assert code == 1
    assert "spec.extenders[0].urlPrefix: " in err
    assert "s3cr3t" not in out + err
