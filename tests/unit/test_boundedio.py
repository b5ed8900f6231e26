"""corral.boundedio and every reader of user files: the size is capped before reading, only
regular files (or ``-`` for stdin), and a FIFO or a device is refused at once, never read."""

from __future__ import annotations

import io
import json
import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from corral.boundedio import InputError, read_input
from corral.cli import UsageError
from corral.cli import main as corral
from corral.cli.scheduler import make_client
from corral.scheduler.config import ValidationError
from corral.scheduler.config.types import ExtenderTLSConfig
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.extender.transport import tls_context


def _regular(tmp: Path, size: int) -> str:
    path = tmp / "file"
    path.write_bytes(b"x" * size)
    return str(path)


def _fifo(tmp: Path, _size: int) -> str:
    path = tmp / "fifo"
    os.mkfifo(path)
    return str(path)


def _socket(tmp: Path, _size: int) -> str:
    path = tmp / "sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))  # the name stays after the socket is closed
    return str(path)


@pytest.mark.parametrize(
    ("make", "size", "error"),
    [
        pytest.param(_regular, 10, None, id="a regular file at the cap"),
        pytest.param(_regular, 11, "is 11 bytes; at most 10 are read", id="one byte too many"),
        pytest.param(_fifo, 0, "not a regular file (a FIFO)", id="a FIFO with no writer"),
        pytest.param(lambda _t, _s: "/dev/zero", 0, "not a regular file (a character device)",
                     id="/dev/zero"),
        pytest.param(lambda _t, _s: "/dev/null", 0, "not a regular file (a character device)",
                     id="/dev/null"),
        pytest.param(lambda t, _s: str(t), 0, "not a regular file (a directory)",
                     id="a directory"),
        pytest.param(_socket, 0, "not a regular file (a socket)", id="a unix socket"),
        pytest.param(lambda t, _s: str(t / "nope"), 0, "No such file or directory",
                     id="missing"),
        # /proc files say 0 bytes: the read itself is cut past the cap.
        pytest.param(lambda _t, _s: "/proc/self/maps", 0,
                     "is more than 10 bytes; at most 10 are read",
                     id="a file larger than its size says"),
    ],
)  # fmt: skip
def test_read_input(
    tmp_path: Path, make: Callable[[Path, int], str], size: int, error: str | None
) -> None:
    name = make(tmp_path, size)
    if error is None:
        assert read_input(name, 10) == b"x" * size
        return
    with pytest.raises(InputError) as caught:
        read_input(name, 10)
    assert str(caught.value) == f"cannot read {name}: {error}"


def test_stdin_is_capped_too() -> None:
    assert read_input("-", 4, stdin=io.BytesIO(b"abcd")) == b"abcd"
    with pytest.raises(InputError, match=r"^cannot read -: is more than 4 bytes; at most 4 "):
        read_input("-", 4, stdin=io.BytesIO(b"abcde"))


def test_stdin_is_a_name_where_it_is_not_allowed(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^cannot read -: No such file"):
        read_input("-", 4, allow_stdin=False)


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO no one writes to: reading it would block for ever. A watchdog opens it for
    writing after 20 s so a test that blocks ends (and fails) instead of hanging the run."""
    path = tmp_path / "fifo"
    os.mkfifo(path)
    done = threading.Event()

    def unblock() -> None:
        if not done.wait(20):
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)

    watchdog = threading.Thread(target=unblock, daemon=True)
    watchdog.start()
    yield path
    done.set()
    watchdog.join()


def _cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        try:
            code = corral(list(argv))
        except UsageError as exc:  # pragma: no cover - main catches it
            return 2, str(exc)
    return code, err.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("validate", "-f"), id="corral validate -f"),
        pytest.param(("render", "-f"), id="corral render -f"),
        pytest.param(("simulate", "-f"), id="corral simulate -f"),
        pytest.param(("simulate", "-f", "{empty}", "--config"), id="corral simulate --config"),
        pytest.param(("scheduler", "--config"), id="corral scheduler --config"),
    ],
)
def test_cli_readers_refuse_a_fifo_at_once(
    tmp_path: Path, fifo: Path, argv: tuple[str, ...]
) -> None:
    (tmp_path / "empty.yaml").write_text("")
    argv = tuple(a.replace("{empty}", str(tmp_path / "empty.yaml")) for a in argv)
    code, err = _cli(*argv, str(fifo))
    assert code in (1, 2)
    assert f"cannot read {fifo}: not a regular file (a FIFO)" in err
    assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("validate", "-f", "/dev/zero"), id="validate"),
        pytest.param(("simulate", "-f", "/dev/zero"), id="simulate"),
        pytest.param(("scheduler", "--config", "/dev/zero"), id="scheduler"),
    ],
)
def test_cli_readers_refuse_dev_zero(argv: tuple[str, ...]) -> None:
    code, err = _cli(*argv)
    assert code in (1, 2)
    assert "cannot read /dev/zero: not a regular file (a character device)" in err


def test_engine_config_refuses_a_fifo(fifo: Path) -> None:
    with pytest.raises(ValidationError, match=r"not a regular file \(a FIFO\)"):
        load_engine_config(fifo)


@pytest.mark.parametrize("field", ["ca_file", "cert_file"])
def test_an_extenders_tls_file_that_is_a_fifo_is_refused(fifo: Path, field: str) -> None:
    tls = ExtenderTLSConfig(**{field: str(fifo)})
    if field == "cert_file":
        tls = ExtenderTLSConfig(cert_file=str(fifo), key_file=str(fifo))
    with pytest.raises(ValueError, match=rf"tlsConfig\.\w+: cannot read {fifo}: not a regular"):
        tls_context(tls, enable_https=True)


@pytest.mark.parametrize(
    ("key", "field"),
    [
        pytest.param("cluster", "certificate-authority", id="certificate-authority"),
        pytest.param("user", "client-certificate", id="client-certificate"),
        pytest.param("user", "tokenFile", id="tokenFile"),
    ],
)
def test_files_a_kubeconfig_names_are_bounded(
    tmp_path: Path, fifo: Path, key: str, field: str
) -> None:
    cluster = {"server": "https://127.0.0.1:1"}
    user: dict[str, str] = {"token": "t"}
    (cluster if key == "cluster" else user)[field] = str(fifo)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(config))
    section = "clusters" if key == "cluster" else "users"
    with pytest.raises(UsageError) as caught:
        make_client(str(path), None)
    assert str(caught.value) == (
        f"cannot load credentials: {path}: {section}[0].{key}.{field}: not a regular file (a FIFO)"
    )


def test_a_kubeconfig_that_is_a_fifo(fifo: Path) -> None:
    with pytest.raises(UsageError, match=rf"cannot read {fifo}: not a regular file \(a FIFO\)$"):
        make_client(str(fifo), None)
