"""The project a folder belongs to, named the same way by recall in the Claude Code hooks, `lamar mcp`
and the rules importer: the git top-level folder's name, else the folder's, and none for / or home."""

from __future__ import annotations

import os
from pathlib import Path


def project_root(folder: str | os.PathLike[str]) -> Path:
    """The git top-level folder above `folder` (a `.git` folder or file), else `folder` itself, resolved."""
    path = Path(folder).resolve()
    return next((candidate for candidate in (path, *path.parents) if (candidate / ".git").exists()), path)


def outside_projects(folder: str | os.PathLike[str]) -> bool:
    """Whether `folder` is the file system's root or the home folder, where no project's files are.

    >>> outside_projects("/")
    True
    """
    path = Path(folder).resolve()
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError, OSError):  # no home to be found: only the root is outside
        home = path.parent
    return path.parent == path or path == home


def project_of(folder: str | os.PathLike[str]) -> str | None:
    """The project's name for work in `folder`: its git top-level folder's name, else the folder's own;
    None for the file system's root and the home folder outside git, which hold no project.

    A desktop app starts its tools in / or the home folder whatever the user works on, and a project
    named from either ("root", the user's name) would scope lessons to a project nobody works in.

    >>> project_of("/")
    """
    root = project_root(folder)
    if not (root / ".git").exists() and outside_projects(root):
        return None
    return root.name or "root"


__all__ = ["outside_projects", "project_of", "project_root"]
