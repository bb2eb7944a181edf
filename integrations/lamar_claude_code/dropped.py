"""A shipped commit thrown away with `git reset` rather than `git revert`: its turn's work was dropped."""

from __future__ import annotations

import os
import re
from typing import Any

from lamar_claude_code.context import git_dir
from lamar_claude_code.outcomes import git, read_git

# The tail of HEAD's reflog read for resets: the window git settles in holds far fewer lines than this.
_REFLOG_TAIL = 256 * 1024
_LINE = re.compile(r"^([0-9a-f]{40}(?:[0-9a-f]{24})?) ([0-9a-f]+) [^\t\n]*\t([^\n]*)$", re.MULTILINE)
_RESET = "reset: moving to "
_PARSED: dict[tuple[str, int, int], list[tuple[str, str, str]]] = {}  # the last reflog read, by its size and time
_ANCESTOR_CHECKS = 5  # resets looked behind for a commit dropped with others (`reset --hard HEAD~2`)


def _reflog(repo: str) -> list[tuple[str, str, str]]:
    """HEAD's reflog, oldest first, as (old, new, message), read from its file (no process); empty when it
    holds no reset. One event looks at up to 20 shipped episodes of a repository: the file is parsed once."""
    path = os.path.join(git_dir(repo), "logs", "HEAD")
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            key = (path, info.st_size, info.st_mtime_ns)
            if key not in _PARSED:
                handle.seek(max(0, info.st_size - _REFLOG_TAIL))
                data = handle.read()
                _PARSED.clear()
                _PARSED[key] = ([] if b"\t" + _RESET.encode() not in data else
                                [(m[1], m[2], m[3]) for m in _LINE.finditer(data.decode("utf-8", "replace"))])
    except OSError:
        return []
    return _PARSED[key]


def dropped(repo: str, sha: str, files: list[str], base: str | None) -> bool:
    """Whether `sha`, which shipped `files`, was thrown away by a `git reset`: HEAD was reset away from it (or
    from a commit after it), no branch, tag or remote holds it, no other commit past `base` holds those files
    (an amend, a squash, a rebase rewrites the work and keeps it), and the files are as before the edit."""
    entries = _reflog(repo)
    if not any(message.startswith(_RESET) for _, _, message in entries):
        return False  # the common case: no reset, and no git process run
    same = {sha}  # the commit and those that amended it, which carry its work
    for old, new, message in entries:
        if message.startswith("commit (amend): ") and old in same:
            same.add(new)
    away = [old for old, _, message in entries if message.startswith(_RESET)][::-1]
    if not same & set(away) and not any(git(repo, "merge-base", "--is-ancestor", one, moved) is not None
                                        for moved in away[:_ANCESTOR_CHECKS] for one in same):
        return False
    for one in same:
        held = git(repo, "for-each-ref", "--contains", one, "--count=1", "--format=%(refname)")
        if held is None or held.strip():
            return False  # a branch, a tag or a remote still holds it
    later = git(repo, "log", "--all", *([f"^{base}"] if base else []), "--format=%H", "-n", "1", "--", *files)
    if later is None or later.strip():
        return False
    status = git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all", "--", *files)
    return status is not None and not status.strip()


def read_outcome(repo: str, episode: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """`outcomes.read_git`, and a shipped commit `dropped` by a reset read as REVERTED."""
    found = read_git(repo, episode)
    sha = episode.get("commit")
    if (found is None and episode.get("signal") == "shipped" and isinstance(sha, str)
            and dropped(repo, sha, [f for f in episode.get("files", []) if isinstance(f, str)], episode.get("base"))):
        return "reverted", f"commit {sha[:12]} was dropped by git reset, its files as before the edit", sha
    return found


__all__ = ["dropped", "read_outcome"]
