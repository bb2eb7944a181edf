"""docs/sleep.md's "Measured" paragraph gives how many of the corpus's instructions dressed as prohibitions
`instructed_harm` names: the figure is counted here, so a line added to the corpus cannot leave it stale."""
from __future__ import annotations

import re

from lamar.safety.instructs import instructed_harm
from tests.docblocks import ROOT
from tests.safety.warning_corpus import EXCEPTION_FIRST, NEGATED_INSTRUCTIONS, REVERSED


def test_the_page_counts_the_dressed_prohibitions_the_corpus_holds() -> None:
    dressed = NEGATED_INSTRUCTIONS + EXCEPTION_FIRST + REVERSED
    named = sum(instructed_harm(text) is not None for text in dressed)
    page = " ".join((ROOT / "docs" / "sleep.md").read_text(encoding="utf-8").split())
    found = re.search(r"Of the (\d+) instructions dressed as prohibitions .*? names (\d+):", page)
    assert found is not None
    assert (int(found[1]), int(found[2])) == (len(dressed), named)
