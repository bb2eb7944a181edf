"""The private file that opens the browser on `lamar ui`'s address, so the token is on no command line.
A browser started on the address itself would carry the token in its arguments, which any local user reads."""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

OPEN_DIR = "LAMAR_UI_OPEN_DIR"


@contextlib.contextmanager
def redirect_file(url: str) -> Iterator[Path]:
    """A page, readable by this user only, that sends the browser on to `url`; removed with its
    folder when the block ends. Jupyter Server opens its token the same way (`use_redirect_file`)."""
    folder = Path(tempfile.mkdtemp(prefix="lamar-ui-", dir=_parent()))  # made 0700, under a name no one can foresee
    path = folder / "open.html"
    try:
        target = html.escape(url, quote=True)
        page = ('<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
                f'<meta http-equiv="refresh" content="0;url={target}">'
                f'<title>lamar ui</title></head>\n<body><p><a href="{target}">Open lamar ui</a></p></body></html>\n')
        # 0600 from the moment it exists: written in place, it is never readable by others, even briefly
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(page)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the token dies with the server: nothing of it stays on disk


def _parent() -> str | None:
    """Where the private folder is made: LAMAR_UI_OPEN_DIR when set (a sandboxed browser, such as a
    snap, reads neither $XDG_RUNTIME_DIR nor /tmp: a plain folder in the home is one it reads), else
    $XDG_RUNTIME_DIR (the user's own, 0700, wiped at logout), else the temporary folder."""
    chosen = os.environ.get(OPEN_DIR)
    if chosen:
        parent = Path(chosen).expanduser()
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return str(parent)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return runtime if runtime and os.path.isdir(runtime) else None


__all__ = ["OPEN_DIR", "redirect_file"]
