"""`lamar.lesson_file.read_lessons` from Python: many lessons from Markdown or JSON Lines text, each
checked before any is stored, then added with `Lamar.add`; bad input is a LamarError."""

from __future__ import annotations

import pytest

from lamar import InvalidArgument, InvalidContext, InvalidExperience, Lamar, Scope, Status
from lamar.lesson_file import read_lessons

MARKDOWN = """# Build
Some prose that is not a lesson.
- When the Xcode build fails after a dependency bump, clear DerivedData, because stale module maps survive.
- When a lint error shows on CI only, pin the linter's version.
"""
JSON_LINES = """{"precondition": "a Go test flakes", "action": "run it alone with -count=1", \
"scope": {"language": "go"}}
{"precondition": "a migration times out", "action": "check the lock timeout", "status": "candidate"}
"""


def test_markdown_and_json_lines_become_lessons_to_add() -> None:
    lam = Lamar(":memory:")
    notes = read_lessons(MARKDOWN, name="notes.md", scope={"project": "trace"})
    lines = read_lessons(JSON_LINES, scope={"project": "trace"})  # JSON Lines by its first "{"
    ids = [lam.add(exp) for exp in [*notes, *lines]]
    stored = [lam.get(i) for i in ids]
    assert [e.action for e in stored] == ["clear DerivedData", "pin the linter's version",
                                          "run it alone with -count=1", "check the lock timeout"]
    assert [e.provenance["line"] for e in stored] == [3, 4, 1, 2]
    assert stored[0].provenance["file"] == "notes.md" and stored[0].provenance["via"] == "read_lessons"
    assert stored[2].scope == Scope(project="trace", language="go")
    assert [e.status for e in stored] == [Status.ACTIVE, Status.ACTIVE, Status.ACTIVE, Status.CANDIDATE]


@pytest.mark.parametrize("call, error, words", [
    (lambda: read_lessons(b"- When x, do y"), InvalidArgument, "text must be a string"),  # type: ignore[arg-type]
    (lambda: read_lessons("- When x, do y", name=None), InvalidArgument, "name must be"),  # type: ignore[arg-type]
    (lambda: read_lessons("- When x, do y", scope=["project"]), InvalidContext, "mapping of strings"),  # type: ignore[arg-type]
    (lambda: read_lessons(MARKDOWN + "- Always run the tests\n"), InvalidExperience, "the text, line 5"),
    (lambda: read_lessons("# only a heading\n", name="rules.md"), InvalidExperience, "holds no lesson"),
    (lambda: read_lessons('{"precondition": "x", "action": "y", "sope": {}}'), InvalidExperience, "sope"),
    # a line nested past the JSON decoder's depth (sent to the MCP tool or pasted in lamar ui): no RecursionError
    (lambda: read_lessons('{"precondition": "x", "action": "y"}\n{"action": ' + "[" * 100_000 + "]" * 100_000 + "}"),
     InvalidExperience, "the text, line 2: nested deeper than a lesson"),
])
def test_bad_input_is_a_lamar_error_that_names_what_to_fix(call, error, words) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=words):
        call()


def test_a_bullet_in_bold_or_italics_reads_as_its_plain_words() -> None:
    # A model writing lessons as Markdown bolds the condition: "- **When X**, Y." was refused, and the whole call.
    text = ("- **When the cart total is wrong**, check the rounding mode.\n"
            "* __When__ a migration times out, _always_ run it in batches, because *long* locks block writers.\n"
            "1. When `__init__.py` is missing, add it with `touch pkg/__init__.py`, because pkg_resources needs it.\n")
    lessons = read_lessons(text)
    assert [(e.precondition, e.action, e.rationale) for e in lessons] == [
        ("the cart total is wrong", "check the rounding mode", ""),
        ("a migration times out", "always run it in batches", "long locks block writers"),
        ("`__init__.py` is missing", "add it with `touch pkg/__init__.py`", "pkg_resources needs it")]
