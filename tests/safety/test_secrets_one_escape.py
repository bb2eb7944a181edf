"""A provider's token with one character escaped (`ghp&#95;…`, `ghp%5F…`, `ghp\\x5f…`, `sk%2Dant-…`) is
redacted, as one with three escapes or more was already; URLs with an escape or two stay."""

from __future__ import annotations

import random
import string

import pytest

from lamar.safety import scrub

ALNUM = string.ascii_letters + string.digits


def tokens(seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    body = "".join(rng.choice(ALNUM) for _ in range(36))
    github, anthropic = "ghp_" + body, "sk-ant-api03-" + body + "AA"
    return [
        ("html decimal", github.replace("_", "&#95;")),
        ("html hex", github.replace("_", "&#x5f;")),
        ("percent", github.replace("_", "%5F")),
        ("python hex", github.replace("_", "\\x5f")),
        ("two escapes", anthropic.replace("-", "%2D", 2)),
        ("in a sentence", "push with " + github.replace("_", "%5f", 1) + " then retry"),
    ]


@pytest.mark.parametrize(("name", "text"), tokens(5), ids=[t[0] for t in tokens(5)])
def test_a_token_with_one_character_escaped_is_redacted(name: str, text: str) -> None:
    cleaned, kinds = scrub(text)
    body = text[-30:].split()[0] if name != "in a sentence" else text.split()[2][-30:]
    assert body not in cleaned and kinds and kinds[0].startswith("escaped-"), (name, cleaned)


def test_many_seeds_are_redacted() -> None:
    assert [t for seed in range(100) for _, t in tokens(seed) if not scrub(t)[1]] == []


@pytest.mark.parametrize("text", [
    "GET /search?q=hello%20world%20and%20more_words_here HTTP/1.1",
    "open file%20name%20with%20spaces_and_more.txt",
    "the page said caf&#233;_au_lait_recipes_for_winter",
    "path C:\\x5fbuild_output_directory_name",
])
def test_ordinary_runs_with_an_escape_are_kept(text: str) -> None:
    assert scrub(text) == (text, [])


@pytest.mark.parametrize("text", ["abc&#1a;&#2b;&#3c;def", "note&#9f;&#ab;&#cd; that", "x" * 20 + "&#1f;"])
def test_a_decimal_reference_with_hex_digits_is_no_escape(text: str) -> None:
    # "&#1a;" looks like a reference but is none: it once reached int(..., 10) and raised ValueError.
    assert scrub(text) == (text, [])


def test_a_token_whose_every_character_is_a_decimal_or_capital_hex_reference_is_redacted() -> None:
    github = tokens(7)[0][1].replace("&#95;", "_")
    for escaped in ("".join(f"&#{ord(c)};" for c in github), "".join(f"&#X{ord(c):x};" for c in github)):
        cleaned, kinds = scrub(f"token {escaped} ok")
        assert kinds == ["escaped-github-token"] and cleaned == "token [REDACTED:escaped-github-token] ok", cleaned
