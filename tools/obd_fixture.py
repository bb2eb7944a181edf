"""Fetch the Open Bandit Dataset sample for `python -m lamar.whatif.obd`, verified by SHA-256.

The sample (ZOZOTOWN fashion recommendations; Saito, Aihara, Matsutani and Narita, "Open Bandit
Dataset and Pipeline", NeurIPS 2021 Datasets and Benchmarks; the data under CC BY 4.0) ships
inside the source distribution of the `obp` package. This script downloads that sdist with pip's
ordinary client, checks the archive's hash, extracts the six logs, their item tables and the
Thompson sampling prior, and checks each file's hash. Nothing is imported from obp.

    python tools/obd_fixture.py            # into ~/.cache/lamar/obd (or $LAMAR_OBD_DIR)
    python tools/obd_fixture.py --dir DIR

It exits 0 when the files are in place and verified (a second run downloads nothing), 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

SDIST = "obp-0.5.7.tar.gz"
SDIST_SHA256 = "3060d67fedfcfadf1e7a6f2608987f74412b5eb74d2c567edeb147595c68f2a0"
PREFIX = "obp-0.5.7/obp/"
FILES = {
    "dataset/obd/bts/all/all.csv": "0ad874e4dbf6902f0845dd478ad8dde5ef6903583d3ffaace78411bdad064106",
    "dataset/obd/bts/all/item_context.csv": "5d4359ba1cfa3ae88f0f1bae66bd633859fe6323817183632ee57b83539d9153",
    "dataset/obd/bts/men/item_context.csv": "3b411ed6b0471316321a6b93f4f756bb25888eac6218cd71d0b603d41d85732d",
    "dataset/obd/bts/men/men.csv": "db6d1f7ed2d591ba521533e45286d4c1fba7fe57a8ad2e80342210335f43c527",
    "dataset/obd/bts/women/item_context.csv": "a56295bad066a558eb783055afd9279f5f4e209a4776eafc22151c53f0ac89d4",
    "dataset/obd/bts/women/women.csv": "e5d1b49a39b608585a2f3014a3f54970430cd37a495c1b73fceb85cdf428a5b8",
    "dataset/obd/random/all/all.csv": "7168295b6e0a9eabcf3392320a5dd434e542b68e705d5cd9491499af589812f1",
    "dataset/obd/random/all/item_context.csv": "eba04cc23d5f130a93ff174c5392986882b94c3839433cb8143870eaa6221358",
    "dataset/obd/random/men/item_context.csv": "6d855c2b7e917d0448d71bbe62c023147495882c0fdc8c41e86fef86abf9fe09",
    "dataset/obd/random/men/men.csv": "ede6d08c6877f99cd3770f7d09e26c738e6aa6de4445ccccfb1356ba5d06b1eb",
    "dataset/obd/random/women/item_context.csv": "b1ca4905f97703d196004f2ad4552c1e90c2afad8b50688d333b0d2dc0b33147",
    "dataset/obd/random/women/women.csv": "e65f3bd3beb17664fa69cc129bf7bf852a775f8ffa630506e505fc905315bb34",
    "policy/conf/prior_bts.yaml": "81a54fbdc184021ccc62ab97de81ec35461c032e3d7f99ccaa0a9745f732d251",
}


def default_dir() -> Path:
    return Path(os.environ.get("LAMAR_OBD_DIR") or Path.home() / ".cache" / "lamar" / "obd")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(target: Path) -> list[str]:
    """The files missing or not matching their hash under `target` (empty: all in place)."""
    return [name for name, digest in FILES.items()
            if not (target / name).is_file() or sha256(target / name) != digest]


def fetch(target: Path) -> None:
    """Download the sdist, verify it, extract the listed files into `target` and verify them."""
    with tempfile.TemporaryDirectory() as scratch:
        # pip's own client; --ignore-requires-python because obp declares Python < 3.11 and only
        # its data files are wanted here (nothing is built or installed).
        command = [sys.executable, "-m", "pip", "download", "obp==0.5.7", "--no-deps", "--no-binary", ":all:",
                   "--ignore-requires-python", "--quiet", "-d", scratch]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        archive = Path(scratch) / SDIST
        if not archive.is_file():
            raise SystemExit(f"pip could not download {SDIST}:\n{done.stderr.strip()}")
        if sha256(archive) != SDIST_SHA256:
            raise SystemExit(f"{SDIST} does not match its SHA-256 ({sha256(archive)}); nothing extracted")
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive, "r:gz") as tar:
            for name in FILES:
                member = tar.getmember(PREFIX + name)
                source = tar.extractfile(member)
                if source is None:
                    raise SystemExit(f"{name} is not a file in {SDIST}")
                out = target / name
                out.parent.mkdir(parents=True, exist_ok=True)
                partial = out.with_suffix(out.suffix + ".part")
                partial.write_bytes(source.read())
                os.replace(partial, out)  # a reader never sees half a file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=None, help="where to put the files (default: %(default)s)")
    args = parser.parse_args(argv)
    target = args.dir or default_dir()
    if verified(target):
        fetch(target)
    bad = verified(target)
    if bad:
        print(f"{len(bad)} file(s) under {target} do not match their SHA-256: {', '.join(bad)}", file=sys.stderr)
        return 1
    print(f"Open Bandit Dataset sample verified in {target} ({len(FILES)} files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
