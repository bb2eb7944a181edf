"""What if? Off-policy estimates, from the logged propensities, of what another policy would
have got over the episodes already logged (docs/whatif.md states the assumptions)."""

from __future__ import annotations

from lamar.whatif.alternatives import Alternative, Beliefs
from lamar.whatif.ask import whatif
from lamar.whatif.estimators import ESTIMATORS, Estimate
from lamar.whatif.log import LoggedEpisode
from lamar.whatif.report import AlternativeReport, WhatIfReport
from lamar.whatif.slate import Slate

__all__ = ["ESTIMATORS", "Alternative", "AlternativeReport", "Beliefs", "Estimate", "LoggedEpisode", "Slate",
           "WhatIfReport", "whatif"]
