"""Safety: scrub credentials out of traces and lessons, and spot text that tries to instruct the model.

`scrub`, `scrub_trace`, `scrub_context`, `injection_reason`, `prompt_safe` and `terminal_safe` are its public names."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lamar.safety.context_values import scrub_context
    from lamar.safety.fence import prompt_safe
    from lamar.safety.injection import injection_reason
    from lamar.safety.plain import plain_text
    from lamar.safety.secrets import is_placeholder, scrub
    from lamar.safety.terminal import terminal_safe
    from lamar.safety.traces import scrub_trace

# Each name loads its own module on first use: the CLI writes every line through `terminal`,
# and should not compile the secret and injection patterns for a command that never scrubs.
_HOME = {"prompt_safe": "fence", "injection_reason": "injection", "plain_text": "plain",
         "is_placeholder": "secrets", "scrub": "secrets", "terminal_safe": "terminal", "scrub_trace": "traces",
         "scrub_context": "context_values"}


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'lamar.safety' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"lamar.safety.{home}"), name)
    globals()[name] = value
    return value


__all__ = ["injection_reason", "is_placeholder", "plain_text", "prompt_safe", "scrub", "scrub_context", "scrub_trace",
           "terminal_safe"]
