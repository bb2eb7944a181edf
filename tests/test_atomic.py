"""`lamar.atomic.replace_file`: whole or not at all, through a link at the path, never through one
planted at its temporary name."""

from __future__ import annotations

import os
import secrets
import stat
import threading
from pathlib import Path

import pytest

from lamar.atomic import replace_file


def test_a_link_at_the_path_has_its_target_replaced(tmp_path: Path) -> None:
    target = tmp_path / "rows.json"
    target.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    replace_file(link, b"new")
    assert link.is_symlink() and target.read_text() == "new"  # a plain write to the link did so too


def test_a_link_planted_at_the_temporary_name_is_never_written_through(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # In a folder others may write, a temporary name one can guess lets a planted link aim the
    # data at any file the writer may write.
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    out = tmp_path / "page.html"
    monkeypatch.setattr(secrets, "token_hex", lambda n: "guessed")
    for guess in (f".page.html.{os.getpid()}.{threading.get_ident()}.tmp", ".page.html.guessed.tmp"):
        (tmp_path / guess).symlink_to(victim)
    try:
        replace_file(out, b"<html>")
    except FileExistsError:
        pass  # refused: the name was taken
    assert victim.read_text() == "keep me"


def test_the_copy_of_a_private_file_is_private_while_it_is_written(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # The copy was made 0666 less the umask and given the file's mode only before the rename.
    report = tmp_path / "report.json"
    report.write_text("{}")
    report.chmod(0o600)
    seen: list[int] = []
    fsync = os.fsync

    def looked(fd: int) -> None:
        seen.append(os.fstat(fd).st_mode & 0o777)
        fsync(fd)

    monkeypatch.setattr(os, "fsync", looked)
    replace_file(report, b"{ }")
    assert seen == [0o600] and report.stat().st_mode & 0o777 == 0o600


def test_a_pipe_or_device_at_the_path_is_written_into_not_replaced(tmp_path: Path) -> None:
    # `--json /dev/stdout` or `--json /dev/null`: a rename over a device put a regular file where
    # /dev/null was, for every program after.
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        replace_file(fifo, b"new")
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        assert os.read(reader, 100) == b"new"
    finally:
        os.close(reader)
