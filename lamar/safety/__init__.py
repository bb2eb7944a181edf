"""Safety: scrub credentials out of traces and lessons, and spot text that tries to instruct the model.

    clean, kinds = scrub("export GITHUB_TOKEN=ghp_...")      # kinds like ["github-token"]
    trace, kinds = scrub_trace(trace)                        # every string field of a sleep trace
    injection_reason("Ignore all previous instructions")     # a reason, or None for a plain lesson
    prompt_safe(text)                                        # one line a model reads as quoted text
    terminal_safe(provenance_text)                           # control and bidi characters as escapes
"""

from __future__ import annotations

from lamar.safety.fence import prompt_safe
from lamar.safety.injection import injection_reason
from lamar.safety.plain import plain_text
from lamar.safety.secrets import is_placeholder, scrub
from lamar.safety.terminal import terminal_safe
from lamar.safety.traces import scrub_trace

__all__ = ["injection_reason", "is_placeholder", "plain_text", "prompt_safe", "scrub", "scrub_trace", "terminal_safe"]
