"""The context of a Claude Code prompt: project, language, task class and error class, from plain rules."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from lamar.tasks import PROMPT_SCAN, error_class, task_class
from lamar_claude_code.commands import command_prompt

# A repository's language is the most frequent of these among its tracked files.
LANGUAGES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".ts": "typescript", ".tsx": "typescript", ".swift": "swift", ".rs": "rust",
    ".go": "go", ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".rb": "ruby", ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".cs": "csharp", ".php": "php",
    ".scala": "scala", ".m": "objective-c", ".mm": "objective-c", ".sh": "shell", ".bash": "shell",
    ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".lua": "lua", ".dart": "dart",
    ".clj": "clojure", ".ml": "ocaml", ".zig": "zig", ".jl": "julia", ".r": "r", ".vue": "vue",
    ".svelte": "svelte", ".sql": "sql", ".tf": "terraform",
}
LANGUAGE_TTL = 24 * 3600.0  # at most, and only while the repository's listing is unchanged
_SCAN_LIMIT = 5000  # files looked at in a folder that is not a git repository

# A sub-folder holding one of these has rules of its own, which `lamar import-rules` scopes with
# FOLDER_KEY (lamar.rules' FOLDER_RULES and FOLDER_KEY; copied, to keep lamar.rules out of the hook).
FOLDER_RULES = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", ".claude/CLAUDE.md")
FOLDER_KEY = "folder"
# Characters: Linux's PATH_MAX. A longer "path" names no file, and resolving one costs time that
# grows with the square of its parts (a few thousand take longer than Claude Code waits).
MAX_PATH = 4096


def own_command(prompt: str) -> bool:
    """Whether the prompt is one of the plugin's commands (`/lamar:status`), as Claude Code hands it to
    UserPromptSubmit. It asks about the hooks, not for work: as an episode it would be reported accepted with
    whatever lessons it got, and as the next prompt it would read as moving on from the turn before."""
    return prompt.lstrip().startswith("/lamar:")


def find_repo(cwd: str | os.PathLike[str]) -> Path | None:
    """The git top-level above `cwd` (a `.git` folder or file), found without running git; None
    outside one, or for a `cwd` longer than any path (`MAX_PATH`)."""
    if len(os.fspath(cwd)) > MAX_PATH:
        return None
    path = Path(cwd).resolve()
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return None


def rules_folder(repo: Path, path: str | os.PathLike[str]) -> str:
    """The innermost sub-folder of `repo` that holds `path` and has rules files of its own
    ("frontend/"), or "" when only the project's top has any: the `folder` of the context.

    >>> rules_folder(Path("/nowhere"), "/elsewhere/app.py")
    ''
    """
    top = os.path.realpath(repo)
    here = Path(os.path.realpath(path))
    if not here.is_dir():
        here = here.parent
    try:
        parts = here.relative_to(top).parts
    except ValueError:
        return ""  # outside the repository
    for depth in range(len(parts), 0, -1):
        folder = Path(top, *parts[:depth])
        if parts[depth - 1] != ".claude" and any((folder / name).is_file() for name in FOLDER_RULES):
            return "/".join(parts[:depth]) + "/"
    return ""


def project_name(cwd: str | os.PathLike[str], repo: Path | None) -> str | None:
    """The git top-level's folder name, else the working folder's; None in the file system's root or the
    home folder outside git, which hold no project (`lamar.projects.project_of`, as `lamar mcp` has it)."""
    from lamar.projects import project_of

    return project_of(repo or cwd)


def language_of(folder: Path, is_repo: bool, cache: MutableMapping[str, Any], now: float | None = None) -> str:
    """The dominant language of the folder's files ("" when none is known): the one with the most
    files, on a tie the most bytes, then the first by name. Cached for a day, and in a repository only
    while git's index holds as many files."""
    now = time.time() if now is None else now
    key = str(folder)
    hit = cache.get(key)
    mark = _listing_mark(folder, is_repo)
    if (isinstance(hit, Mapping) and now - float(hit.get("time", 0)) < LANGUAGE_TTL
            and hit.get("mark") == mark and mark is not None):
        return str(hit.get("language", ""))
    names = _tracked_files(folder) if is_repo else None
    if names is None:
        names = _scan(folder)
    files: dict[str, list[str]] = {}
    for name in names:
        language = LANGUAGES.get(os.path.splitext(name)[1].lower())
        if language:
            files.setdefault(language, []).append(name)
    language = _dominant(folder, files)
    cache[key] = {"language": language, "time": now, "mark": mark}
    return language


def _dominant(folder: Path, files: Mapping[str, list[str]]) -> str:
    """The language with the most files; a tie (a small repository: a script beside a module) goes to
    the one with more bytes, then to the first by name, so the same files always give the same answer."""
    most = max((len(names) for names in files.values()), default=0)
    tied = sorted(language for language, names in files.items() if len(names) == most)
    if len(tied) < 2:
        return tied[0] if tied else ""
    return max(tied, key=lambda language: (_bytes(folder, files[language]), -tied.index(language)))


def _bytes(folder: Path, names: list[str]) -> int:
    total = 0
    for name in names:
        with contextlib.suppress(OSError):
            total += os.stat(os.path.join(folder, name)).st_size
    return total


def _listing_mark(folder: Path, is_repo: bool) -> list[int] | None:
    """What changes when the files that decide the language may have: the number of entries git's index
    holds (its header: a `git status` that only refreshes the index keeps it, so no prompt pays for
    `git ls-files` again; no index yet, none); None when unreadable. Outside git nothing is watched: such
    a folder (the home folder, /tmp) gains and loses entries all day, and each change would cost a prompt
    a scan of thousands of files."""
    if not is_repo:
        return []
    try:
        with open(os.path.join(git_dir(folder), "index"), "rb") as handle:
            head = handle.read(12)
    except FileNotFoundError:  # a repository before its first add
        return [0]
    except OSError:
        return None
    return [int.from_bytes(head[8:12], "big")] if head[:4] == b"DIRC" else None


def git_dir(repo: str | os.PathLike[str]) -> str:
    """The repository's git folder: `.git`, or the folder a worktree's `.git` file names."""
    path = os.path.join(repo, ".git")
    if os.path.isfile(path):
        try:
            with open(path, encoding="utf-8") as handle:
                return os.path.join(repo, handle.read().partition("gitdir:")[2].strip())
        except (OSError, UnicodeDecodeError):
            return path
    return path


def _tracked_files(repo: Path) -> list[str] | None:
    try:
        done = subprocess.run(["git", "-C", str(repo), "-c", "core.fsmonitor=false", "ls-files", "-z"],
                              capture_output=True, timeout=5, check=False)  # as outcomes.git runs it
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace").split("\0")


def _scan(folder: Path) -> list[str]:
    out: list[str] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "venv", "build", "dist")]
        out.extend(files)
        if len(out) >= _SCAN_LIMIT:
            break
    return out


def derive_context(cwd: str, prompt: str, config: Any, cache: MutableMapping[str, Any], *,
                   worked: str | None = None, warn: Callable[[str], object] | None = None,
                   ruled: set[str] | None = None) -> dict[str, str]:
    """The recall context of one prompt: project, the rules folder of the work, language, task
    class, error class and the config's own keys; `config` is a `HookConfig`. Past a context's
    limit its longest entries are left out, and `warn` (default: a UserWarning) is told which.
    `ruled`, when given, gets "task" when a rule of the config named the task, not a built-in one.

    The folder (`rules_folder`) is that of `worked`, the file the session last edited, else of
    `cwd`: as Claude Code reads a sub-folder's CLAUDE.md once the session works in that folder.

    Plain rules decide, never a model; they are documented in docs/claude-code.md. A config file
    (see `lamar_claude_code.config`) can pin the project or language, add context keys, and put
    its own task and error rules before the built-in ones.
    """
    repo = find_repo(cwd)
    folder = repo or Path(cwd).resolve()
    # In / or the home folder outside git there is no project, nor a language of one: a project named
    # "root" or after the user, or the shell scripts under /, would scope lessons to work nobody does.
    project = project_name(cwd, repo)
    context = {"project": config.project or project} if config.project or project else {}
    folder_of_work = rules_folder(repo, worked or cwd) if repo is not None else ""
    if folder_of_work:
        context[FOLDER_KEY] = folder_of_work
    language = config.language or (language_of(folder, repo is not None, cache) if project else "")
    if language:
        context["language"] = language
    # A custom slash command is classified by what it asks Claude for, its error by what was typed with it.
    command = command_prompt(prompt, cwd, repo)
    task_text, typed = command or (prompt, prompt)
    # The config's rules first, as lamar.tasks.task_class takes them, told apart from the built-in ones.
    own = next((name for name, pattern in config.task_rules if re.search(pattern, task_text[:PROMPT_SCAN])), None)
    context["task"] = own or task_class(task_text)
    if ruled is not None and own:
        ruled.add("task")
    error = error_class(typed, config.error_rules)
    if error:
        context["error_class"] = error
    context.update(config.extra)
    from lamar.experience import fit_context  # here, not at the top: the hook imports Lamar only to recall

    return fit_context(context, where="the prompt's context", warn=warn)
