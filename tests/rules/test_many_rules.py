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


def test_a_rule_is_compared_only_with_the_rules_that_share_its_words(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # Compared with every rule of its scope, a long rules file would cost time quadratic in its rules.
    rules = 200
    names = [f"x{i:03d}y" for i in range(rules)]
    lam = Lamar(":memory:")
    (tmp_path / "CLAUDE.md").write_text("".join(f"- Always run make{n} and check{n}\n" for n in names))
    import_rules(lam, tmp_path, project="shop", apply=True)
    compared = 0
    similar = similarity.LessonWords.similarity

    def counted(self: similarity.LessonWords, other: similarity.LessonWords) -> float:
        nonlocal compared
        compared += 1
        return similar(self, other)

    monkeypatch.setattr(similarity.LessonWords, "similarity", counted)
    lines = [f"- Never touch module{n} without asking\n" for n in names]
    (tmp_path / "CLAUDE.md").write_text("".join(lines) + "- Never touch modulex000y without asking anyone\n"
                                        + "- Always run makex007y and checkx007y!\n")
    plan = import_rules(lam, tmp_path, project="shop")
    assert len(plan.lessons) == rules  # the two last lines are near-copies, of a rule and of a held lesson
    copied, held = (why for _, why in plan.skipped)
    assert copied == "a near-copy of CLAUDE.md:1"
    assert held.startswith("already held as exp_")
    assert compared <= 4 * rules  # each rule with the few that share its rarest words, not with every rule


def test_a_block_repeated_through_a_file_is_scanned_for_credentials_once(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # The blocks left out are scrubbed before they are listed; a repetitive file leaves the same ones out in every
    # section, and the credential scan was most of the import's time.
    import lamar.safety

    block = "- Always run the linter.\n- Never skip the tests.\n\nThe parser reads the config file.\n"
    (tmp_path / "CLAUDE.md").write_text("".join(f"\n## Part {i}\n\n{block}" for i in range(50)))
    scanned: list[str] = []
    scrub = lamar.safety.scrub

    def counted(text: str) -> tuple[str, list[str]]:
        scanned.append(text)
        return scrub(text)

    monkeypatch.setattr(lamar.safety, "scrub", counted)
    plan = import_rules(Lamar(":memory:"), tmp_path, project="shop")
    assert len(plan.skipped) >= 50  # the description in every part, and the rules repeated after the first part
    assert len(scanned) == len(set(scanned))
