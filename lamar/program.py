"""How to type the `lamar` that runs in the user's shell, for advice that names a command."""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from pathlib import Path


def program_name() -> str:
    """`lamar` when the shell's PATH finds this one, else its full path, else `python -m lamar.cli`.

    The quick start runs `~/lamar/.venv/bin/lamar`, and Claude Code may run a hook without the
    virtual environment on PATH: advice to type a bare `lamar` would then be "command not found".
    The `lamar` that ran (its argv[0]) is named first; a process Lamar does not own (the Agent SDK's
    hooks, a script) names the one beside its interpreter, unless the Python that script starts is gone.
    """
    import shutil

    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    ran = argv0 if argv0.stem == "lamar" else Path(sys.executable).with_name("lamar")
    found = shutil.which("lamar")
    if ran.is_file() and _starts(ran):
        with contextlib.suppress(OSError):  # a PATH entry that vanished or may not be read: not this one
            if found and os.path.samefile(found, ran):
                return "lamar"
        return shlex.quote(str(ran.absolute()))
    return f"{shlex.quote(sys.executable)} -m lamar.cli"


def _starts(script: Path) -> bool:
    """False when the script names a Python that is gone: a virtual environment moved keeps the old path in its
    scripts, so its `bin/lamar` says "not found" while `python -m lamar.cli` of the moved one still runs."""
    try:
        with script.open("rb") as handle:
            head = handle.read(1024).decode(errors="replace").splitlines()[:2]
    except OSError:
        return True
    if not head or not head[0].startswith("#!"):
        return True
    interpreter = (head[0][2:].split() or [""])[0]
    if head[1:] and head[1].startswith("'''exec' "):  # pip's launcher for a path with a space in it
        with contextlib.suppress(ValueError):
            interpreter = (shlex.split(head[1][len("'''exec' "):]) or [""])[0]
    return not os.path.isabs(interpreter) or os.access(interpreter, os.X_OK)


__all__ = ["program_name"]
