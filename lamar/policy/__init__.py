"""The decision core: selection (optimistic bound), holdout coins, the evidence ledger,
verdicts on anytime-valid bounds, and change detection."""

from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState
from lamar.policy.verdicts import Evidence, Verdict, confidence_radius

__all__ = ["Evidence", "LessonState", "Policy", "Verdict", "confidence_radius"]
