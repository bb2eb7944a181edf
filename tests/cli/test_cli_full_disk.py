"""A file a command writes (`--out`, a review's decisions) that the disk cannot take: one line that
names it, the file that was there before left whole, and no temporary copy of it left behind."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

# What a file may grow to in the command's process (`ulimit -f`): a write past it fails with EFBIG,
# as one fails on a full disk (a JSON store is read without writing, SQLite's would make its -shm).
LIMIT = 1024


def _limited(tmp_path: Path, *args: str | os.PathLike[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "LAMAR_STORE"}
    env["HOME"] = str(tmp_path)
    # A capped write leaves a cut .pyc in the tests' shared cache, which later imports fail on.
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    return subprocess.run([sys.executable, "-m", "lamar.cli", *map(str, args)], input=stdin, capture_output=True,
                          text=True, env=env, cwd=tmp_path, preexec_fn=cap, timeout=60, check=False)


def _temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("command", ["sleep", "html"])
def test_an_output_the_disk_cannot_take_is_named_and_the_previous_one_is_left_whole(
        lamar_cli, json_store, tmp_path, command):  # type: ignore[no-untyped-def]
    out = tmp_path / "out" / ("report.json" if command == "sleep" else "page.html")
    assert lamar_cli("--store", json_store, command, "--out", out).returncode == 0
    before = out.read_bytes()
    assert len(before) > LIMIT
    done = _limited(tmp_path, "--store", json_store, command, "--out", out)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert str(out) in line and "too large" in line and "left as it was" in line
    assert out.read_bytes() == before
    assert _temp_files(out.parent) == []


def test_a_review_the_disk_cannot_take_keeps_the_report_and_leaves_no_temporary_file(
        lamar_cli, json_store, tmp_path):  # type: ignore[no-untyped-def]
    out = tmp_path / "report.json"
    assert lamar_cli("--store", json_store, "sleep", "--out", out).returncode == 0
    before = out.read_bytes()
    done = _limited(tmp_path, "--store", json_store, "review", out, stdin="a\n" * 20)  # approve each
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert str(out) in done.stderr.splitlines()[-1]
    assert out.read_bytes() == before
    assert _temp_files(tmp_path) == []


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("suffix", [".db", ".json"])
@pytest.mark.parametrize("where", ["copies", "new/deeper"])
@pytest.mark.parametrize("command", ["export", "import"])
def test_a_copy_into_a_new_store_the_disk_cannot_take_leaves_nothing_it_made_and_says_why(
        json_store, tmp_path, suffix, where, command):  # type: ignore[no-untyped-def]
    (tmp_path / "copies").mkdir()
    before = _tree(tmp_path)
    made = tmp_path / where / f"store{suffix}"
    args = ("--store", json_store, "export", "--out", made) if command == "export" else (
        "--store", made, "import", json_store)
    done = _limited(tmp_path, *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert str(made) in line and "size limit" in line and "nothing was left" in line and "run again" in line
    assert _tree(tmp_path) == before  # no store, -wal, -shm, .lock nor folder of the failed copy


def test_a_failed_export_never_removes_a_file_that_was_there(json_store, tmp_path):  # type: ignore[no-untyped-def]
    out = tmp_path / "copy.db"
    out.touch()  # an empty file SQLite takes for an empty database: the user's, not the export's
    before = _tree(tmp_path)
    done = _limited(tmp_path, "--store", json_store, "export", "--out", out, "--force")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert out.exists()
    assert set(before) <= set(_tree(tmp_path))
