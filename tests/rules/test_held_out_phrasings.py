"""Phrasings the held-out lines of tools/rule_lines.py found left out: a preference ("A over B"), a requirement on
every item of a kind, "mandatory", an emoji before the rule, and a verb that is also a noun before a plural and
its preposition; each is imported, while the statements that look like them still describe."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Lamar
from lamar.rules import import_rules
from lamar.rules.parse import DESCRIBES


def _read(tmp_path: Path, line: str) -> str:
    (tmp_path / "CLAUDE.md").write_text(f"## Style\n\n- {line}\n")
    plan = import_rules(Lamar(":memory:"), tmp_path, project="shop")
    return plan.lessons[0].render() if plan.lessons else plan.skipped[0][1]


@pytest.mark.parametrize(("line", "shown"), [
    ("Composition over inheritance", "Composition over inheritance"),
    ("Readability over cleverness", "Readability over cleverness"),
    ("Each handler needs a timeout", "each handler needs a timeout"),
    ("All endpoints require authentication", "all endpoints require authentication"),
    ("Type hints are mandatory", "Type hints are mandatory"),
    ("Changelog entries are compulsory for docs", "Changelog entries are compulsory for docs"),
    ("\u26a0\ufe0f Ask first: new dependencies", "\u26a0\ufe0f Ask first: new dependencies"),
    ("\U0001f449 Run `make check` on every branch", "\U0001f449 Run `make check` on every branch"),
    ("Tag releases as `v1.2.3`", "tag releases as `v1.2.3`"),
    ("Cache responses with `functools.cache`", "cache responses with `functools.cache`"),
    ("Sort imports alphabetically", "sort imports alphabetically"),
])
def test_the_phrasing_is_a_rule(tmp_path: Path, line: str, shown: str) -> None:
    assert _read(tmp_path, line) == f"When working on shop (Style), {shown}."


@pytest.mark.parametrize("line", [
    "Queries over 100ms are logged as slow",
    "Each service has its own Dockerfile",
    "Build artifacts go to `dist/`",
    "Cache entries expire after five minutes",
    "Deploy scripts in `ops/` are run by CI",
    "\u2705 Tests pass on main",
    "Tag releases are signed by the release bot",
    "Release notes for each version",
    "All changes need to:",
])
def test_the_statement_that_looks_like_it_describes(tmp_path: Path, line: str) -> None:
    assert _read(tmp_path, line) == DESCRIBES


def test_a_rule_in_another_language_is_listed_as_skipped_not_lost(tmp_path: Path) -> None:
    # The word lists are English: a German or Chinese rule is shown among the skipped blocks, which --model reads.
    lines = ["Für Datenbankänderungen immer eine Migration schreiben", "不要直接推送到 main 分支"]
    (tmp_path / "CLAUDE.md").write_text("\r\n".join(f"- {line}" for line in lines) + "\r\n- Never push to main\r\n")
    plan = import_rules(Lamar(":memory:"), tmp_path, project="shop")
    assert [e.action for e in plan.lessons] == ["Never push to main"]
    assert [(rule.text, why) for rule, why in plan.skipped] == [(line, DESCRIBES) for line in lines]


@pytest.mark.parametrize(("front", "shown"), [
    ("globs: \"*.py\"\nalwaysApply: false", "When working on shop (files `*.py` › Style), use pathlib."),
    ("globs: src/**/*.ts, *.tsx", "When working on shop (files `src/**/*.ts`, `*.tsx` › Style), use pathlib."),
    ("globs: [\"*.py\", \"*.pyi\"]", "When working on shop (files `*.py`, `*.pyi` › Style), use pathlib."),
    ("globs: \"*.py\"\nalwaysApply: true", "When working on shop (Style), use pathlib."),
    ("description: Python style", "When working on shop (Style), use pathlib."),
])
def test_a_cursor_rule_says_the_files_its_globs_name(tmp_path: Path, front: str, shown: str) -> None:
    # Cursor applies a rule with globs only to the files they match: the lesson says so, as a heading would.
    (tmp_path / ".cursor" / "rules").mkdir(parents=True)
    (tmp_path / ".cursor" / "rules" / "py.mdc").write_text(f"---\n{front}\n---\n## Style\n\n- Use pathlib\n")
    plan = import_rules(Lamar(":memory:"), tmp_path, project="shop")
    assert [e.render() for e in plan.lessons] == [shown]
