"""Processes run as other users of this machine (root on Linux, with setpriv): `need_root`, `as_user`,
`user_env`, and two uids no account holds, `OWNER` and `STRANGER`."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import IN_CI

OWNER, STRANGER = 54321, 54322  # uids no account holds: nothing of theirs on this machine but what a test makes
_ROOT = Path(__file__).resolve().parents[1]


def need_root() -> None:
    """Skip (fail in CI) unless this runs as root on Linux with setpriv."""
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("setpriv") is None:
        if IN_CI:
            pytest.fail("these tests run as root on Linux, with setpriv, to start processes as other users")
        pytest.skip("needs root on Linux and setpriv, to start processes as other users")


def as_user(uid: int) -> list[str]:
    """A command prefix that runs as `uid`, an ordinary user; it keeps only the right to read any file,
    as this Python may live in root's home (0700), where no other user could start it."""
    caps = "+dac_read_search"
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", f"--inh-caps={caps}",
            f"--ambient-caps={caps}"]


def user_env(home: Path) -> dict[str, str]:
    """This environment with `home` as HOME and TMPDIR, and this source tree on the import path."""
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "TMPDIR")}
    return {**env, "HOME": str(home), "TMPDIR": str(home),
            "PYTHONPATH": f"{_ROOT}{os.pathsep}{_ROOT / 'integrations'}"}


__all__ = ["OWNER", "STRANGER", "as_user", "need_root", "user_env"]
