"""Extras: the one pip command that installs an extra for this Lamar (which is not on PyPI, so never
an install of `lamar[x]` by name alone), the message naming it, and `require_extra` for integrations."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from typing import Any


def origin() -> dict[str, Any]:
    """Where this Lamar was installed from: pip's record of it (PEP 610 `direct_url.json`), or {}
    when it has none (run from a source tree, or installed some other way)."""
    import json  # here and below, not at the top: the CLI imports this module on every start
    from importlib import metadata

    try:
        found = json.loads(metadata.distribution("lamar").read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _installed(where: Mapping[str, Any] | None) -> tuple[str, Mapping[str, Any], str, str, str | None]:
    """pip for this interpreter; the install record (`where`, or this Lamar's); its URL; the local path a file
    URL names; and, for a clone, "-e " or "" as it was installed (None when it is no clone)."""
    from urllib.parse import unquote, urlparse

    where = origin() if where is None else where
    url = str(where.get("url", ""))
    path = unquote(urlparse(url).path) if url.startswith("file:") else ""
    clone = isinstance(where.get("dir_info"), Mapping) and os.path.isfile(os.path.join(path, "pyproject.toml"))
    editable = ("-e " if where["dir_info"].get("editable") else "") if clone else None
    return pip_command(), where, url, path, editable


def install_command(extra: str, where: Mapping[str, Any] | None = None) -> str:
    """The command that installs `extra` into this interpreter, for the Lamar it runs.

    From a clone (installed editable or not) it names that clone; from git, the same commit; from a
    wheel or an sdist still on disk, that file. Otherwise both ways the README gives.

    Args:
        extra: the extra's name, as in pyproject.toml ("mcp", "ui", ...).
        where: an install record as `origin()` reads it (default: this Lamar's).

    >>> git = {"url": "https://example.org/lamar.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}
    >>> install_command("ui", git).split(" install ")[1]
    '"lamar[ui] @ git+https://example.org/lamar.git@abc123"'
    """
    pip, where, url, path, editable = _installed(where)
    if editable is not None:  # installed as it was, copied or linked
        return f'{pip} install {editable}"{path}[{extra}]"'
    vcs = where.get("vcs_info")
    if isinstance(vcs, Mapping) and vcs.get("vcs") == "git" and url:
        commit = vcs.get("commit_id")
        return f'{pip} install "lamar[{extra}] @ git+{url}{"@" + str(commit) if commit else ""}"'
    if isinstance(where.get("archive_info"), Mapping) and url and (not path or os.path.isfile(path)):
        return f'{pip} install "lamar[{extra}] @ {url}"'
    return (f'{pip} install -e ".[{extra}]" in a clone of Lamar, '
            f'or {pip} install "lamar[{extra}] @ git+<repository URL>"')


def upgrade_command(where: Mapping[str, Any] | None = None) -> str:
    """The command that brings this Lamar to a newer version, for the way it was installed (see `install_command`).

    >>> upgrade_command({"url": "https://example.org/lamar.git", "vcs_info": {"vcs": "git"}}).split(" install ")[1]
    '-U "lamar @ git+https://example.org/lamar.git"'
    """
    import shlex

    pip, where, url, path, editable = _installed(where)
    if editable is not None:
        # An editable install runs the clone's code, but a reinstall brings any new dependency or command.
        return f'git -C {shlex.quote(path)} pull && {pip} install {editable}"{path}"'
    vcs = where.get("vcs_info")
    if isinstance(vcs, Mapping) and vcs.get("vcs") == "git" and url:
        return f'{pip} install -U "lamar @ git+{url}"'  # the branch's head, not the commit installed
    return (f'git pull in your clone of Lamar, then {pip} install -e ., '
            f'or {pip} install -U "lamar @ git+<repository URL>"')


def pip_command() -> str:
    """`python -m pip` for this interpreter: bare when `python` on PATH is it, else its full path."""
    import shlex
    import shutil

    return "python -m pip" if shutil.which("python") == sys.executable else f"{shlex.quote(sys.executable)} -m pip"


def needs_extra(what: str, extra: str, exc: BaseException | None = None) -> str:
    """The one message for a missing extra: `<what> (<why>), the <extra> extra: <install_command>`.

    >>> needs_extra("lamar x needs X", "x", ModuleNotFoundError("No module named 'x'")).split(": ")[0]
    "lamar x needs X (No module named 'x'), the x extra"
    """
    return f"{what}{f' ({exc})' if exc is not None else ''}, the {extra} extra: {install_command(extra)}"


def require_extra(package: str, framework: str, extra: str, *modules: str) -> None:
    """Import `modules` (what `package` builds on), or raise ModuleNotFoundError saying how to
    install the `extra` that brings `framework`.

    >>> require_extra("lamar_x", "X", "x", "json", "no_such_module")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: lamar_x needs X (No module named 'no_such_module'), the x extra: ...
    """
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(needs_extra(f"{package} needs {framework}", extra, exc), name=exc.name) from exc


__all__ = ["install_command", "needs_extra", "origin", "pip_command", "require_extra", "upgrade_command"]
