"""In-process hooks for agents built on the Claude Agent SDK: the same episodes as the command hooks."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, cast

from claude_agent_sdk import HookContext, HookInput, HookJSONOutput, HookMatcher

from lamar_claude_code.config import HookConfig
from lamar_claude_code.episodes import Budget, Paths, handle_event
from lamar_claude_code.hook import COMMITTED_WAIT, paths_for
from lamar_claude_code.settings import TOOL_MATCHER
from lamar_claude_code.state import log_line


def hooks(lamar: Any, *, state_dir: str | os.PathLike[str] | None = None, config: HookConfig | None = None,
          budget: float | None = None) -> dict[str, list[HookMatcher]]:
    """The `hooks=` mapping of `ClaudeAgentOptions`: recall on UserPromptSubmit, edits on PostToolUse.

    Each callback runs the shared `handle_event` in a worker thread under a deadline, and answers
    `{}` (no opinion) on any error or timeout: an SDK hook that fails must not block the agent.

    Args:
        lamar: the engine (`Lamar`) the agent learns into.
        state_dir: where the bookkeeping, log and traces go (default: beside the store's file,
            or ~/.lamar for stores that are not files).
        config: the hooks' config (default: read per project like the command hook).
        budget: seconds after which a callback injects nothing (default: the config's, 2).

    Returns:
        {"UserPromptSubmit": [...], "PostToolUse": [...], "Stop": [...]} of `HookMatcher`s.
    """
    paths = _paths(lamar, state_dir)
    seconds = budget if budget is not None else (config.budget_seconds if config else 2.0)

    async def callback(input_data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        start = asyncio.get_running_loop().time()
        deadline = Budget(seconds)
        work = asyncio.ensure_future(asyncio.to_thread(handle_event, dict(input_data), lambda: lamar, paths,
                                                       config=config, budget=deadline))
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
            log_line(paths.log, f"sdk {input_data.get('hook_event_name', 'event')}: {type(exc).__name__}: {exc} "
                     f"after {waited:.2f}s")
            return cast(HookJSONOutput, {})
        if not text:
            return cast(HookJSONOutput, {})  # no opinion: the prompt or tool call goes on unchanged
        return cast(HookJSONOutput, {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                            "additionalContext": text}})

    return {
        "UserPromptSubmit": [HookMatcher(hooks=[callback], timeout=seconds + 5)],
        "PostToolUse": [HookMatcher(matcher=TOOL_MATCHER, hooks=[callback], timeout=seconds + 5)],
        "Stop": [HookMatcher(hooks=[callback], timeout=seconds + 5)],
    }


def _paths(lamar: Any, state_dir: str | os.PathLike[str] | None) -> Paths:
    if state_dir is None:
        return paths_for(str(lamar.store.location))
    folder = Path(state_dir).expanduser()
    return Paths(state=folder / "claude-code.state.json", log=folder / "claude-code.log",
                 traces=folder / "claude-code.traces.jsonl")
