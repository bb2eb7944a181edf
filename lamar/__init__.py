"""Lamar: agents that learn from what happened after they acted.

    lam = Lamar(ExperienceStore("~/.lamar/experience.json"), k=3)
    rec = lam.recall({"project": "trace", "task": "build_fails"})
    ...  # put rec.as_prompt() in the system prompt, act
    lam.report(rec.episode_id, Signal.SHIPPED)
"""

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
from lamar.recall import Recall
from lamar.signals import Signal
from lamar.sleep.proposals import ApplyResult, Proposal, SleepReport
from lamar.sleep.traces import Trace
from lamar.store import ExperienceStore

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
