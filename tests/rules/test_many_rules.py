"""`import_rules` on a file with many rules: each rule's words are read once, not once per pair."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Lamar
from lamar.rules import import_rules
from lamar.sleep import similarity


def test_each_rules_words_are_read_once_whatever_the_number_of_rules(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Read again for every pair of rules, a file of a thousand rules took about a minute to import.
    rules = 120
    names = [f"x{i:03d}y" for i in range(rules)]  # each rule its own words
    (tmp_path / "CLAUDE.md").write_text("".join(f"- Always run make{n} and check{n}\n" for n in names))
    lam = Lamar(":memory:")
    import_rules(lam, tmp_path, project="shop", apply=True)
    read = 0
    content_words = similarity.content_words

    def counted(text: str) -> frozenset[str]:
        nonlocal read
        read += 1
        return content_words(text)

    monkeypatch.setattr(similarity, "content_words", counted)
    (tmp_path / "CLAUDE.md").write_text("".join(f"- Never skip lint{n} or test{n}\n" for n in names))
    plan = import_rules(lam, tmp_path, project="shop")
    assert len(plan.lessons) == rules  # the new rules, none a near-copy of another or of a held lesson
    assert read <= 2 * (rules + rules)  # the precondition and action of each rule and each held lesson, once
