"""The markup real rules files wrap their rules in: front matter before a title."""

from __future__ import annotations

from lamar.rules import parse_rules


def _rules(text: str) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(r.line, r.text, r.context) for r in parse_rules(text, "CLAUDE.md")[0]]


def test_the_title_after_front_matter_is_the_documents_not_a_section() -> None:
    # A Cursor rule opens with front matter then its title, as a CLAUDE.md opens with its title alone.
    plain = "# Go style\n\n## Tests\n\n- Use table tests\n"
    fronted = "---\ndescription: Go style\nalwaysApply: true\n---\n\n" + plain
    assert [context for _, _, context in _rules(plain)] == [("Tests",)]
    assert [context for _, _, context in _rules(fronted)] == [("Tests",)]
