"""A long trace field is scrubbed near the part the mining prompt shows, and no credential cut there leaks."""

from __future__ import annotations

import json
import random
import re
import string
from typing import Any

import pytest

import lamar.safety
from lamar import Lamar, Trace
from lamar.models import ScriptedModel
from lamar.safety import scrub
from lamar.safety.secrets import REACH, RULES
from lamar.sleep.mining_prompt import _CLIP, render_trace

LIMIT = _CLIP["input"]
FILLER = "the build failed again at the linker step; "


def _random(alphabet: str, n: int, seed: int) -> str:
    return "".join(random.Random(seed).choices(alphabet, k=n))


ALNUM = string.ascii_letters + string.digits
PEM_BODY = "\n".join(_random(ALNUM + "+/", 64, 20 + i) for i in range(6))
# (credential as it stands in the text, the part of it that must never be shown)
FORMATS = [
    ("ghp_" + _random(ALNUM, 36, 1), None),
    ("sk-proj-" + _random(ALNUM, 48, 2), None),
    ("sk-ant-api03-" + _random(ALNUM + "_-", 90, 3), None),
    ("AKIA" + _random(string.ascii_uppercase + string.digits, 16, 4), None),
    ("xoxb-" + _random(string.digits, 12, 5) + "-" + _random(ALNUM, 24, 6), None),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + _random(ALNUM + "_-", 43, 7), None),
    ("-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE KEY-----", PEM_BODY),
    ("postgres://admin:" + (pw := _random(ALNUM, 24, 8)) + "@db.internal:5432/app", pw),
    ("DB_PASSWORD=" + (pw2 := _random(ALNUM, 20, 9)), pw2),
    ("Authorization: Bearer " + (bearer := _random(ALNUM, 40, 10)), bearer),
]


def _fragments(secret: str, size: int = 5) -> set[str]:
    return {secret[i:i + size] for i in range(len(secret) - size + 1) if secret[i:i + size].strip()}


def _shown(text: str) -> str:
    line, _ = render_trace(Trace("t1", {"project": "demo"}, input=text), scrub, REACH)
    shown: str = json.loads(line)["input"]
    return shown


def _filler(n: int) -> str:
    return (FILLER * (n // len(FILLER) + 1))[:n]


@pytest.mark.parametrize(("credential", "hidden"), FORMATS, ids=[f[0][:8] for f in FORMATS])
def test_a_credential_cut_by_the_clip_never_shows_a_fragment(credential: str, hidden: str | None) -> None:
    hidden = hidden or credential
    assert scrub(credential)[1], "the format must be one scrub redacts whole"
    fragments = _fragments(hidden)
    for before in range(1, len(credential)):  # the clip falls `before` characters into the credential
        text = _filler(LIMIT - before) + " " + credential + " " + _filler(20 * LIMIT)
        shown = _shown(text)
        assert len(shown) == LIMIT + len(" [...clipped]")
        leaked = [f for f in fragments if f in shown]
        assert not leaked, (before, leaked, shown[-80:])


@pytest.mark.parametrize(("credential", "hidden"), FORMATS[:3] + FORMATS[7:8], ids=["ghp", "sk-proj", "sk-ant", "url"])
def test_a_credential_cut_by_the_scrubbed_window_never_shows_a_fragment(credential: str, hidden: str | None) -> None:
    # A long key at the start shrinks to its placeholder, which pulls text from near the end of the
    # window read into the part shown: a credential the window cuts there must not come with it.
    hidden = hidden or credential
    key = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(_random(ALNUM, 64, 40 + i) for i in range(45))
    key += "\n-----END PRIVATE KEY-----\n"
    fragments = _fragments(hidden)
    for end in range(LIMIT + 2 * REACH - 400, LIMIT + 2 * REACH + 40, 11):
        for before in (3, len(credential) // 2, len(credential) - 2):
            text = key + _filler(end - len(key) - before) + credential + " " + _filler(10 * LIMIT)
            shown = _shown(text)
            leaked = [f for f in fragments if f in shown]
            assert not leaked, (end, before, leaked)


def test_a_long_field_is_scrubbed_only_near_the_part_the_prompt_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []

    def recording(text: str) -> tuple[str, list[str]]:
        read.append(len(text))
        return scrub(text)

    monkeypatch.setattr(lamar.safety, "scrub", recording)
    big = _filler(200_000)
    traces = [Trace(f"t{i}", {"project": "demo"}, input=big, attempted=[big], tool_errors=[big], output=big)
              for i in range(2)]
    model = ScriptedModel(lambda prompt: "[]")
    Lamar(":memory:", seed=1).sleep(traces=traces, model=model)
    assert read and max(read) <= max(_CLIP.values()) + 2 * REACH
    assert '"input": "the build failed' in model.prompts[0]


def test_a_short_field_is_shown_whole_and_a_long_one_clipped_as_before() -> None:
    token = FORMATS[0][0]
    assert _shown("use " + token) == "use [REDACTED:github-token]"
    shown = _shown(token + " " + _filler(10 * LIMIT))
    assert shown.startswith("[REDACTED:github-token] the build") and shown.endswith(" [...clipped]")


def _widest(pattern: re.Pattern[str]) -> Any:
    from re import _parser  # type: ignore[attr-defined]

    return _parser.parse(pattern.pattern, pattern.flags).getwidth()[1]


def test_every_rule_of_bounded_length_fits_the_reach() -> None:
    # A rule whose match has an upper bound needs all of it to redact; one without matches any cut
    # of a longer credential (the end lookaheads accept the end of the text).
    from re import _constants  # type: ignore[attr-defined]

    widths = [_widest(rule.pattern) for rule in RULES]
    bounded = [w for w in widths if w < _constants.MAXREPEAT]
    assert bounded and max(bounded) <= REACH - 200, max(bounded)
