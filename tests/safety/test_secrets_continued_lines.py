"""A key cut by a line continuation (a backslash at the end of a line, as shell, Makefiles, C and Python
strings write it) is one key to the program that reads it, so scrub must read it as one."""

from __future__ import annotations

import random
import string

import pytest

from lamar import Experience, InvalidExperience, Lamar, Scope
from lamar.safety import scrub, scrub_trace

ALNUM = string.ascii_letters + string.digits
LAYOUTS = [
    "export GH_TOKEN={a}\\\n{b}",
    'export GH_TOKEN="{a}\\\n    {b}"',
    'curl -H "Authorization: token {a}\\\n{b}" https://api.github.com/user',
    'key = "{a}\\\n{b}"',
    "API_KEY := {a}\\\r\n\t{b}",
]


def keys(seed: int) -> list[str]:
    rng = random.Random(seed)

    def body(n: int) -> str:
        return "".join(rng.choice(ALNUM) for _ in range(n))

    return ["ghp_" + body(36), "sk-ant-api03-" + body(93) + "AA", "glpat-" + body(20), "AKIA" + body(16).upper()]


@pytest.mark.parametrize("seed", range(5))
def test_a_key_cut_by_a_line_continuation_is_scrubbed_whole(seed: int) -> None:
    rng = random.Random(seed)
    missed = []
    for key in keys(seed):
        for layout in LAYOUTS:
            cut = rng.randrange(6, len(key) - 6)
            text = layout.format(a=key[:cut], b=key[cut:])
            cleaned, kinds = scrub(text)
            trace = str(scrub_trace({"id": "t", "messages": [{"role": "user", "content": text}]}))
            if not kinds or key[:cut] in cleaned or key[cut:] in cleaned or key[cut:] in trace:
                missed.append(text)
    assert missed == []


def test_add_refuses_a_lesson_with_a_key_cut_by_a_line_continuation() -> None:
    key = keys(7)[0]
    lam = Lamar(":memory:")
    with pytest.raises(InvalidExperience, match="looks like a secret"):
        lam.add(Experience("the API says 401", f"export GH_TOKEN={key[:20]}\\\n{key[20:]}", "", Scope(project="x")))
    assert lam.experiences() == []


@pytest.mark.parametrize("text", [
    "docker run --rm \\\n  -v $PWD:/src \\\n  python:3.12 pytest -x",
    "./configure --prefix=/usr/local \\\n    --with-openssl=/opt/ssl3 \\\n    --enable-shared",
    'printf "line one\\\nline two 2026"',
])
def test_an_ordinary_continued_command_is_left_alone(text: str) -> None:
    assert scrub(text) == (text, [])
