"""`lamar claude-code hook`: one Claude Code hook event on stdin, the documented JSON answer on stdout."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO, TextIO

from lamar_claude_code.episodes import Budget, Paths, handle_event
from lamar_claude_code.notice import clear_failure, last_failure, off_message, record_failure, starts_session
from lamar_claude_code.state import log_line, sidecar

MAX_PAYLOAD = 1_000_000  # bytes; a larger event (a pasted log) is skipped rather than slowing the prompt
_GRACE = 0.25  # seconds the main thread waits past the budget for the worker to finish honestly
COMMITTED_WAIT = 3.0  # seconds more once the episode is stored (Claude Code allows the hook 10 in all)


def paths_for(store: str) -> Paths:
    return Paths(state=sidecar(store, "state.json"), log=sidecar(store, "log"),
                 traces=sidecar(store, "traces.jsonl"))


def run(stdin: BinaryIO, stdout: TextIO, store: str, *, budget: float | None = None,
        exit_on_timeout: bool = False, engine: Callable[[], Any] | None = None, create: bool = False,
        start: float | None = None, overran: Callable[[], None] | None = None, holdout: str | None = None) -> int:
    """Handle one event; always returns 0.

    Fails open: whatever goes wrong (bad JSON, a missing, locked or newer store, a slow disk) the
    process prints nothing, exits 0 and leaves one line in the log `lamar claude-code status` shows.
    It never exits 2, which would block the developer's prompt. A failure once the event is read is
    also kept until an event uses the store again, and each session's start shows it to the user
    (`lamar_claude_code.notice`).

    The work runs in a daemon thread: a store blocked inside SQLite's C code cannot be
    interrupted by a signal, but the main thread can stop waiting. Past the budget (plus a
    short grace) nothing is printed, and with `exit_on_timeout` the process ends at once:
    SQLite and the atomic state file survive a killed writer. A recall not yet begun is not
    begun (no episode is stored).

    `engine` opens the engine (default: `Lamar(store)` at `holdout`, the command line's, once per process);
    an in-process caller can hand in one seeded engine for every event. With `create` (the plugin) a missing file
    store is created, readable by its owner only; otherwise it is a logged failure. `start`
    (a `time.monotonic()` reading) is when the event arrived, when it waited elsewhere first;
    `overran` is called, instead of ending the process, when the budget ran out.

    Once the episode is stored (the recall returned), the worker is given up to COMMITTED_WAIT
    more to record and deliver it: a prompt's episode is stored and tracked, or not stored.
    """
    start = time.monotonic() if start is None else start
    paths = paths_for(store)
    payload: Any = None
    parsed = False  # an event that is no JSON object says nothing of the setup: no notice for it
    pending: dict[str, Any] | None = None  # the failure this session's start tells the user of
    try:
        raw = stdin.read(MAX_PAYLOAD + 1)
        if len(raw) > MAX_PAYLOAD:
            raise ValueError(f"the event is over {MAX_PAYLOAD} bytes; skipped")
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            raise TypeError(f"the event is JSON {type(payload).__name__}, not an object")
        parsed = True
        config = _config(payload, paths)
        if budget is None:
            budget = config.budget_seconds
        if config.enabled and starts_session(payload):
            pending = last_failure(store)
        result: dict[str, Any] = {}
        deadline = Budget(budget, start)
        opener = engine or (lambda: _open(store, create, holdout))
        opened: list[bool] = []

        def open_engine() -> Any:
            lam = opener()
            opened.append(True)
            return lam

        def work() -> None:
            try:
                if pending is not None and pending.get("store_error") and "://" not in store:
                    # The file may be fixed since (made again by install): opened, the start is quiet. Still
                    # failing, the kept failure is told as it stands, with the time it began.
                    with contextlib.suppress(Exception):
                        open_engine()
                result["text"] = handle_event(payload, open_engine, paths, config=config, budget=deadline)
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                result["error"] = exc

        worker = threading.Thread(target=work, name="lamar-hook", daemon=True)
        worker.start()
        worker.join(max(0.0, budget - (time.monotonic() - start)) + _GRACE)
        if worker.is_alive() and not deadline.abandon():
            worker.join(COMMITTED_WAIT)  # stored: let it be recorded and delivered rather than lost
        if worker.is_alive():
            log_line(paths.log, f"{_event(payload)}: over the {budget}s budget; nothing injected")
            _tell(stdout, pending, store, paths)
            if overran is not None:
                overran()
            elif exit_on_timeout:
                os._exit(0)  # the worker may hold a lock inside C code: do not wait for it
            return 0
        if "error" in result:
            raise result["error"]
        if opened:  # the store opened and the event went through: whatever failed before works again
            clear_failure(store)
            pending = None
        text = result.get("text", "")
        if text:
            answer = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}
            # ASCII, as escapes: Python writes a pipe in the locale's encoding (a Windows code page), and
            # an answer it cannot encode would be lost while the episode stands logged as injected.
            reply(stdout, json.dumps(answer))
        _tell(stdout, pending, store, paths)
    except BaseException as exc:  # noqa: BLE001 - a hook must never break the prompt
        if isinstance(exc, KeyboardInterrupt):
            return 0
        from lamar.safety import scrub  # a failure's message may quote the event: no secret reaches the log

        error = scrub(f"{type(exc).__name__}: {exc}")[0]
        log_line(paths.log, f"{_event(payload)}: {error}")
        if parsed:
            # Logged only, a failure that repeats at every event (a corrupt store, a folder that takes no
            # file) left the user believing Lamar learned: the next session's start says so instead.
            failure = record_failure(store, _event(payload), exc, error, plugin=create)
            _tell(stdout, failure if starts_session(payload) else None, store, paths)
    return 0


def _tell(stdout: TextIO, failure: dict[str, Any] | None, store: str, paths: Paths) -> None:
    """Show `failure` to the user as the JSON systemMessage Claude Code shows and never sends to Claude."""
    if failure is not None:
        reply(stdout, json.dumps({"systemMessage": off_message(failure, store, paths.log)}))


def reply(stdout: TextIO | None, answer: str) -> None:
    """Write the answer; a reader that is gone (stdout closed early) gets nothing, and no traceback."""
    if stdout is None:
        return  # started with no stdout at all
    try:
        stdout.write(answer)
        stdout.flush()
    except (OSError, ValueError):
        # Python flushes stdout once more at exit: pointed at the null device, that flush cannot fail.
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, stdout.fileno())
            finally:
                os.close(null)
        except (OSError, ValueError, AttributeError):  # a stream with no descriptor: nothing is flushed at exit
            pass


def _config(payload: dict[str, Any], paths: Paths) -> Any:
    """The event's config, read and with its own rules resolved here, in the main thread, under a time limit."""
    import dataclasses

    from lamar_claude_code.config import RuleTimeout, load_config, resolve_rules
    from lamar_claude_code.context import find_repo

    cwd = payload.get("cwd")
    repo = find_repo(cwd) if isinstance(cwd, str) and cwd else None
    config = load_config(repo)
    if config.untrusted and payload.get("hook_event_name") == "SessionStart":
        log_line(paths.log, f"ignored {config.untrusted}: not trusted yet; read it, then run "
                 f"`lamar claude-code trust` in {repo}")
    prompt = payload.get("prompt")
    if payload.get("hook_event_name") == "UserPromptSubmit" and isinstance(prompt, str):
        from lamar_claude_code.commands import command_prompt

        # A custom command is classified by its file's text: the config's task rules read that text too.
        command = command_prompt(prompt, cwd, repo) if config.task_rules and isinstance(cwd, str) and cwd else None
        try:
            config = resolve_rules(config, prompt, task_text=command[0] if command else None)
        except RuleTimeout as exc:
            log_line(paths.log, f"{exc}; the built-in rules alone were used: simplify the config's patterns")
            config = dataclasses.replace(config, task_rules=(), error_rules=(), corrected=())
    return config


def _event(payload: Any) -> str:
    name = payload.get("hook_event_name") if isinstance(payload, dict) else None
    return name if isinstance(name, str) else "event"


def _open(store: str, create: bool = False, holdout: str | None = None) -> Any:
    from pathlib import Path

    from lamar import Lamar, StoreError

    if create:
        from lamar_claude_code.state import create_private

        create_private(store)
    elif store != ":memory:" and "://" not in store and not Path(store).expanduser().exists():
        if Path(store).expanduser().is_symlink():
            raise StoreError(f"{store} is a symbolic link that leads nowhere (a loop, or a file that is gone): point "
                             "it at the store, or pass the store's own path as --store")
        raise StoreError(f"no store at {store}: run `lamar claude-code install` or pass --store")
    # The install's --holdout: its engine saves the store's state under it, which every `lamar` command reads.
    return Lamar(store) if holdout is None else Lamar(store, holdout=float(holdout))


def main(store: str, budget: float | None = None, *, create: bool = False, holdout: str | None = None) -> int:
    """Entry point of `lamar claude-code hook` (and of the plugin's hook, which creates its store)."""
    # Started with stdin or stdout closed, Python has None for them: an empty event, an answer nobody reads.
    stdin = sys.stdin.buffer if sys.stdin is not None else io.BytesIO()
    return run(stdin, sys.stdout or io.StringIO(), store, budget=budget, exit_on_timeout=True, create=create,
               holdout=holdout)
