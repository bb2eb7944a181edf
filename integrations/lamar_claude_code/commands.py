"""A custom slash command as the prompt Claude gets: `/fix-tests cart` read through its `.claude/commands/`
file, so the task is classified from what the command asks for (docs/claude-code.md, "What gets injected")."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

# `/name args`, `/namespace:name args`: what Claude Code hands UserPromptSubmit when one is typed.
_COMMAND = re.compile(r"\s*/([A-Za-z0-9_][\w.-]*(?::[\w.-]+)*)(?:\s+(.*))?\s*\Z", re.DOTALL)
_FRONT_MATTER = re.compile(r"\A---\s*\n.*?\n---\s*(?:\n|\Z)", re.DOTALL)
_SPLIT_LIMIT = 2000  # characters of the arguments split into $0, $1, ...
_READ_LIMIT = 64 * 1024  # bytes of a command file read: the rules look at the first 20 000 characters anyway


def command_prompt(prompt: str, cwd: str, repo: Path | None) -> tuple[str, str] | None:
    """(the command's prompt with its arguments in place, the words typed) for a custom slash command, or None
    for any other prompt. Without a command file (a plugin's, a built-in one) the prompt is its name as words
    and its arguments: `/fix-tests cart` reads as "fix tests cart"."""
    match = _COMMAND.match(prompt)
    if match is None:
        return None
    name, args = match.group(1), (match.group(2) or "").strip()
    words = " ".join([re.sub(r"[-_:.]+", " ", name.rpartition(":")[2]).strip(), args]).strip()
    body = _body(name, cwd, repo)
    if body is None:
        return words, words
    return _expand(body, args), words


def _body(name: str, cwd: str, repo: Path | None) -> str | None:
    """The text of the file Claude Code expands the command from, searched in its order (checked against the
    real CLI): a skill's `skills/NAME/SKILL.md` before a command's `commands/NAME.md` (`commands/ci/NAME.md` for
    `/ci:NAME`, which no skill answers), and in each the user's `~/.claude/` (or `$CLAUDE_CONFIG_DIR`) before
    the project's `.claude/`, the nearest folder from `cwd` up to the repository's top first."""
    parts = name.split(":")
    if any(part in (".", "..") for part in parts):
        return None
    here = Path(cwd)
    tops = [here, *here.parents] if repo is not None else [here]
    folders = []
    home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
    if not home.startswith("~"):  # no HOME: no user commands to read
        folders.append(Path(home))
    for folder in tops:
        folders.append(folder / ".claude")
        if repo is None or folder == repo:
            break
    skills = [base / "skills" / name / "SKILL.md" for base in folders] if len(parts) == 1 else []
    # NAME + ".md", not a suffix put in place: `/v1.2` is v1.2.md, never the command v1.md
    commands = [base / "commands" / Path(*parts[:-1]) / f"{parts[-1]}.md" for base in folders]
    for path in (*skills, *commands):
        text = _read(path)
        if text is not None:
            return _FRONT_MATTER.sub("", text, count=1)
    return None


def _read(path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        with open(path, "rb") as handle:
            return handle.read(_READ_LIMIT).decode("utf-8", "replace")
    except OSError:
        return None


def _expand(body: str, args: str) -> str:
    """The body with `$ARGUMENTS`, `$ARGUMENTS[N]` and `$N` (`$0` the first) put in, as Claude Code does, or
    with the arguments appended when it names none of them."""
    head = args[:_SPLIT_LIMIT]  # shlex reads a character at a time: a pasted log would take seconds
    try:
        each = shlex.split(head)
    except ValueError:
        each = head.split()

    def positional(match: re.Match[str]) -> str:
        position = int(match.group(1) or match.group(2))  # from 0 in both spellings, as Claude Code counts
        return each[position] if position < len(each) else ""

    expanded, count = re.subn(r"\$ARGUMENTS\[(\d+)\]|\$(\d+)(?!\w)", positional, body)
    expanded, whole = re.subn(r"\$ARGUMENTS\b", lambda _: args, expanded)
    if args and not count + whole:
        expanded = f"{expanded.rstrip()}\n\nARGUMENTS: {args}"
    return expanded
