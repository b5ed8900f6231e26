"""``hack/image``: build this checkout's image with buildah (see :mod:`corral_dev.images`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from corral import __version__
from corral_dev.builds import load_node_pins
from corral_dev.hostpackages import HostPackagesError, ensure_packages
from corral_dev.images import ImageError, build_image


def main(argv: Sequence[str] | None = None) -> int:
    """``hack/image [--out DIR]``: the image of this checkout, into ``DIR`` (default dist/)."""
    parser = argparse.ArgumentParser(prog="image", description=main.__doc__)
    repo = Path(__file__).resolve().parents[2]
    parser.add_argument("--out", type=Path, default=repo / "dist")
    args = parser.parse_args(argv)
    try:
        ensure_packages(load_node_pins().image_packages)
        built = build_image(repo, args.out, __version__)
    except (ImageError, HostPackagesError) as exc:
        print(f"[image] error: {exc}", file=sys.stderr)
        return 1
    print(built.archive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
