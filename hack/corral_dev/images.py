"""Container images made on this machine, without Docker and without an image registry.

- :func:`write_archive` packs a root filesystem as a one-layer ``docker save`` archive (what
  ``ctr images import``, ``buildah pull docker-archive:`` and ``docker load`` read).
- :func:`pause_image` wraps the node's static pause binary as the sandbox image.
- :func:`python_base` makes a stand-in for ``python:3.11-slim``: Debian bookworm (debootstrap
  minbase) with a venv *at /usr/local*, which gives the official image's layout
  (``/usr/local/bin/python3``, ``/usr/local/lib/python3.11/site-packages``), so the Dockerfile's
  ``pip install --prefix=/install`` + ``COPY --from=build /install /usr/local`` work unchanged.
  Cached by :data:`BASE_VERSION` under ``~/.cache/corral/images``.
- :func:`build_image` runs the repository's Dockerfile with buildah (a private store, no
  pulls) and exports ``localhost/corral:<version>`` as a docker archive;
  :func:`build_dockerfile` builds any other Dockerfile there, e.g. one ``FROM`` that image.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from corral_dev.builds import NodeBinaries, load_node_pins
from corral_dev.hostpackages import ensure_packages

# Bump when the base's recipe changes: the cached base is keyed by it.
BASE_VERSION: Final = "bookworm-python3.11-1"
BASE_IMAGE: Final = f"localhost/corral-base:{BASE_VERSION}"
BASE_PACKAGES: Final = ("python3", "python3-venv", "ca-certificates")
HOST_CA_BUNDLE: Final = Path("/etc/ssl/certs/ca-certificates.crt")


class ImageError(RuntimeError):
    """An image could not be made; the message says which step and carries its output."""


@dataclass(frozen=True)
class ImageConfig:
    entrypoint: list[str] | None = None
    cmd: list[str] | None = None
    env: list[str] = field(default_factory=list)
    user: str = ""
    workdir: str = "/"


def images_cache() -> Path:
    root = os.environ.get("CORRAL_IMAGE_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "corral" / "images"


def _say(message: str) -> None:
    print(f"[image {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _run(step: str, argv: Sequence[str], *, log: Path | None = None) -> None:
    if log is None:
        result = subprocess.run(list(argv), capture_output=True, text=True, check=False)
        output, code = result.stdout + result.stderr, result.returncode
    else:
        with log.open("w") as out:
            run = subprocess.run(list(argv), stdout=out, stderr=subprocess.STDOUT, check=False)
        code = run.returncode
        output = log.read_text(errors="replace")
    if code != 0:
        tail = "\n".join(output.strip().splitlines()[-15:])
        raise ImageError(f"{step} failed (exit {code}):\n{tail}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_archive(rootfs: Path, out: Path, name: str, config: ImageConfig) -> Path:
    """Pack ``rootfs`` (ownership kept, numeric) as a one-layer image tagged ``name``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        layer = Path(tmp) / "layer.tar"
        pack = ["tar", "-C", str(rootfs), "--numeric-owner", "--xattrs", "-cf", str(layer), "."]
        _run("tar", pack)
        env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", *config.env]
        image_config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {
                "Env": env,
                "Entrypoint": config.entrypoint,
                "Cmd": config.cmd,
                "User": config.user,
                "WorkingDir": config.workdir,
            },
            "rootfs": {"type": "layers", "diff_ids": [f"sha256:{_sha256(layer)}"]},
            # One history entry per non-empty layer: buildah checks they agree.
            "history": [{"created_by": f"corral_dev.images {name}"}],
        }
        config_bytes = json.dumps(image_config, sort_keys=True).encode()
        config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
        manifest = [{"Config": config_name, "RepoTags": [name], "Layers": ["layer.tar"]}]
        partial = out.with_suffix(".partial")
        with tarfile.open(partial, "w") as archive:
            for member, data in (
                (config_name, config_bytes),
                ("manifest.json", json.dumps(manifest).encode()),
            ):
                info = tarfile.TarInfo(member)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
            archive.add(layer, arcname="layer.tar")
        partial.replace(out)
    return out


def pause_image(node: NodeBinaries, out: Path) -> Path:
    """The sandbox image every pod starts with, under the exact name containerd is pinned to."""
    with tempfile.TemporaryDirectory() as tmp:
        rootfs = Path(tmp)
        shutil.copy2(node["pause"], rootfs / "pause")
        return write_archive(
            rootfs,
            out,
            node.pins.pause_image,
            ImageConfig(entrypoint=["/pause"], user="65535:65535"),
        )


def debian_mirror() -> str:
    """The mirror this host's apt already uses (deb822 ``URIs:`` or a sources.list line)."""
    for path in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for line in path.read_text().splitlines():
            if line.startswith("URIs:") and "security" not in line:
                return line.split()[1]
    sources = Path("/etc/apt/sources.list")
    if sources.exists():
        for line in sources.read_text().splitlines():
            parts = line.split()
            if parts[:1] == ["deb"] and "security" not in line:
                return next(p for p in parts[1:] if "://" in p)
    return "http://deb.debian.org/debian"


def python_base(cache: Path | None = None) -> Path:
    """The cached archive of :data:`BASE_IMAGE`, made first if missing (about a minute)."""
    cache = cache or images_cache()
    out = cache / f"corral-base-{BASE_VERSION}.tar"
    if out.is_file():
        _say(f"base {BASE_IMAGE}: cached ({out})")
        return out
    ensure_packages(load_node_pins().image_packages)  # debootstrap, on a fresh machine
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=cache, prefix="base-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        _say(f"base {BASE_IMAGE}: debootstrap bookworm (minbase + {', '.join(BASE_PACKAGES)})")
        _run(
            "debootstrap",
            ["debootstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}",
             "bookworm", str(rootfs), debian_mirror()],
            log=Path(tmp) / "debootstrap.log",
        )  # fmt: skip
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc",
                     "usr/share/man", "usr/share/locale"):  # fmt: skip
            shutil.rmtree(rootfs / junk, ignore_errors=True)
            (rootfs / junk).mkdir(parents=True, exist_ok=True)
        _say("base: venv at /usr/local (the official python image's layout)")
        _run("venv", ["chroot", str(rootfs), "/usr/bin/python3", "-m", "venv", "/usr/local"])
        write_archive(rootfs, out, BASE_IMAGE, ImageConfig(cmd=["python3"], env=["LANG=C.UTF-8"]))
    _say(f"base ready in {time.monotonic() - started:.0f}s: {out}")
    return out


@dataclass(frozen=True)
class Built:
    archive: Path
    tag: str
    seconds: float

    @property
    def size_mb(self) -> float:
        return self.archive.stat().st_size / 1e6


def build_image(repo: Path, out_dir: Path, version: str, *, base: Path | None = None) -> Built:
    """``buildah bud`` of ``repo/Dockerfile`` over the local base; the archive is
    ``out_dir/corral-<version>.tar`` tagged ``localhost/corral:<version>``.

    buildah's store is private (``~/.cache/corral/images/buildah``) and keeps layers, so a
    rebuild with an unchanged dependency layer is quick. The host's CA bundle is mounted for
    ``RUN pip install`` (some networks intercept TLS) and nothing of it stays in the image.
    """
    ensure_packages(load_node_pins().image_packages)  # buildah and its runtime
    base = base or python_base()
    _say(f"loading {BASE_IMAGE} into buildah's store")
    _run("buildah pull", [*_buildah(), "pull", "-q", f"docker-archive:{base}"])
    return build_dockerfile(
        repo, repo / "Dockerfile", f"localhost/corral:{version}",
        out_dir / f"corral-{version}.tar", build_args={"BASE": BASE_IMAGE},
    )  # fmt: skip


def _buildah() -> list[str]:
    store = images_cache() / "buildah"
    return ["buildah", "--root", str(store / "root"), "--runroot", str(store / "run"),
            "--storage-driver", "overlay"]  # fmt: skip


def build_dockerfile(
    context: Path,
    dockerfile: Path,
    tag: str,
    archive: Path,
    *,
    build_args: Mapping[str, str] | None = None,
) -> Built:
    """``buildah bud`` of any Dockerfile in the same private store, so ``FROM`` an image built
    here (``localhost/corral:<version>``: an image with a user's plugin) needs no registry;
    exported as the docker archive ``archive`` tagged ``tag``."""
    ensure_packages(load_node_pins().image_packages)
    started = time.monotonic()
    archive.parent.mkdir(parents=True, exist_ok=True)
    args = [a for k, v in sorted((build_args or {}).items()) for a in ("--build-arg", f"{k}={v}")]
    with tempfile.TemporaryDirectory() as tmp:
        mounts: list[str] = []
        if HOST_CA_BUNDLE.is_file():
            pip_conf = Path(tmp) / "pip.conf"
            pip_conf.write_text(f"[global]\ncert = {HOST_CA_BUNDLE}\n")
            mounts = ["-v", f"{HOST_CA_BUNDLE}:{HOST_CA_BUNDLE}:ro",
                      "-v", f"{pip_conf}:/etc/pip.conf:ro"]  # fmt: skip
        log = archive.with_suffix(".build.log")
        _say(f"buildah bud {dockerfile} -> {tag} (log: {log})")
        _run(
            "buildah bud",
            [*_buildah(), "bud", "--pull=never", "--network", "host", "--isolation", "oci",
             "--layers", *args, *mounts, "-f", str(dockerfile), "-t", tag, str(context)],
            log=log,
        )  # fmt: skip
    archive.unlink(missing_ok=True)
    _say(f"exporting {archive}")
    _run("buildah push", [*_buildah(), "push", "-q", tag, f"docker-archive:{archive}:{tag}"])
    built = Built(archive, tag, time.monotonic() - started)
    _say(f"{tag}: {archive} ({built.size_mb:.0f} MB) in {built.seconds:.0f}s")
    return built
