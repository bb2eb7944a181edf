"""Recall and false-positive rate of `scrub` on a corpus written after the rules were frozen.

Run `python -m pytest tests/safety/test_heldout_figures.py -s` to print the figures that
docs/guarantees.md publishes; the floors below are those figures, so a change that loses a
catch or adds a false alarm fails here.
"""

from __future__ import annotations

from lamar.safety import scrub
from tests.safety.heldout_corpus import ORDINARY, SECRETS


def _caught(text: str) -> bool:
    cleaned, kinds = scrub(text)
    return bool(kinds) and cleaned != text


def test_heldout_recall_and_false_positive_figures() -> None:
    missed = [text for text in SECRETS if not _caught(text)]
    flagged = [(text, scrub(text)[1]) for text in ORDINARY if scrub(text)[1]]
    recall = 1 - len(missed) / len(SECRETS)
    false_positive = len(flagged) / len(ORDINARY)
    print(f"\nheld-out secrets caught: {len(SECRETS) - len(missed)}/{len(SECRETS)} ({recall:.0%})")
    print(f"ordinary lessons flagged: {len(flagged)}/{len(ORDINARY)} ({false_positive:.1%})")
    for text in missed:
        print(f"  missed: {text!r}")
    for text, kinds in flagged:
        print(f"  false positive {kinds}: {text!r}")
    assert len(SECRETS) - len(missed) >= FLOOR_CAUGHT
    assert len(flagged) <= CEILING_FLAGGED


FLOOR_CAUGHT = 56  # the recall docs/guarantees.md publishes for the rules of this release
CEILING_FLAGGED = 0  # the false positives it publishes
