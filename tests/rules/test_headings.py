"""A heading that only says rules follow is no part of a lesson's precondition; one that names a situation is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Lamar
from lamar.rules import import_rules
from lamar.rules.headings import situational
from tests.rules.conftest import project_copy


@pytest.mark.parametrize(("heading", "said"), [
    ("Rules", False), ("Guidelines", False), ("Core Development Rules", False), ("Coding Guidelines", False),
    ("Notes for AI Agents", False), ("Requirements of all contributions", False), ("General", False),
    ("IMPORTANT", False), ("Shop conventions", False), ("Best Practices", False),
    ("Testing", True), ("Testing Requirements", True), ("Database migrations", True), ("Code Style", True),
])
def test_a_heading_names_a_situation_when_a_word_of_it_is_not_one_for_rules(heading: str, said: bool) -> None:
    assert situational(heading, "shop") is said


def test_the_fixtures_preconditions_keep_the_headings_that_say_when(tmp_path: Path) -> None:
    preconditions = {}
    for name in ("python-sdk-2025", "pydantic-ai"):
        plan = import_rules(Lamar(":memory:"), project_copy(tmp_path, name), project="shop")
        preconditions.update({(name, e.provenance["line"]): e.precondition for e in plan.lessons})
    assert preconditions[("python-sdk-2025", 8)] == "working on shop (Package Management)"  # Core Development Rules ›
    assert preconditions[("python-sdk-2025", 24)] == "working on shop (Testing Requirements)"
    assert preconditions[("python-sdk-2025", 165)] == "working on shop (Error Resolution)"  # › Best Practices
    assert preconditions[("python-sdk-2025", 150)] == "working on shop (Error Resolution › CI Failures › Type errors)"
    assert preconditions[("pydantic-ai", 62)] == "working on shop"  # Requirements of all contributions
    assert preconditions[("pydantic-ai", 79)] == "working on shop (Pushing changes)"
    assert preconditions[("pydantic-ai", 23)] == "working on shop (Gathering context on the task)"


def test_a_lesson_imported_with_the_heading_is_held_and_not_doubled_on_import_again(tmp_path: Path) -> None:
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "CLAUDE.md").write_text("# Shop\n\n## Rules\n\n- Run `make test` before every commit\n")
    lam = Lamar(":memory:")
    plan = import_rules(lam, folder, apply=True)
    assert [e.render() for e in plan.lessons] == ["When working on shop, run `make test` before every commit."]
    # A store imported into when the heading was part of the lesson: same words, same id, held.
    [exp] = plan.lessons
    lam.edit(exp.id, precondition="working on shop (Rules)")
    again = import_rules(lam, folder, apply=True)
    told = (f"already held as {exp.id} (candidate); it keeps its condition 'working on shop (Rules)', not the "
            f"file's 'working on shop' (`lamar edit {exp.id} --precondition` changes it)")
    assert again.lessons == [] and [why for _, why in again.skipped] == [told]
    assert len(lam.experiences()) == 1


def test_lamar_ls_shows_where_the_imported_rules_of_one_heading_differ(tmp_path: Path) -> None:
    project = project_copy(tmp_path, "python-sdk-2025")
    store = tmp_path / "store.db"
    lam = Lamar(store)
    plan = import_rules(lam, project, apply=True)
    lam.close()
    listed = subprocess.run([sys.executable, "-m", "lamar.cli", "ls", "--store", str(store)], capture_output=True,
                            text=True, timeout=60, check=True).stdout.splitlines()[1:]
    shown = [line.split("project=python-sdk-2025", 1)[1].strip() for line in listed]
    assert len(shown) == len(plan.lessons) == 60 and max(map(len, shown)) <= 60
    assert len(set(shown)) == 60  # each cut shows the start of what to do, not only the heading it shares
    assert "When working on python-sdk-2025 (Code..., format: `uv run..." in shown
