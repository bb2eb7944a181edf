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
    hooks, a script) names the one beside its interpreter.
    """
    import shutil

    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    ran = argv0 if argv0.stem == "lamar" else Path(sys.executable).with_name("lamar")
    found = shutil.which("lamar")
    with contextlib.suppress(OSError):  # a PATH entry that vanished or may not be read: not this one
        if found and ran.is_file() and os.path.samefile(found, ran):
            return "lamar"
    if ran.is_file():
        return shlex.quote(str(ran.absolute()))
    return f"{shlex.quote(sys.executable)} -m lamar.cli"


__all__ = ["program_name"]
