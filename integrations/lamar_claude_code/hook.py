"""`lamar claude-code hook`: one Claude Code hook event on stdin, the documented JSON answer on stdout.

Fails open: whatever goes wrong (bad JSON, a missing, locked or newer store, a slow disk) the
process prints nothing, exits 0 and leaves one line in the log `lamar claude-code status` shows.
It never exits 2, which would block the developer's prompt.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from typing import Any, BinaryIO, TextIO

from lamar_claude_code.episodes import Budget, Paths, handle_event
from lamar_claude_code.state import log_line, sidecar

MAX_PAYLOAD = 1_000_000  # bytes; a larger event (a pasted log) is skipped rather than slowing the prompt
DEFAULT_BUDGET = 2.0  # seconds; Claude Code's own timeout for the entry is larger


class _OutOfTime(BaseException):
    """Raised by the alarm: a BaseException so that no `except Exception` on the way swallows it."""


def paths_for(store: str) -> Paths:
    return Paths(state=sidecar(store, "state.json"), log=sidecar(store, "log"),
                 traces=sidecar(store, "traces.jsonl"))


def run(stdin: BinaryIO, stdout: TextIO, store: str, *, budget: float | None = None) -> int:
    """Handle one event; always returns 0 (see the module docstring)."""
    start = time.monotonic()
    paths = paths_for(store)
    payload: Any = None
    try:
        raw = stdin.read(MAX_PAYLOAD + 1)
        if len(raw) > MAX_PAYLOAD:
            raise ValueError(f"the event is over {MAX_PAYLOAD} bytes; skipped")
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            raise ValueError(f"the event is JSON {type(payload).__name__}, not an object")
        config = None
        if budget is None:
            from lamar_claude_code.config import load_config
            from lamar_claude_code.context import find_repo

            cwd = payload.get("cwd")
            config = load_config(find_repo(cwd) if isinstance(cwd, str) and cwd else None)
            budget = config.budget_seconds
        with _alarm(budget):
            text = handle_event(payload, lambda: _open(store), paths, config=config,
                                budget=Budget(budget, start))
        if text:
            answer = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}
            stdout.write(json.dumps(answer, ensure_ascii=False))
            stdout.flush()
    except _OutOfTime:
        log_line(paths.log, f"{_event(payload)}: over the {budget}s budget; nothing injected")
    except BaseException as exc:  # noqa: BLE001 - a hook must never break the prompt
        if isinstance(exc, KeyboardInterrupt):
            return 0
        log_line(paths.log, f"{_event(payload)}: {type(exc).__name__}: {exc}")
    return 0


def _event(payload: Any) -> str:
    name = payload.get("hook_event_name") if isinstance(payload, dict) else None
    return name if isinstance(name, str) else "event"


def _open(store: str) -> Any:
    from pathlib import Path

    from lamar import Lamar
    from lamar._errors import StoreError

    if store != ":memory:" and "://" not in store and not Path(store).expanduser().exists():
        raise StoreError(f"no store at {store}: run `lamar claude-code install` or pass --store")
    return Lamar(store)


class _alarm:  # noqa: N801 - used as a context manager
    """SIGALRM after `seconds` on the main thread (elsewhere only the budget check applies)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.armed = False

    def __enter__(self) -> None:
        import threading

        if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGALRM, self._ring)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)

    @staticmethod
    def _ring(signum: int, frame: object) -> None:
        raise _OutOfTime


def main(store: str, budget: float | None = None) -> int:
    """Entry point of `lamar claude-code hook`."""
    return run(sys.stdin.buffer, sys.stdout, store, budget=budget)
