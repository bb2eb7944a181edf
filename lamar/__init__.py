"""Lamar: agents that learn from what happened after they acted."""

from __future__ import annotations

# Not `from typing import TYPE_CHECKING`: `lamar` imports nothing when it loads (the `lamar` command
# reaches its Ctrl+C handler before any module loads); mypy reads this name as typing's.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from lamar._errors import (
        CorruptStore,
        DuplicateReport,
        EventConflict,
        InvalidArgument,
        InvalidContext,
        InvalidEvent,
        InvalidExperience,
        InvalidReport,
        InvalidReward,
        InvalidTrace,
        LamarError,
        ModelError,
        StaleProposal,
        StoreError,
        UnknownEpisode,
        UnknownExperience,
        UnknownProposal,
    )
    from lamar.engine import Lamar
    from lamar.experience import Experience, Scope, Status
    from lamar.policy import Evidence, Policy, Verdict
    from lamar.preview import Preview
    from lamar.recall import Recall
    from lamar.signals import Signal
    from lamar.sleep.proposals import ApplyResult, Proposal, SleepReport
    from lamar.sleep.traces import Trace
    from lamar.store import ExperienceStore

# Every name loads on first use, so `import lamar` costs nothing: the errors, lessons and stores when a
# program names them, the engine and its decision core when it names `Lamar` (or a verdict), sleep only
# when it sleeps, so a hook or a CLI does not pay for consolidation, mining and the safety rules
# (tests/test_import.py holds this).
_ERRORS = ("CorruptStore", "DuplicateReport", "EventConflict", "InvalidArgument", "InvalidContext", "InvalidEvent",
           "InvalidExperience", "InvalidReport", "InvalidReward", "InvalidTrace", "LamarError", "ModelError",
           "StaleProposal", "StoreError", "UnknownEpisode", "UnknownExperience", "UnknownProposal")
_LAZY = {**dict.fromkeys(_ERRORS, "lamar._errors"), "Experience": "lamar.experience", "Scope": "lamar.experience",
         "Status": "lamar.experience", "Signal": "lamar.signals", "ExperienceStore": "lamar.store",
         "Lamar": "lamar.engine", "Evidence": "lamar.policy", "Policy": "lamar.policy",
         "Verdict": "lamar.policy", "Recall": "lamar.recall", "Preview": "lamar.preview",
         "ApplyResult": "lamar.sleep.proposals", "Proposal": "lamar.sleep.proposals",
         "SleepReport": "lamar.sleep.proposals", "Trace": "lamar.sleep.traces"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lamar' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # `dir(lamar)` and an editor's completion list the names loaded on first use, too.
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"

__all__ = [
    "ApplyResult",
    "CorruptStore",
    "DuplicateReport",
    "EventConflict",
    "Evidence",
    "Experience",
    "ExperienceStore",
    "InvalidArgument",
    "InvalidContext",
    "InvalidEvent",
    "InvalidExperience",
    "InvalidReport",
    "InvalidReward",
    "InvalidTrace",
    "Lamar",
    "LamarError",
    "ModelError",
    "Policy",
    "Preview",
    "Proposal",
    "Recall",
    "Scope",
    "Signal",
    "SleepReport",
    "StaleProposal",
    "Status",
    "StoreError",
    "Trace",
    "UnknownEpisode",
    "UnknownExperience",
    "UnknownProposal",
    "Verdict",
]
