"""`rules_folder`: the folder the `import_rules` tool reads, checked: the server's own folder or one below it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from lamar_mcp.refusals import shown


def rules_folder(cwd: str, folder: Any) -> Path:
    """The folder to read for `folder` (None: the server's folder `cwd`), refused with what to pass
    when it is outside `cwd`, is not a folder, or is the file system's root or the home folder outside git.

    A client cannot make the server read files elsewhere on its machine; in the root (where a desktop
    app may start the server) the folder to read is named by the model, as the project's own path.
    """
    root = Path(cwd).resolve()
    if folder is not None and not isinstance(folder, str):
        raise ToolError(f"folder must be a path in this project; got {shown(folder)}")
    given = folder
    if folder and folder.startswith("~"):
        # Asked for the project's path, a model writes it as the user does ("~/shop"), which no client expands.
        try:
            folder = str(Path(folder).expanduser())
        except RuntimeError:  # no HOME and no home in the password database, or ~name for a user not known
            raise ToolError(f"no home folder is known here for {shown(given)}: pass the project's full path as "
                            "folder") from None
    try:  # a NUL or a name longer than the file system takes raises, where a plain miss is False
        where = (root / folder).resolve() if folder else root
        inside, usable, there = where.is_relative_to(root), where.is_dir(), where.exists()
    except (OSError, ValueError):
        inside = usable = there = False
    if inside and not usable:  # a path inside the project: the model mistyped a name, not the rule
        raise ToolError(f"no folder {shown(given)} in {root} ({'a file' if there else 'nothing'} is there): "
                        + _what_to_pass(root))
    if not (inside and usable):
        raise ToolError(f"folder must be a folder inside {root} (the project this server runs in); "
                        f"got {shown(given)}")
    if where == Path(where.anchor):  # every file of the machine is below it, and no project's rules are its own
        raise ToolError(f"this server runs in {where}, the file system's root, not in a project (a desktop app "
                        "may start it there): pass as folder the project's full path, or tell the user to start "
                        "lamar mcp in the project's folder")
    from lamar.projects import project_of

    if project_of(where) is None:  # the home folder outside git: recall names no project there to scope rules to
        raise ToolError(f"this server runs in {where}, your home folder, not in a project (a desktop app may start "
                        "it there): pass as folder the project's folder, relative to it, or tell the user to start "
                        "lamar mcp in the project's folder")
    return where


def _what_to_pass(root: Path) -> str:
    """The folder to pass instead of a missing one: outside a project (the root, the home folder outside
    git) leaving it out is refused too, so the advice there is the project's own path."""
    from lamar.projects import project_of

    if root == Path(root.anchor):
        return "pass as folder the project's full path"
    if project_of(root) is None:
        return "pass as folder the project's folder, relative to it, or its full path"
    return "pass a folder of this project, relative to it, or leave folder out for all of it"


__all__ = ["rules_folder"]
