"""Merge Lamar's hook entries into a Claude Code settings file, and take them out again."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from lamar import LamarError
from lamar_claude_code.layout import Layout, dump, layout_of
from lamar_claude_code.state import write_atomically

EDIT_MATCHER = "Edit|Write|MultiEdit|NotebookEdit"
# Reads too: Claude Code loads a sub-folder's CLAUDE.md once Claude reads a file there.
TOOL_MATCHER = EDIT_MATCHER + "|Read"
# event -> (matcher or None, Claude Code's timeout in seconds; the hook's own budget is shorter)
EVENTS: dict[str, tuple[str | None, int]] = {
    "SessionStart": (None, 10),
    "UserPromptSubmit": (None, 10),
    "PostToolUse": (TOOL_MATCHER, 10),
    "Stop": (None, 10),
    "SessionEnd": (None, 10),
}
MARKS = ("claude-code hook", "lamar_claude_code/quick.py", "lamar-plugin")  # commands that are Lamar's


class SettingsError(LamarError, ValueError):
    """A settings file that cannot be used (not a JSON object, or no project to put it in); nothing is
    changed. A `LamarError`, so a caller that catches Lamar's errors catches it too."""


SCOPES = ("local", "project", "user")
FILES = {"local": "settings.local.json", "project": "settings.json"}


def settings_path(scope: str, cwd: str | os.PathLike[str] | None = None, *, folder: str | os.PathLike[str] | None = None
                  ) -> Path:
    """The settings file of a scope: `local` is `.claude/settings.local.json` (personal), `project`
    `.claude/settings.json` (shared with the team), both of the git top-level above `cwd` or of
    `folder`; `user` is `~/.claude/settings.json`.

    Raises:
        SettingsError: `local` or `project` outside a git repository and without `folder`.
    """
    if scope == "user":
        return Path("~/.claude/settings.json").expanduser()
    if scope not in FILES:
        raise SettingsError(f"unknown settings scope {scope!r}; use one of {', '.join(SCOPES)}")
    if folder is not None:
        return Path(folder).expanduser().resolve() / ".claude" / FILES[scope]
    from lamar_claude_code.context import find_repo

    here = Path(cwd or os.getcwd()).resolve()
    repo = find_repo(here)
    if repo is None:
        raise SettingsError(f"{here} is not inside a git repository, so no project's .claude/ settings are here "
                            "(install and uninstall both need one): pass --user (every project) or --dir FOLDER "
                            "(that folder's .claude/)")
    return repo / ".claude" / FILES[scope]


# The comment before the line keep_out_of_git adds: uninstall takes out only a line so marked, never one
# a user wrote (git reads a line starting with # as a comment).
EXCLUDED_BY = "# lamar claude-code install; uninstall removes it with the next line"


def keep_out_of_git(path: Path) -> str:
    """Make git ignore a personal settings file through the repository's own `.git/info/exclude`
    (never the team's .gitignore); returns what was done ("" when git ignores it already)."""
    folder, relative = str(path.parent.parent), f"{path.parent.name}/{path.name}"
    try:
        ignored = subprocess.run(["git", "-C", folder, "check-ignore", "-q", "--no-index", relative],
                                 capture_output=True, timeout=10, check=False)
        if ignored.returncode != 1:  # 0: ignored already; 128: not a repository (--dir outside git)
            return ""
        exclude = _exclude_file(folder)
    except (OSError, subprocess.SubprocessError):
        return ""
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a+b") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell():  # a last line without its newline would run into ours
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")
        handle.write(f"{EXCLUDED_BY}\n/{relative}\n".encode())
    return f"{exclude}: lists /{relative}, so git never commits it"


def let_into_git(path: Path, *, older: bool = False) -> str:
    """Take out of `.git/info/exclude` the line `keep_out_of_git` added for `path` (marked by EXCLUDED_BY);
    with `older` (uninstall has just deleted the file), also the unmarked line of installs before the mark,
    in its exact shape. Returns what was done ("" when there is no such line)."""
    line = f"/{path.parent.name}/{path.name}\n".encode()
    try:
        exclude = _exclude_file(str(path.parent.parent))
        text = exclude.read_bytes()
        kept = text.replace(EXCLUDED_BY.encode() + b"\n" + line, b"")
        if kept == text and older:
            kept = _without_last(text, line)
        if kept == text:
            return ""
        write_atomically(exclude, kept, mode=_mode_of(exclude))
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{exclude}: no longer lists /{path.parent.name}/{path.name}"


def _without_last(text: bytes, line: bytes) -> bytes:
    """`text` without its last line that is exactly `line`: what installs before EXCLUDED_BY appended, once, at
    the end. Any other shape (no leading slash, a pattern, a comment beside it) is a user's and stays."""
    lines = text.splitlines(keepends=True)
    for at in range(len(lines) - 1, -1, -1):
        if lines[at] in (line, line.rstrip(b"\n")):  # the last line of a file may have lost its newline
            return b"".join(lines[:at] + lines[at + 1:])
    return text


def _exclude_file(folder: str) -> Path:
    found = subprocess.run(["git", "-C", folder, "rev-parse", "--git-path", "info/exclude"],
                           capture_output=True, text=True, timeout=10, check=True)
    return Path(folder) / found.stdout.strip()


def tracked(path: Path) -> bool:
    """Whether git tracks `path` (a team file: personal paths must not go into it)."""
    try:
        done = subprocess.run(["git", "-C", str(path.parent), "-c", "core.fsmonitor=false", "ls-files",
                               "--error-unmatch", path.name],  # as outcomes.git runs it
                              capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


# Claude Code runs hooks with the environment it was started with: launched from a desktop or by a
# teammate, that PATH holds no virtual environment, and a bare `lamar` is not found (exit 127, no
# episode stored). The interpreter that installed the hooks is named instead; it finds its own
# packages whatever PATH is.
STRIPPED_PATH = "/usr/bin:/bin"
# Python exits 2 when its script cannot be opened (`pip uninstall`, a virtual environment rebuilt
# with another Python), and Claude Code takes exit 2 as a block: from UserPromptSubmit it erases
# the prompt, from Stop it keeps Claude going. Every failure of the command is made a plain 1.
FAIL_OPEN = " || exit 1"


def hook_command(store: str | None = None, holdout: float | None = None) -> str:
    """The command the entries run: `<guard>; <this python> -S <lamar_claude_code/quick.py> [--store PATH]
    [--holdout Q] || exit 1`; Q is the hooks' engine's holdout (None: the default).

    quick.py hands the event to a warm daemon (see `lamar_claude_code.daemon`); -S keeps the
    interpreter's start below a bare `python -c pass` until the packages are needed. Claude Code
    runs the command through the shell: `|| exit 1` keeps a quick.py that is gone from blocking, and
    the guard before it says what to do when the interpreter or quick.py is gone (see `_guard`).
    """
    from lamar_claude_code import quick

    python, script = sys.executable, os.path.abspath(quick.__file__)
    command = f"{shlex.quote(python)} -S {shlex.quote(script)}"
    if store:
        location = store if "://" in store or store == ":memory:" else str(Path(store).expanduser().resolve())
        command += f" --store {shlex.quote(location)}"
    if holdout is not None:
        command += f" --holdout {holdout!r}"
    return _guard(python, script) + command + FAIL_OPEN


# Claude Code shows a failing hook's stderr to the user, as a non-blocking error, at every event: with the
# interpreter gone (a virtual environment deleted or moved) that was only the shell's "python: not found",
# which names no fix. The guard checks the two files first and, when one is gone, says what to do instead.
_GUARD_END = " >&2; exit 1; }; "


def _guard(python: str, script: str) -> str:
    # Short, the fix in it: Claude Code's screen shows it under "<event> hook failed" at every event.
    # A moved environment's bin/lamar starts the Python of its old path and fails too: the module runs.
    message = ("Lamar is off: the Python or quick.py of its hook is gone. `lamar claude-code status` names the "
               "install that fixes it (from a moved virtual environment, its `bin/python -m lamar.cli claude-code "
               "status`).")
    # printf, not echo: dash's echo would read a backslash in a path as an escape
    return (f"[ -x {shlex.quote(python)} ] && [ -f {shlex.quote(script)} ] || "
            f"{{ printf '%s\\n' {shlex.quote(message)}{_GUARD_END}")


def shown(command: str) -> str:
    """The hook command as `install` and `status` print it: without the guard `hook_command` puts first,
    which only repeats the call's two paths beside its message."""
    return command.partition(_GUARD_END)[2] or command


def invocation(command: str) -> str:
    """The hook command's own call (`<python> -S <quick.py> [--store PATH]`), without the guard that
    `hook_command` puts before it or the `|| exit 1` after it; a command of another shape as it is."""
    return shown(command).removesuffix(FAIL_OPEN)


def runs_without_path(command: str, timeout: float = 30.0) -> str:
    """"" when `command` starts with a minimal environment (HOME and PATH=/usr/bin:/bin only), as
    Claude Code may start it; otherwise why it does not."""
    env = {"HOME": os.path.expanduser("~"), "PATH": STRIPPED_PATH}
    try:
        check = invocation(command) + " --help"  # `|| exit 1` and the guard would turn exit 127 into 1
        done = subprocess.run(["/bin/sh", "-c", check], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"it did not start: {exc}"
    if done.returncode == 0:
        return ""
    if done.returncode == 127:
        return (f"exit 127: its program is not found on PATH={STRIPPED_PATH}, which is what Claude Code has when "
                "it is not started from your shell")
    tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
    return f"exit {done.returncode}: {tail[0][:200]}"


def gone(command: str) -> str:
    """What the hook command names that is no longer there ("" when nothing is): the interpreter of a virtual
    environment deleted or moved, or a `quick.py` whose clone went. The shell then exits 127 or Python 2,
    which Claude Code shows only as a non-blocking hook error naming the file."""
    try:
        words = shlex.split(invocation(command))
    except ValueError:
        return ""
    if words and os.path.isabs(words[0]) and not os.path.exists(words[0]):
        return f"its Python {words[0]} is gone (its virtual environment deleted or moved)"
    script = next((word for word in words[1:] if word.endswith("quick.py")), None)
    if script and os.path.isabs(script) and not os.path.exists(script):
        return f"its hook {script} is gone (the Lamar it belonged to deleted or moved)"
    return ""


def plugin_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    """The `hooks` mapping for settings files and the plugin's hooks.json."""
    out: dict[str, list[dict[str, Any]]] = {}
    for event, (matcher, timeout) in EVENTS.items():
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        out[event] = [group]
    return out


def is_lamar(handler: Any) -> bool:
    command = str(handler.get("command", "")) if isinstance(handler, dict) else ""
    return "lamar" in command and any(mark in command for mark in MARKS)


def read_settings(path: Path) -> dict[str, Any]:
    return _read(path)[0]


def _read(path: Path) -> tuple[dict[str, Any], Layout]:
    """The settings, and the file's layout (its byte-order mark, indentation, line ends), to write it back so.

    Claude Code's CLI skips a UTF-8 byte-order mark (an editor on Windows may save one), so the
    file is read as Claude Code reads it.
    """
    if not path.exists():
        return {}, Layout()
    try:
        raw = path.read_bytes()
        layout = layout_of(raw)
        data = json.loads(raw[len(layout.bom):].decode("utf-8") or "{}")
    except (OSError, ValueError) as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); fix it by hand, it was left untouched") from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise SettingsError(f"{path} is not a settings object with a 'hooks' object; it was left untouched")
    return data, layout


def install(path: Path, command: str) -> list[str]:
    """Add or update Lamar's entries; returns the changes made ([] when it was installed already).

    Every other key and hook of the file is kept; Lamar's entries are the handlers whose command
    runs Lamar's hook (`quick.py`, or `lamar claude-code hook`, which a settings file written by an
    older install may still name). Writes are atomic (temporary file, fsync, rename) and a second
    install changes nothing.
    """
    data, layout = _read(path)
    hooks = data.setdefault("hooks", {})
    changes = []
    for event, groups in plugin_hooks(command).items():
        current = hooks.get(event, [])
        if not isinstance(current, list):
            raise SettingsError(f"{path}: hooks.{event} is not a list; it was left untouched")
        if groups[0] in current:
            continue
        kept, removed = _without_lamar(current)
        hooks[event] = kept + groups
        changes.append(f"{'updated' if removed else 'added'} {event} hook: {shown(command)}")
    if changes:
        _save(path, data, layout)
    return changes


def uninstall(path: Path) -> list[str]:
    """Remove Lamar's entries only; returns the changes made."""
    data, layout = _read(path)
    hooks = data.get("hooks", {})
    changes = []
    for event in list(hooks):
        if not isinstance(hooks[event], list):
            continue
        kept, removed = _without_lamar(hooks[event])
        if removed:
            changes.append(f"removed {event} hook: {shown(removed[0])}")
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if changes:
        if not hooks:
            data.pop("hooks", None)
        if data or not _removable(path):
            _save(path, data, layout)
        else:
            path.unlink()
            if path.parent != Path("~/.claude").expanduser():
                with contextlib.suppress(OSError):  # a folder holding anything else stays
                    path.parent.rmdir()
            changes.append("deleted it, as it held nothing but Lamar's hooks")
    return changes


def _removable(path: Path) -> bool:
    """Whether uninstall may delete a settings file it leaves holding nothing: not a link (a dotfiles folder's
    file stays linked), not marked read-only, not tracked by git (its deletion would go into the next commit).
    Claude Code reads a missing file as an empty one, so whoever made the file, nothing it held is lost."""
    from lamar.read_only import marked_read_only

    return not path.is_symlink() and not marked_read_only(path) and not tracked(path)


def installed(path: Path) -> list[tuple[str, str]]:
    """Lamar's entries in a settings file as (event, command), one per event ([] when it cannot be read)."""
    try:
        return entries(read_settings(path))
    except SettingsError:
        return []


def named_stores(path: Path) -> set[str]:
    """The stores that Lamar's entries in a settings file name with --store, as paths (none for a URL)."""
    from lamar_claude_code.quick import named_store

    found = set()
    for _, command in installed(path):
        try:
            store = named_store(shlex.split(command))
        except ValueError:  # a command edited by hand past what a shell reads: it names nothing we can tell
            continue
        if store and "://" not in store:
            found.add(os.path.expanduser(store))
    return found


def entries(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Lamar's entries in settings already read (`read_settings`) as (event, command), one per event."""
    found = []
    for event, groups in data.get("hooks", {}).items():
        for group in groups if isinstance(groups, list) else ():
            for handler in group.get("hooks", []) if isinstance(group, dict) else ():
                if is_lamar(handler):
                    found.append((event, str(handler["command"])))
    return found


def _without_lamar(groups: list[Any]) -> tuple[list[Any], list[str]]:
    kept, removed = [], []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            kept.append(group)
            continue
        mine = [h for h in handlers if is_lamar(h)]
        if not mine:
            kept.append(group)
            continue
        removed += [str(h.get("command")) for h in mine]
        others = [h for h in handlers if not is_lamar(h)]
        if others:
            kept.append({**group, "hooks": others})
    return kept, removed


def _save(path: Path, data: dict[str, Any], layout: Layout) -> None:
    """Write `data` atomically, laid out as the file was (`layout`)."""
    from lamar.read_only import marked_read_only

    path = Path(os.path.realpath(path))  # a link (~/.claude/settings.json into a dotfiles folder) stays a link
    if marked_read_only(path):
        raise SettingsError(f"{path} is read-only (mode {_mode_of(path):04o}): make it writable (chmod u+w {path}) "
                            "to let Lamar change its hooks, or add them by hand; it was left untouched")
    path.parent.mkdir(parents=True, exist_ok=True)
    from lamar_claude_code.splice import spliced

    try:  # every byte but the hooks' kept, as the file reads now (the same bytes `_read` read, but for a race)
        body = spliced(path.read_bytes(), data, layout)
    except OSError:
        body = None
    write_atomically(path, body or dump(data, layout), mode=_mode_of(path))


def _mode_of(path: Path) -> int:
    """The permissions the file keeps: its own, or for a new file what the umask gives any new file
    (a settings file holds no secret, and a team's settings.json must stay readable to the team)."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
