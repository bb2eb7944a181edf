"""Where a project keeps its rules for agents, and the text of each file with Claude Code's `@path` imports."""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import subprocess
from pathlib import Path, PurePosixPath

from lamar.rules.fences import Fences, unquoted

RULE_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", ".github/copilot-instructions.md",
              ".cursorrules")
CURSOR_RULES = ".cursor/rules"
_CLAUDE_READS = ("CLAUDE.md", "CLAUDE.local.md")  # Claude Code reads these into every session (.claude/ too)
FOLDER_RULES = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md")  # in a sub-folder, they speak for that folder
MAX_FILE = 1_000_000  # bytes; a rules file is prose a person wrote, not a data dump
MAX_IMPORT_DEPTH = 5  # as deep as Claude Code follows `@path` imports
UNREADABLE = "not readable by this user (permission denied): fix its permissions (`chmod u+r`) and import again"
# As Claude Code reads them: an `@path` anywhere in the text, after a space or at a line's start
# (so an address such as dev@example.com is none), a backslash keeping a space in the path.
_IMPORT = re.compile(r"(?:^|\s)@((?:[^\s\\]|\\ )+)")
_TICKS = re.compile(r"`+")


@dataclasses.dataclass(frozen=True)
class RuleSource:
    """One file to read: its name relative to the project folder, its text, the sub-folder it speaks
    for ("frontend/" for frontend/CLAUDE.md and the files it imports; "" for the whole project), and
    whether Claude Code reads it into its sessions itself (a CLAUDE.md, a CLAUDE.local.md, a file they import)."""

    name: str
    text: str
    folder: str = ""
    claude: bool = False


def find_rule_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The rules files that exist in a project folder: those of `RULE_FILES` in its order, then the
    `.cursor/rules/*.mdc` files (each real file once, and only files inside the folder: a link
    that leads out of it is passed over).

    The files looked for, by the tool that reads them:

        CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md      Claude Code
        AGENTS.md                                          Codex, Jules, and others
        .cursor/rules/*.mdc, .cursorrules                  Cursor
        .github/copilot-instructions.md                    GitHub Copilot

    and the `FOLDER_RULES` files of its sub-folders (`sub_folder_files`).
    """
    root = Path(folder)
    inside = Path(os.path.realpath(root))
    found = [root / name for name in RULE_FILES if (root / name).is_file()]
    cursor = root / CURSOR_RULES
    if cursor.is_dir():
        found += sorted(p for p in cursor.rglob("*.mdc") if p.is_file())
    found += sub_folder_files(root)
    seen: set[str] = set()
    unique = []
    for path in found:
        real = os.path.realpath(path)
        # A link that leads out of the folder is not the project's: a cloned repository could
        # point CLAUDE.md at any file of the machine. Named with --file, it is read.
        if real not in seen and Path(real).is_relative_to(inside):  # CLAUDE.md is often a link to AGENTS.md
            seen.add(real)
            unique.append(path)
    return unique


def sub_folder_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The `FOLDER_RULES` files below `folder` (`src/api/CLAUDE.md`, `web/.claude/CLAUDE.md`), which
    Claude Code reads when it works in their folder, in path order. Hidden folders, node_modules,
    virtual environments and nested git repositories are passed over, and in a git repository
    the folders git ignores; a file git ignores by name (CLAUDE.local.md, as it should be) is read.
    """
    root = Path(folder)
    listed = _git_files(root)
    if listed is None:
        listed = []
        for here, folders, files in os.walk(root):
            # Pruned in place so the walk never enters them: a dependency's or a tool's own CLAUDE.md
            # is not the project's.
            folders[:] = sorted(f for f in folders if f == ".claude" or _searched(f, Path(here) / f))
            relative = Path(here).relative_to(root).as_posix()
            listed += [f"{relative}/{name}" for name in files if name in FOLDER_RULES]
    found = []
    for name in listed:
        path = PurePosixPath(name)
        if path.name not in FOLDER_RULES or not folder_of(path.as_posix()):
            continue  # the project folder's own files are RULE_FILES
        parents = path.parent.parts
        chain = parents[:-1] if parents[-1] == ".claude" else parents
        if all(_searched(part, root.joinpath(*parents[: i + 1])) for i, part in enumerate(chain)):
            found.append(root / name)
    return sorted((p for p in found if p.is_file()), key=lambda p: _read_order(p.relative_to(root).as_posix()))


def _read_order(name: str) -> tuple[tuple[str, ...], int]:
    """Folder by folder in path order, and within a folder in the order of `RULE_FILES`, as the
    project's top is read: a rule its CLAUDE.md repeats in CLAUDE.local.md is CLAUDE.md's."""
    folder = folder_of(name)
    within = name[len(folder):]
    return PurePosixPath(folder).parts, RULE_FILES.index(within) if within in RULE_FILES else len(RULE_FILES)


def _searched(name: str, path: Path) -> bool:
    """Whether a sub-folder's rules are the project's: not a hidden folder, node_modules, a virtual
    environment, or another git repository (its CLAUDE.md is that project's); nor one this user
    cannot look into (another user's volume, `/proc`), whose rules it could not read."""
    if name.startswith(".") or name == "node_modules":
        return False
    try:
        return not (path / "pyvenv.cfg").exists() and not (path / ".git").exists()
    except OSError:  # exists() says False only for a missing file: a refused look raises
        return False


def _git_files(root: Path) -> list[str] | None:
    """The files git tracks or would track below `root` (relative to it), and the `FOLDER_RULES`
    files it ignores one by one, or None outside git."""
    listed = _ls_files(root, "--cached", "--others", "--exclude-standard")
    if listed is None:
        return None
    # CLAUDE.local.md is personal, so it is git-ignored, and Claude Code reads it all the same.
    # --directory names an ignored folder (node_modules/, .venv/) without entering it.
    ignored = _ls_files(root, "--others", "--ignored", "--exclude-standard", "--directory", "--",
                        *(f":(glob)**/{name}" for name in FOLDER_RULES))
    return listed + (ignored or [])


def _ls_files(root: Path, *options: str) -> list[str] | None:
    try:
        # core.fsmonitor off: it names a command git runs here, and the folder's .git/config may be anyone's
        done = subprocess.run(["git", "-C", str(root), "-c", "core.fsmonitor=false", "ls-files", "-z", *options],
                              capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None  # git is not installed, or hangs: the folder is walked
    if done.returncode != 0:
        return None  # not a git work tree
    return [name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


def read_sources(paths: list[Path], folder: str | os.PathLike[str], *,
                 unread: list[tuple[str, str]] | None = None, named: bool = False) -> list[RuleSource]:
    """Each file's text, then the files its `@path` mentions import (relative to the importing file),
    each real file read once, so a CLAUDE.md that only says `@AGENTS.md` yields AGENTS.md's rules once.

    Args:
        paths: the rules files to read.
        folder: the project folder: files are named from it, and no import leads out of it.
        unread: when given, a file that is not UTF-8 text, is over MAX_FILE bytes, is not a regular
            file (a FIFO, a device) or that this user may not read is passed over and listed here as
            (name, why and what to do), so the other files are still read.
        named: the user named `paths`: one of them this user may not read raises PermissionError.

    Raises:
        OSError: a named file cannot be read.
        ValueError: a file is over MAX_FILE bytes, not UTF-8 text or not a regular file, and `unread` is None.
    """
    root = Path(folder).resolve()
    seen: set[str] = set()
    out: list[RuleSource] = []

    def visit(path: Path, depth: int, folder: str | None, claude: bool) -> None:
        real = os.path.realpath(path)
        if real in seen or depth > MAX_IMPORT_DEPTH:
            return
        seen.add(real)
        name = _name(path, root)
        why = ""
        try:
            data, size = _read(path)
        except PermissionError:
            if unread is None or (named and depth == 0):
                raise
            unread.append((name, UNREADABLE))
            return
        if data is None:
            why = "not a regular file (a folder, a FIFO, a device or a socket): name the rules file itself"
        elif size > MAX_FILE:
            why = (f"{size:,} bytes, over the {MAX_FILE:,} a rules file may hold: move what is not rules "
                   "for the agent out of it, or split it, and import again")
        elif b"\0" in data:  # UTF-8 all the same, as a binary file or UTF-16 without its BOM often is
            why = f"not UTF-8 text (a NUL byte at byte {data.index(0)}): re-save it as UTF-8 and import again"
        else:
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                why = f"not UTF-8 text ({exc.reason} at byte {exc.start}): re-save it as UTF-8 and import again"
        if why:
            if unread is None:
                raise ValueError(f"{path} is {why}")
            unread.append((name, why))
            return
        here = folder_of(name) if folder is None else folder  # an imported file speaks where its importer does
        claude = claude or path.name in _CLAUDE_READS  # an imported file is read wherever its importer is
        out.append(RuleSource(name, text, here, claude))
        tried: set[str] = set()  # a path named many times in a file is looked up once
        for line in _outside_fences(text):
            for found in _IMPORT.finditer(_without_code(line)):
                if found.group(1) in tried:
                    continue
                tried.add(found.group(1))
                try:
                    target = (path.parent / os.path.expanduser(found.group(1).replace("\\ ", " "))).resolve()
                    wanted = target.is_file() and target.is_relative_to(root)  # never read outside the project
                except (OSError, ValueError):  # a NUL, or a name too long: no file has it, as for a missing one
                    wanted = False
                if wanted:
                    visit(target, depth + 1, here, claude)

    for path in paths:
        visit(Path(path), 0, None, False)
    return out


def _read(path: Path) -> tuple[bytes | None, int]:
    """The file's first MAX_FILE + 1 bytes and its size, or None when it is not a regular file."""
    # Opened without waiting: a FIFO opened to read waits for a writer that may never come.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    facts = os.fstat(fd)
    if not stat.S_ISREG(facts.st_mode):  # a device such as /dev/zero never ends; a folder cannot be read
        os.close(fd)
        return None, 0
    with os.fdopen(fd, "rb") as file:
        data = file.read(MAX_FILE + 1)  # no more: a file past the limit is refused, not held in memory
        return data, max(facts.st_size, len(data))


def inert_imports(line: str) -> str:
    """`line` with each `@path` that Claude Code would import shown as a code span, which it does not follow.

    For text Lamar writes into a rules file (`lamar export-rules`): a lesson that says "load @.env" must
    not make every session read the project's secrets. An `@path` already in a code span is left as it is.
    """
    if "@" not in line:
        return line
    spans = _code_spans(line)
    # longer than any run of backticks in the line: no other run, closed or not, can pair with it
    ticks = "`" * (max(map(len, _TICKS.findall(line)), default=0) + 1)
    pieces: list[str] = []
    done = 0
    for found in _IMPORT.finditer(line):
        at = found.start(1) - 1
        if any(start <= at < end for start, end in spans):
            continue
        token = line[at:found.end()]
        pad = " " if token.endswith("`") else ""
        pieces += [line[done:at], f"{ticks}{token}{pad}{ticks}"]
        done = found.end()
    return "".join(pieces) + line[done:]


def _without_code(line: str) -> str:
    """`line` with each code span a space: an `@path` shown as code is an example, not an import."""
    if "@" not in line or "`" not in line:
        return line
    pieces: list[str] = []
    done = 0
    for start, end in _code_spans(line):
        pieces += [line[done:start], " "]
        done = end
    return "".join(pieces) + line[done:]


def _code_spans(line: str) -> list[tuple[int, int]]:
    """Where `line`'s code spans start and end, in order.

    A span runs from a run of backticks to the next run of as many. Found by a scan: the regex
    `(`+).*?\\1` read the rest of the line again for each length of each unclosed run of backticks.
    """
    if "`" not in line:
        return []
    runs = [(found.start(), found.end()) for found in _TICKS.finditer(line)]
    by_length: dict[int, list[int]] = {}
    for start, end in runs:
        by_length.setdefault(end - start, []).append(start)
    passed = dict.fromkeys(by_length, 0)  # per length, the runs the scan has gone past (it only moves on)
    spans: list[tuple[int, int]] = []
    done = 0
    for start, end in runs:
        if start < done:
            continue
        same, k = by_length[end - start], passed[end - start]
        while k < len(same) and same[k] <= start:
            k += 1
        passed[end - start] = k
        if k < len(same):
            done = same[k] + end - start
            spans.append((start, done))
    return spans


def _outside_fences(text: str) -> list[str]:
    """The lines of `text` outside fenced code blocks and HTML comments: Claude Code does not follow
    an `@path` shown as code, such as an example of the import syntax, and a comment is hidden text."""
    lines: list[str] = []
    fences = Fences()
    commenting = False
    for line in text.splitlines():
        if commenting:
            commenting = "-->" not in line
        elif fences.code(unquoted(line)):  # a fence in a block quote is one, as the rules parser reads it
            continue
        elif line.lstrip().startswith("<!--"):
            commenting = "-->" not in line.lstrip()[4:]
        else:
            lines.append(line)
    return lines


def folder_of(name: str) -> str:
    """The sub-folder a rules file speaks for ("frontend/" for frontend/CLAUDE.md or
    frontend/.claude/CLAUDE.md), named from the project's top; "" for the whole project."""
    path = PurePosixPath(name)
    if path.name not in FOLDER_RULES:
        return ""
    parent = path.parent.parent if path.parent.name == ".claude" else path.parent
    return "" if parent == PurePosixPath(".") else f"{parent}/"


def _name(path: Path, root: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        return path.name


__all__ = ["CURSOR_RULES", "MAX_FILE", "RULE_FILES", "UNREADABLE", "RuleSource", "find_rule_files", "folder_of",
           "inert_imports", "read_sources", "sub_folder_files"]
