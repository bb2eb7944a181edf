"""A measuring script's `--child` run on this tree and on an older commit's lamar/, for the scripts whose
`--before REV` prints the two side by side (tools/contradiction_pairs.py, tools/lesson_pairs.py)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def child(script: str, tree: Path) -> Any:
    """What `script --child` prints as JSON, run with `tree`'s lamar/ (and integrations/) first on the path."""
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'integrations'}"}
    done = subprocess.run([sys.executable, script, "--child"], env=env, capture_output=True, text=True,
                          check=True, cwd=tree)
    return json.loads(done.stdout)


def columns(script: str, before: str | None) -> dict[str, Any]:
    """`child` on `before`'s lamar/ (when given, as "before (REV)") and on this tree ("this tree"), in that order."""
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if before:
            archive = subprocess.run(["git", "archive", before, "lamar"], cwd=ROOT, capture_output=True,
                                     check=True).stdout
            with tarfile.open(fileobj=BytesIO(archive)) as tar:
                tar.extractall(tmp, filter="data")
            found[f"before ({before})"] = child(script, Path(tmp))
        found["this tree"] = child(script, ROOT)
    return found


def pairs_and_columns(parser: argparse.ArgumentParser, argv: list[str] | None, script: str,
                      child_run: Callable[[], None], data: Path) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """`parser` (the script's own) reads `--before REV` and `--child`: as the child, run `child_run` and give None;
    else `data`'s labelled pairs and `columns(script, REV)`."""
    parser.add_argument("--before", metavar="REV", help="a commit whose lamar/ to run side by side")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child_run()
        return None
    return json.loads(data.read_text(encoding="utf-8"))["pairs"], columns(script, args.before)
