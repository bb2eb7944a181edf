"""In-process hooks for agents built on the Claude Agent SDK: the same episodes as the command hooks."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Self, cast

from claude_agent_sdk import HookContext, HookInput, HookJSONOutput, HookMatcher

from lamar_claude_code.config import HookConfig
from lamar_claude_code.episodes import Budget, Paths, handle_event
from lamar_claude_code.hook import COMMITTED_WAIT, paths_for
from lamar_claude_code.notice import clear_failure, record_failure
from lamar_claude_code.settings import TOOL_MATCHER
from lamar_claude_code.state import log_line


class SessionHooks(dict[str, list[HookMatcher]]):
    """The `hooks=` mapping, which also ends the sessions its callbacks saw: the SDK has no SessionEnd.

    `await hooks.end()`, or leaving `async with hooks:`, once the client or `query()` is done, does
    what Claude Code's SessionEnd does: it traces each session's last turn (the one no next prompt
    closes) and reports that turn's episode, still without an outcome, as accepted, or expires it
    when no Stop came (the turn never finished). A session with
    no event for `idle` seconds, or the least recently active past `max_sessions` open ones, is
    ended the same way by the next event, so a service that never calls `end()` stays bounded;
    not while an event of its own is still being handled.
    """

    def __init__(self, matchers: dict[str, list[HookMatcher]], ending: Callable[[dict[str, Any]], Any], *,
                 idle: float = 3600.0, max_sessions: int = 1000) -> None:
        super().__init__(matchers)
        self._ending = ending
        self._idle = idle
        self._max_sessions = max_sessions
        # session id -> its latest event's session fields; least recently active first
        self._open: dict[str, dict[str, Any]] = {}
        self._seen_at: dict[str, float] = {}  # session id -> time.monotonic() of its latest event
        self._ending_now: dict[str, asyncio.Future[Any]] = {}  # session id -> its end still running
        self._busy: dict[str, int] = {}  # session id -> its events still being handled

    def _saw(self, payload: Mapping[str, Any], work: asyncio.Future[Any]) -> None:
        session = payload.get("session_id")
        if not isinstance(session, str) or not session:
            return
        self._busy[session] = self._busy.get(session, 0) + 1
        work.add_done_callback(lambda _, sid=session: self._settled(sid))
        now = time.monotonic()
        self._open.pop(session, None)  # re-inserted last: the dict's order is the order of activity
        self._open[session] = {k: payload.get(k) for k in ("session_id", "transcript_path", "cwd")}
        self._seen_at[session] = now
        # Not awaited: the event's own prompt must not wait on other sessions' ends; `end()` waits for them.
        for sid in list(self._open):
            if sid == session:
                break
            if len(self._open) <= self._max_sessions and now - self._seen_at[sid] <= self._idle:
                break  # the rest are more recent still
            if self._busy.get(sid):
                # Its end would run beside its own event, and settle the turn that event starts: a
                # later event ends it, once that one is handled.
                continue
            self._close(sid)

    def _settled(self, session: str) -> None:
        left = self._busy.get(session, 0) - 1
        if left > 0:
            self._busy[session] = left
        else:
            self._busy.pop(session, None)

    def _close(self, sid: str) -> asyncio.Future[Any] | None:
        """Start ending `sid` as SessionEnd would, if it is open; its running end, if any."""
        seen = self._open.pop(sid, None)
        self._seen_at.pop(sid, None)
        if seen is not None:
            task = asyncio.ensure_future(self._ending({**seen, "hook_event_name": "SessionEnd", "reason": "other"}))
            self._ending_now[sid] = task
            task.add_done_callback(lambda done, sid=sid: self._ending_now.pop(sid, None)
                                   if self._ending_now.get(sid) is done else None)
        return self._ending_now.get(sid)

    async def end(self, session_id: str | None = None) -> None:
        """End `session_id` (default: every session the callbacks saw and no `end` ended); never raises.

        Returns once they are ended, those another `end` is still ending included.

        Call it once the session's client is closed or its `query()` is done: its transcript is then whole.
        """
        running = []
        for sid in [session_id] if session_id is not None else dict.fromkeys([*self._open, *self._ending_now]):
            task = self._close(sid)
            if task is not None:
                # Another end may be ending it: a caller that then closes the engine must find it ended.
                running.append(task)
        for task in running:
            await asyncio.shield(task)  # one caller cancelled leaves the end to the others

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.end()


def hooks(lamar: Any, *, state_dir: str | os.PathLike[str] | None = None, config: HookConfig | None = None,
          budget: float | None = None, idle: float = 3600.0, max_sessions: int = 1000) -> SessionHooks:
    """The `hooks=` mapping of `ClaudeAgentOptions`: recall on UserPromptSubmit, edits on PostToolUse.

    Each callback runs the shared `handle_event` in a worker thread under a deadline, and answers
    `{}` (no opinion) on any error or timeout: an SDK hook that fails must not block the agent.
    The mapping's `end()` (or `async with`) ends the sessions it saw, as Claude Code's SessionEnd.

    Args:
        lamar: the engine (`Lamar`) the agent learns into.
        state_dir: where the bookkeeping, log and traces go (default: beside the store's file,
            or ~/.lamar for stores that are not files).
        config: the hooks' config (default: read per project like the command hook).
        budget: seconds after which a callback injects nothing (default: the config's, 2).
        idle: seconds without an event after which the next event (any session's) ends a session.
        max_sessions: sessions kept open at most; past it the least recently active is ended.

    Returns:
        A `SessionHooks`: {"UserPromptSubmit": [...], "PostToolUse": [...], "Stop": [...]} of `HookMatcher`s.

    Raises:
        InvalidArgument: `idle` is not a positive number or `max_sessions` not a positive integer.
    """
    from lamar import InvalidArgument

    if isinstance(idle, bool) or not isinstance(idle, (int, float)) or not idle > 0:
        raise InvalidArgument(f"idle must be a positive number of seconds, not {idle!r}")
    if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
        raise InvalidArgument(f"max_sessions must be a positive integer, not {max_sessions!r}")
    paths = _paths(lamar, state_dir)
    seconds = budget if budget is not None else (config.budget_seconds if config else 2.0)

    async def ending(payload: dict[str, Any]) -> None:
        # No prompt waits on a session's end: no deadline, and tracing stays bounded per event.
        try:
            await asyncio.to_thread(handle_event, payload, lambda: lamar, paths, config=config)
        except Exception as exc:  # noqa: BLE001 - the agent's program goes on whatever Lamar does
            _failed(lamar, paths, "SessionEnd", exc)

    async def callback(input_data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        start = asyncio.get_running_loop().time()
        deadline = Budget(seconds)
        work = asyncio.ensure_future(asyncio.to_thread(handle_event, dict(input_data), lambda: lamar, paths,
                                                       config=config, budget=deadline))
        mapping._saw(input_data, work)  # busy until the handler's thread is done, past a deadline too
        try:
            try:
                text = await asyncio.wait_for(asyncio.shield(work), timeout=seconds)
            except TimeoutError:
                if deadline.abandon():
                    raise  # a recall that returns later expires its own episode
                text = await asyncio.wait_for(work, timeout=COMMITTED_WAIT)  # stored: record and deliver it
        except asyncio.CancelledError:
            # The SDK cancels a callback the CLI gave up on, or the client's close: its answer goes
            # nowhere, so a recall still running must not count its lessons as delivered.
            deadline.abandon()
            raise
        except Exception as exc:  # noqa: BLE001 - fail open inside someone else's loop
            waited = asyncio.get_running_loop().time() - start
            _failed(lamar, paths, str(input_data.get("hook_event_name", "event")), exc, f" after {waited:.2f}s")
            return cast(HookJSONOutput, {})
        _worked(lamar)
        if not text:
            return cast(HookJSONOutput, {})  # no opinion: the prompt or tool call goes on unchanged
        return cast(HookJSONOutput, {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                            "additionalContext": text}})

    mapping = SessionHooks({
        "UserPromptSubmit": [HookMatcher(hooks=[callback], timeout=seconds + 5)],
        "PostToolUse": [HookMatcher(matcher=TOOL_MATCHER, hooks=[callback], timeout=seconds + 5)],
        "Stop": [HookMatcher(hooks=[callback], timeout=seconds + 5)],
    }, ending, idle=idle, max_sessions=max_sessions)
    return mapping


def _failed(lamar: Any, paths: Paths, event: str, exc: BaseException, after: str = "") -> None:
    """Log a callback's failure and keep it, as the command hooks do, for `lamar claude-code status` to show
    ("hooks failing since ..."): logged only, a service whose every prompt failed looked as if it learned.
    Never raises."""
    from lamar.safety import scrub  # the message may quote the event: no secret reaches the log

    error = scrub(f"{type(exc).__name__}: {exc}")[0]
    log_line(paths.log, f"sdk {event}: {error}{after}")
    if isinstance(exc, TimeoutError):
        return  # over the budget, as the command hook's, is logged only: the store itself may be fine
    # no home folder to keep it in (RuntimeError), or an engine with no store: the log line is all there is
    with contextlib.suppress(Exception):
        record_failure(str(lamar.store.location), event, exc, error, plugin=False)


def _worked(lamar: Any) -> None:
    """An event went through: the store's kept failure, if any, is over. Never raises."""
    with contextlib.suppress(Exception):  # as in _failed
        clear_failure(str(lamar.store.location))


def _paths(lamar: Any, state_dir: str | os.PathLike[str] | None) -> Paths:
    if state_dir is None:
        return paths_for(str(lamar.store.location))
    folder = Path(state_dir).expanduser()
    return Paths(state=folder / "claude-code.state.json", log=folder / "claude-code.log",
                 traces=folder / "claude-code.traces.jsonl")
