"""Credentials in generated disguises: provider tokens and assignments with invisible characters,
variation selectors and combining marks inside, line breaks of every kind around them, in prose
and code. A model reads through each disguise, so `scrub` must too. The count is printed (`-s`)."""

from __future__ import annotations

import collections
import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from lamar.safety import plain_text, scrub
from tests.safety.unicode_spellings import LINE_BREAKS

CASES: collections.Counter[str] = collections.Counter()
_rng = random.Random(3939)
ALNUM = string.ascii_letters + string.digits


def _fake(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


TOKENS = {  # seeded fakes in each provider's shape
    "github-token": "ghp_" + _fake(ALNUM, 36),
    "openai-api-key": "sk-proj-" + _fake(ALNUM, 40) + "7",
    "anthropic-api-key": "sk-ant-api03-" + _fake(ALNUM, 40),
    "slack-token": "xoxb-" + _fake(string.digits, 12) + "-" + _fake(ALNUM, 24),
    "aws-access-key": "AKIA" + _fake(string.ascii_uppercase + "234567", 15) + "7",
    "google-api-key": "AIza" + _fake(ALNUM, 35),
    "stripe-key": "sk_live_" + _fake(ALNUM, 24),
}
# Characters shown as nothing: zero-width, joiners, bidi marks, variation selectors (both blocks),
# the combining grapheme joiner, Mongolian selectors, a soft hyphen, tags; and marks on letters.
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u202e\ufe0f\ufe00\u034f\u180b\U000e0100\U000e0041"
MARKS = "\u0301\u0335\u0336\u0338\u20d2\u0489"


@st.composite
def disguised(draw: st.DrawFn, token: str) -> str:
    out = []
    for ch in token:
        out.append(ch)
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(st.text(alphabet=st.sampled_from(INVISIBLE + MARKS), min_size=1, max_size=2)))
    return "".join(out)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.sampled_from(sorted(TOKENS)).flatmap(lambda k: st.tuples(st.just(k), disguised(TOKENS[k]))),
       st.sampled_from(["export API_KEY={}", "the token is {} for now", "use {}", "{}", "curl -H 'x: {}'"]),
       st.sampled_from(("", " ", *LINE_BREAKS)))
def test_a_token_with_invisible_characters_and_marks_inside_is_scrubbed(
        drawn: tuple[str, str], frame: str, edge: str) -> None:
    kind, hidden = drawn
    text = edge + frame.format(hidden) + edge
    cleaned, kinds = scrub(text)
    assert kinds, (kind, text)
    assert TOKENS[kind] not in plain_text(cleaned) and TOKENS[kind][8:24] not in plain_text(cleaned)
    assert scrub(cleaned)[1] == []
    CASES[kind] += 1


def test_print_the_count_of_cases() -> None:
    print(f"\ngenerated disguised-secret cases run: {sum(CASES.values())}")
    for kind, count in sorted(CASES.items()):
        print(f"  {kind}: {count}")
