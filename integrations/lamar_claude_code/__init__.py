"""Lamar inside Claude Code: lessons injected on each prompt, outcomes read from the next prompt and git.
The hook path imports only the standard library and `lamar`; `hooks` (for the Claude Agent SDK)
imports the SDK when called. Setup: docs/claude-code.md."""

from __future__ import annotations

from typing import Any

from lamar_claude_code.config import HookConfig, load_config
from lamar_claude_code.context import derive_context, error_class, task_class
from lamar_claude_code.outcomes import read_followup


def hooks(lamar: Any, **options: Any) -> Any:
    """The `hooks=` mapping of `ClaudeAgentOptions` for this engine (see `lamar_claude_code.sdk.hooks`)."""
    from lamar_claude_code.sdk import hooks as sdk_hooks

    return sdk_hooks(lamar, **options)


def session_traces(path: Any, session: str, episodes: Any = None) -> Any:
    """A transcript's prompts as sleep traces (see `lamar_claude_code.transcript.session_traces`)."""
    from lamar_claude_code.transcript import session_traces as traces

    return traces(path, session, episodes)


__all__ = ["HookConfig", "derive_context", "error_class", "hooks", "load_config", "read_followup",
           "session_traces", "task_class"]
