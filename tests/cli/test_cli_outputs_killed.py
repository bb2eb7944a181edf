"""Every other file a command writes (`html --out`, `sleep --out`, `review`'s decisions,
`export-rules --to`) is replaced whole: killed before the rename, the old file stays as it was;
a path that is a link has its target written, and stays a link."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.killed import kill_when_stalled

# The command, stopped for good just before its new file replaces the old one (the parent kills it there);
# the last sleep's figures, which every sleep keeps beside the store first, go in unstalled.
_STALLED = """
import os, sys, time

real = os.replace

def stalled(src, dst, *args, **kwargs):
    if os.path.basename(str(src)).endswith(".tmp") and not str(dst).endswith(".last-sleep.json"):
        print("stalled", flush=True)
        time.sleep(120)
    real(src, dst, *args, **kwargs)

os.replace = stalled
from lamar.cli import main
sys.exit(main(sys.argv[1:]))
"""

_OUTPUTS = {"html": "page.html", "sleep": "report.json", "review": "report.json", "export-rules": "AGENTS.md"}


def _args(command: str, store: Path, out: Path) -> list[str | os.PathLike[str]]:
    if command == "review":
        return ["--store", store, "review", out]
    if command == "export-rules":
        return ["--store", store, "export-rules", "--to", out]
    return ["--store", store, command, "--out", out]


def _first(lamar_cli, command: str, store: Path, out: Path) -> bytes:  # type: ignore[no-untyped-def]
    """Write the output once, as the command would (a rules file starts as the user's own text)."""
    if command == "export-rules":
        out.write_text("# Our rules\n- keep it short\n", encoding="utf-8")
    elif command == "review":
        assert lamar_cli("--store", store, "sleep", "--out", out).returncode == 0
    else:
        assert lamar_cli(*_args(command, store, out)).returncode == 0
    return out.read_bytes()


@pytest.mark.parametrize("command", list(_OUTPUTS))
def test_an_output_killed_before_its_rename_is_left_as_it_was(lamar_cli, json_store, tmp_path, command):
    out = tmp_path / _OUTPUTS[command]
    before = _first(lamar_cli, command, json_store, out)
    proc = subprocess.Popen([sys.executable, "-c", _STALLED, *map(str, _args(command, json_store, out))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env={**os.environ, "HOME": str(tmp_path / "home")})
    kill_when_stalled(proc, feed="y\n" * 20)  # review: approve every proposal
    assert out.read_bytes() == before
    # At most the new copy, under a hidden name that says whose it is.
    assert all(p.name.startswith(f".{out.name}.") and p.name.endswith(".tmp")
               for p in tmp_path.iterdir() if p.name.startswith(".")), list(tmp_path.iterdir())


@pytest.mark.parametrize("command", list(_OUTPUTS))
def test_an_output_that_is_a_link_has_its_target_written(lamar_cli, json_store, tmp_path, command):
    target = tmp_path / "kept" / _OUTPUTS[command]
    target.parent.mkdir()
    _first(lamar_cli, command, json_store, target)
    before = target.stat().st_ino
    link = tmp_path / f"link-{_OUTPUTS[command]}"
    link.symlink_to(target)
    done = lamar_cli(*_args(command, json_store, link), stdin="y\n" * 20)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and link.resolve() == target and target.stat().st_ino != before  # a new file, there
    assert not [p for folder in (tmp_path, target.parent) for p in folder.iterdir() if p.name.startswith(".")]
