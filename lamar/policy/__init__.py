"""The decision core: selection (Thompson sampling), the evidence coin, the evidence ledger,
verdicts on a nonasymptotic anytime-valid bound, and the fall detector."""

from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState
from lamar.policy.verdicts import Evidence, Verdict, betting_bounds

__all__ = ["Evidence", "LessonState", "Policy", "Verdict", "betting_bounds"]
