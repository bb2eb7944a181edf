"""The verdict audit: `python -m lamar.audit` runs seeded worlds whose truth moves, through the
public API only, reads every verdict after every report, and prints error rates with
Clopper-Pearson bounds (docs/decisions.md, "The verdict audit")."""

from lamar.audit.runner import run_one
from lamar.audit.scenarios import SCENARIOS, Scenario
from lamar.audit.summary import clopper_pearson, summarize

__all__ = ["SCENARIOS", "Scenario", "clopper_pearson", "run_one", "summarize"]
