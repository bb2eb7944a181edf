"""`read_lessons` refuses a Markdown lesson under a heading that forbids it ("## Never"): the heading is not read
into the lesson, which would tell the agent to do what the file forbids."""

from __future__ import annotations

import pytest

from lamar import InvalidExperience
from lamar.lesson_file import read_lessons


def test_a_lesson_under_a_forbidding_heading_is_refused_with_what_to_write() -> None:
    text = "## Always\n- When the build fails, clear the cache\n\n## Never\n- When a deploy is red, push to main\n"
    with pytest.raises(InvalidExperience) as caught:
        read_lessons(text, name="lessons.md")
    said = str(caught.value)
    assert said.startswith("lessons.md, line 5: ") and "'Never'" in said
    assert "When a deploy is red, never push to main" in said and said.endswith("nothing was added")


@pytest.mark.parametrize("text", [
    "## Never\n- When a deploy is red, never push to main\n",  # the lesson says it itself
    "## Don'ts\n- When a deploy is red, don't push to main\n",
    "## Deploys\n- When a deploy is red, push to main\n",
])
def test_a_lesson_that_says_its_own_prohibition_or_none_is_read(text: str) -> None:
    (lesson,) = read_lessons(text, name="lessons.md")
    assert lesson.action.endswith("push to main")
