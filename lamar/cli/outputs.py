"""Where a command may write: never over a store, nor over a file Lamar did not make, unless --force."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from lamar.atomic import write_output
from lamar.cli.session import UsageError

HTML_GENERATOR = '<meta name="generator" content="lamar html">'
# Each kind of file is recognised by how it opens, never by text found further in: a store's
# lessons and contexts are free text, and may quote any of these markers.
_REPORT = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"format"\s*:\s*"lamar-sleep-report"\s*,')  # UTF-8 BOM too
_HTML = re.compile(rb'\A<!DOCTYPE html>\s*<html[^>]*>\s*<head>\s*<meta charset="utf-8">\s*'
                   + re.escape(HTML_GENERATOR.encode()))


def _head(path: Path, size: int = 4096) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def is_store_file(path: Path) -> bool:
    """Whether `path` holds a Lamar store (SQLite, or a JSON store) by its first bytes."""
    from lamar.store.files import file_kind

    return file_kind(path) is not None


def is_html_page(path: Path) -> bool:
    return bool(_HTML.match(_head(path, 2048)))


def is_sleep_report(path: Path) -> bool:
    return bool(_REPORT.match(_head(path)))


def report_refusal(path: Path) -> str | None:
    """Why a sleep report must not be written to `path` (a folder, a store, a file Lamar did not
    make), else None: `lamar ui`'s Run sleep replaces the file whole, with no --force to ask for."""
    if path.is_dir():
        return f"{path} is a folder: name a file for the sleep report"
    if not path.parent.is_dir():
        return f"{path} is in a folder that does not exist ({path.parent}): name a file in an existing folder"
    if not path.exists() or is_sleep_report(path):
        return None
    if is_store_file(path):
        return f"{path} is a Lamar store; a sleep report written there would destroy it: name another file"
    return f"{path} already exists and is not a sleep report; Run sleep would replace it: name another file"


def check_output(out: str, *, ours: Callable[[Path], bool], what: str, force: bool) -> None:
    """Raise UsageError unless writing `what` to `out` replaces nothing but Lamar's own `what`.

    `lamar html --out`, `lamar sleep --out` and `lamar export --out` write files; a slip of the
    keyboard (`--out experience.db`) must not replace a store or someone's document with a report.
    A file is recognised as Lamar's own by its content: the HTML page's generator tag, the sleep
    report's format field, a store's header.

    Args:
        out: the path the user gave.
        ours: recognises a file this command wrote before (safe to replace).
        what: names the output in the message ("the HTML page").
        force: --force: overwrite whatever is there.

    A missing folder is the command's to create when it writes (as a new store's is); a file
    where a folder would have to be is refused here, before the work (and the model calls)
    the output would hold.
    """
    if not out:  # Path("") is the current folder: say what is wrong, not that it is a folder
        raise UsageError(f"--out is empty: name the file to write {what} to")
    path = Path(out).expanduser()
    if path.is_dir():
        raise UsageError(f"--out {out} is a folder: name a file")
    above = next(folder for folder in path.absolute().parents if folder.exists())
    if not above.is_dir():
        raise UsageError(f"--out {out} is under {above}, which is a file, not a folder: name a file in a folder")
    if force or not path.exists() or ours(path):
        return
    if is_store_file(path):
        raise UsageError(f"--out {out} is a Lamar store; writing {what} there would destroy it: name another "
                         "file (or pass --force if you really mean to overwrite it)")
    raise UsageError(f"--out {out} already exists and was not written by Lamar: name a new file for {what}, "
                     "or pass --force to overwrite it")


__all__ = ["HTML_GENERATOR", "check_output", "is_html_page", "is_sleep_report", "is_store_file", "report_refusal",
           "write_output"]
