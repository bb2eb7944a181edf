"""Standard output redirected to a file (`lamar whatif --json > FILE`), written whole or refused naming the
file: Python's own stdout takes a short write on a full disk for done, and the command exits 0."""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from lamar._errors import LamarError

_FULL = ("ENOSPC", "EDQUOT", "EFBIG")  # the disk or the user's quota is full, or the file at its size limit


class OutputFailed(LamarError, OSError):
    """The command's output could not be written whole to the file standard output goes to."""


class _Whole(io.RawIOBase):
    """A file descriptor that takes every byte or raises: `os.write` until all are written, so the error of
    the write after a short one (the disk full) is raised, where a plain descriptor reports the short count."""

    def __init__(self, fd: int, name: str) -> None:
        super().__init__()
        self._fd, self._name = fd, name
        self._failed = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False  # a regular file

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        if self._failed:  # refused once: what the buffer still holds goes nowhere, and no error again at exit
            return len(view)
        done = 0
        try:
            while done < len(view):
                done += os.write(self._fd, view[done:])
        except OSError as exc:
            self._failed = True
            raise _refusal(exc, self._name) from exc
        return done


def _refusal(exc: OSError, name: str) -> OutputFailed:
    import errno

    full = any(exc.errno == getattr(errno, code, None) for code in _FULL)
    advice = ("free space on that disk, or redirect the output to a file on another one, then run the command "
              "again" if full else "redirect the output to a file you can write, then run the command again")
    return OutputFailed(f"could not write the output to {name} (standard output): {exc.strerror or exc}; what "
                        f"it holds is cut short: {advice}")


def _file_name(fd: int) -> str:
    """The path of the file behind `fd`, as Linux tells it; else "the file standard output goes to"."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "the file standard output goes to"


@contextmanager
def whole_stdout() -> Iterator[None]:
    """While the block runs, `sys.stdout` writes whole or raises `OutputFailed` when it is a regular file; a
    terminal, a pipe (whose reader leaving is `BrokenPipeError`) or a captured stream is left as it is."""
    stream = sys.stdout
    try:
        fd = stream.fileno()
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is an OSError and a ValueError
        regular = False
    if not regular:
        yield
        return
    stream.flush()
    whole = io.TextIOWrapper(io.BufferedWriter(_Whole(fd, _file_name(fd))), encoding=stream.encoding,
                             errors=stream.errors, line_buffering=bool(stream.line_buffering))
    sys.stdout = whole
    try:
        yield
    finally:
        sys.stdout = stream
        # A command flushes its output before it returns (and is refused then); one that failed after printing
        # has said why already, so what it printed and could not be written goes unsaid.
        with suppress(OutputFailed):
            whole.flush()
        whole.detach()  # nothing left for the exit to write, and the descriptor stays open


__all__ = ["OutputFailed", "whole_stdout"]
