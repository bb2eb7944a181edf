"""An AWS access key id written backwards is redacted, as the other providers' reversed keys are,
while a forward id whose body holds no digit is still redacted in text without any other key."""

from __future__ import annotations

import random

import pytest

from lamar.safety import scrub

BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
PREFIXES = ["AKIA", "ASIA", "AROA", "AIDA", "ANPA"]


def key_ids(seed: int) -> list[str]:
    rng = random.Random(seed)
    with_digit = [rng.choice(PREFIXES) + "".join(rng.choice(BASE32) for _ in range(15)) + rng.choice("234567")
                  for _ in range(3)]
    return [*with_digit, rng.choice(PREFIXES) + "".join(rng.choice(BASE32[:26]) for _ in range(16))]


def layouts(key: str) -> list[str]:
    return [f"the key id, reversed: {key[::-1]}", f"aws_id = '{key[::-1]}'", f"{key[::-1]} is the id, backwards"]


@pytest.mark.parametrize("seed", range(40))
def test_a_reversed_key_id_with_a_digit_is_redacted(seed: int) -> None:
    for key in key_ids(seed)[:3]:
        for text in layouts(key):
            cleaned, kinds = scrub(text)
            assert key[::-1] not in cleaned and kinds == ["aws-access-key"], cleaned
            assert scrub(cleaned) == (cleaned, [])


@pytest.mark.parametrize("seed", range(40))
def test_a_forward_key_id_without_a_digit_is_still_redacted_alone(seed: int) -> None:
    key = key_ids(seed)[3]
    assert scrub(f"deploy with {key} today") == ("deploy with [REDACTED:aws-access-key] today", ["aws-access-key"])


@pytest.mark.parametrize("text", [
    "the ACCA and AKIA prefixes name key ids; AIKA backwards is no key",
    "SHA1 9F86D081884C7D659A2FEAE0C55AD015A3BF4F1B is the digest",
    "the run id AIKA1234567890 is short",
    "XAIKA0123456789ABCDEFGH is longer than an id",
])
def test_text_that_only_looks_reversed_stays(text: str) -> None:
    assert scrub(text) == (text, [])
