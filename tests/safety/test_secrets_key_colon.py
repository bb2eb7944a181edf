"""A credential's key and a colon, then the value or words about it: "password: hunter2" and
"password: correct horse battery staple" lose the value; "password: is required" stays, generated from a seed."""

from __future__ import annotations

import random
import string

import pytest

from lamar.safety import scrub

ALNUM = string.ascii_letters + string.digits
KEYS = ["password", "PASSWORD", "db_password", "passphrase", "token", "api_key", "secret", "smtp_pass", "Password"]
LEADS = ["", "  ", "- ", "    "]
# Words of a passphrase: what diceware and xkcd lists draw from, none of them a word that starts a sentence.
_WORD_TEXT = ("correct horse battery staple orbit marble lantern cactus velvet pepper glacier tundra walnut "
         "falcon canyon prism ember willow harbor meadow copper quartz saddle thimble rocket banjo fossil "
         "nectar pylon sonnet turnip violet zephyr alpine bramble cobalt dune")
WORDS = _WORD_TEXT.split()
NOUNS = ["database", "admin account", "SMTP relay", "service account", "deploy key", "staging box", "API"]


def values(seed: int) -> list[tuple[str, str]]:
    """(name, a real value) drawn from `seed`."""
    rng = random.Random(seed)
    pw = (rng.choice(string.ascii_uppercase) + "".join(rng.choice(ALNUM) for _ in range(8))
          + rng.choice(string.digits) + rng.choice("!#%*_-"))
    phrase = " ".join(rng.sample(WORDS, rng.randint(3, 6)))
    return [
        ("password", pw),
        ("word-like password", f"{rng.choice(['is', 'see', 'must'])}-a-{rng.choice(WORDS).title()}{rng.randrange(10)}"),
        ("passphrase", phrase),
        ("passphrase in title case", phrase.title()),
        ("passphrase with a number",
         f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randrange(10, 99)} {rng.choice(WORDS)}"),
        ("one plain word", rng.choice(WORDS) + rng.choice(WORDS)),
    ]


def prose(seed: int) -> list[str]:
    """Words about the key where its value would be, drawn from `seed`."""
    rng = random.Random(seed)
    noun, n = rng.choice(NOUNS), rng.randrange(8, 33)
    return [
        "is required", "is required.", f"must be at least {n} characters", f"must be at least {n} characters long.",
        "see below", f"see the {noun} section", "(empty)", "(not set)", "(n/a)", "required field", "none",
        f"the {noun}'s password, read from the environment", f"a string of {n} characters or more",
        "Bearer token that every request must carry.", f"over HTTP, every request to the {noun} must carry it",
        "optional, defaults to the value of PGPASSWORD", f"if set, the {noun} is reached with it",
        f"used to sign requests to the {noun}", f"never logged; rotate it every {n} days",
        f"same as the {noun} one", f"Taken from {noun} at start-up",
    ]


def lines(seed: int, value: str) -> list[str]:
    rng = random.Random(seed)
    key = rng.choice(KEYS)
    return [f"{rng.choice(LEADS)}{key}: {value}", f"config:\n  {key}: {value}\r\n  port: 5432\n"]


@pytest.mark.parametrize(("name", "value"), values(31), ids=[v[0] for v in values(31)])
def test_the_value_after_a_key_and_colon_is_redacted_whole(name: str, value: str) -> None:
    for text in lines(31, value):
        cleaned, kinds = scrub(text)
        assert kinds and not any(word in cleaned for word in value.split() if len(word) > 3), (name, cleaned)
        assert scrub(cleaned) == (cleaned, [])


@pytest.mark.parametrize("words", prose(41))
def test_words_about_the_key_stay(words: str) -> None:
    for text in lines(41, words):
        assert scrub(text) == (text, [])


def test_many_seeds_on_both_sides() -> None:
    leaked = [(text, scrub(text)[0]) for seed in range(150) for _, value in values(seed)
              for text in lines(seed, value) if any(w in scrub(text)[0] for w in value.split() if len(w) > 3)]
    changed = [(text, scrub(text)[0]) for seed in range(150) for words in prose(seed)
               for text in lines(seed, words) if scrub(text)[1]]
    print(f"\nvalues after a key and colon leaked: {len(leaked)}; words about the key changed: {len(changed)}")
    assert leaked == [] and changed == []


def test_a_key_mid_sentence_and_a_comment_are_left_as_they_were() -> None:
    assert scrub("The password: is required.") == ("The password: is required.", [])
    assert scrub("password: Xq7vR2mZ9tLk # the staging one")[0] == "password: [REDACTED:password] # the staging one"
    assert scrub("password: dragonfly")[0] == "password: [REDACTED:password]"
    # Words aligned with a few spaces are still one value; the value stays within what scrub reads past its start.
    assert scrub("password: correct     horse  battery staple")[0] == "password: [REDACTED:password]"
