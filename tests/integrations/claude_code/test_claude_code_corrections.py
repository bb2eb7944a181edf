"""Common ways to say the last answer was wrong, read from the next prompt (the rules in outcomes.py)."""

from __future__ import annotations

import pytest

from lamar_claude_code.outcomes import read_followup

PREVIOUS = "make refund refuse negative amounts"


@pytest.mark.parametrize("prompt", [
    # Each was read as moving on: +0.6 for the turn where -0.6 was meant.
    "that's not it",
    "not quite, the check must use Decimal",
    "still wrong",
    "still not working",
    "still getting the same error",
    "still getting a 500 from /refund",
    "still seeing it fail on CI",
    "same error as before",
    "put it back the way it was",
    "go back to the previous version",
    "that's worse",
    "that made it worse",
    "you misunderstood",
    "this doesn't compile",
    "it fails with TypeError now",
    "now it crashes on an empty amount",
    "the build is red now",
    "I didn't ask for that",
])
def test_a_plain_rejection_is_a_correction(prompt: str) -> None:
    assert read_followup(PREVIOUS, prompt)[0] == "corrected"


@pytest.mark.parametrize("prompt", [
    "great, thanks! now add docs",
    "looks good, commit it",
    "the tests pass now, add a changelog entry",
    "add a button to go back to the previous page",
    "the job was failing now and then, add a retry",
    "make sure the old flag still works",
    "it still needs a docstring",
    "now add a test that raises TypeError for a string amount",
    "add the same error handling to fmt",
    "not quitting on the first error would be nice: collect them all",
    "did you ask the billing team about the rounding?",
    "it doesn't fail now, thanks",
    "great, it no longer crashes now. Add docs",
    "make the button red now",
    "now it raises a clear ValueError, good; add docs",
    # Requests that name a failure to handle, not one the last turn brought.
    "fix the broken link now.",
    "handle the crash now",
    "add a test that fails now",
    "make the parser fail now",
    "I'm still getting started here: explain how fmt rounds",
    "still seeing how this fits together, what does refund return?",
])
def test_moving_on_stays_accepted(prompt: str) -> None:
    assert read_followup(PREVIOUS, prompt)[0] == "accepted"
