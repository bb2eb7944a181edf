"""Safety: scrub credentials out of traces and lessons, and spot text that tries to instruct the model.

`scrub`, `scrub_trace`, `injection_reason`, `prompt_safe` and `terminal_safe` are its public names."""

from __future__ import annotations

from lamar.safety.fence import prompt_safe
from lamar.safety.injection import injection_reason
from lamar.safety.plain import plain_text
from lamar.safety.secrets import is_placeholder, scrub
from lamar.safety.terminal import terminal_safe
from lamar.safety.traces import scrub_trace

__all__ = ["injection_reason", "is_placeholder", "plain_text", "prompt_safe", "scrub", "scrub_trace", "terminal_safe"]
