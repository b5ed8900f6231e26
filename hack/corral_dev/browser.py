"""Headless Chromium (Debian's ``chromium`` package) for tests that look at a page.

Contract: :func:`ensure_chromium` installs the package when missing (through
:mod:`corral_dev.hostpackages`, so a fresh CI machine gets it from the test that needs it;
about 30 s there), :func:`screenshot` renders one local file to a PNG at a fixed size with a
fresh profile and no network use (the flags this machine needs: without the background
networking ones Chromium dials out at start and is refused), and raises
:class:`BrowserError` with Chromium's last lines when it fails.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Final

from corral_dev.hostpackages import ensure_packages

PACKAGES: Final = ("chromium",)
BINARY: Final = "chromium"
FLAGS: Final = (
    "--headless",
    "--no-sandbox",  # root, as CI runs
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)
TIMEOUT: Final = 60.0


class BrowserError(RuntimeError):
    """Chromium could not render the page."""


def ensure_chromium() -> str:
    ensure_packages(PACKAGES)
    found = shutil.which(BINARY)
    if found is None:
        raise BrowserError(f"{BINARY} is installed but not on PATH")
    return found


def screenshot(page: Path, png: Path, *, width: int = 1200, height: int = 1600) -> Path:
    binary = ensure_chromium()
    with tempfile.TemporaryDirectory(prefix="corral-chromium-") as profile:
        argv = [
            binary,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            page.resolve().as_uri(),
        ]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    if result.returncode != 0 or not png.exists():
        tail = "\n".join(result.stderr.strip().splitlines()[-5:])
        raise BrowserError(f"chromium exited {result.returncode}: {tail}")
    return png
