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


def reset_away(entries: list[tuple[str, str, str]], sha: str) -> bool:
    """Whether HEAD's reflog shows a `git reset` from `sha`, or from a commit made on top of it or amending it,
    to a commit that is neither: the line of work that holds `sha` left HEAD by a reset, not a checkout."""
    line: set[str] = set()
    for old, new, message in entries:
        if not line:
            if new == sha:
                line.add(sha)  # the commit is made (or checked out) here
            continue
        if old not in line:
            continue
        if message.startswith(_RESET):
            if new not in line:
                return True
        elif not message.startswith("checkout: "):
            line.add(new)  # a commit on top, an amend, a fast-forward: the line goes on
    return False


def dropped(repo: str, sha: str, files: list[str], base: str | None) -> bool:
    """Whether `sha`, which shipped `files`, was thrown away by a `git reset`: HEAD's reflog shows it reset away
    (`reset_away`), no branch, tag or remote holds it, no other commit past `base` holds those files (a squash
    or a rebase rewrites the work and keeps it), and the files are as before the edit."""
    if not reset_away(_reflog(repo), sha):
        return False  # the common case, read from the reflog file with no git process
    held = git(repo, "for-each-ref", "--contains", sha, "--count=1", "--format=%(refname)")
    if held is None or held.strip():
        return False  # a branch, a tag or a remote still holds it
    later = git(repo, "log", "--all", *([f"^{base}"] if base else []), "--format=%H", "-n", "1", "--", *files)
    if later is None or later.strip():
        return False
    status = git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all", "--", *files)
    return status is not None and not status.strip()


def read_outcome(repo: str, episode: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """`outcomes.read_git`, and a shipped commit (corrected since or not) `dropped` by a reset read as REVERTED."""
    found = read_git(repo, episode)
    sha = episode.get("commit")
    if (found is None and episode.get("signal") in ("shipped", "corrected") and isinstance(sha, str)
            and dropped(repo, sha, [f for f in episode.get("files", []) if isinstance(f, str)], episode.get("base"))):
        return "reverted", f"commit {sha[:12]} was dropped by git reset, its files as before the edit", sha
    return found


__all__ = ["dropped", "read_outcome", "reset_away"]
