"""`export_rules` before any lesson is proven: a section that says so in a sentence, never in a bullet an agent
reads as one of its rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lamar import Experience, Lamar, Scope
from lamar.rules import export_rules
from lamar.rules.exporting import BEGIN
from lamar.rules.parse import EXPORT_END

_MINE = "# Shop\n\n- Run `make test` before every commit\n"


def _section(text: str) -> list[str]:
    return text[text.index(BEGIN):text.index(EXPORT_END) + len(EXPORT_END)].splitlines()


def test_a_first_export_explains_itself_without_a_bullet(tmp_path: Path) -> None:
    rules = tmp_path / "CLAUDE.md"
    rules.write_text(_MINE)
    lam = Lamar(":memory:")
    lam.add(Experience("the tests fail", "run the failing test alone", scope=Scope(project="shop")))  # unproven
    result = export_rules(lam, rules, project="shop")
    section = _section(rules.read_text())
    assert result.changed and result.helps == [] and rules.read_text().startswith(_MINE)
    # A bullet under "Rules proven to help" is what an agent takes for a rule; the day-one line is prose.
    assert [line for line in section if line.lstrip().startswith(("-", "*", "+"))] == [], section
    assert section[1:] == ["## Rules proven to help in shop", "",
                           ("No lesson of this project is proven to help yet: one is listed here once the lower "
                            "bound of its lift is above zero."), EXPORT_END]


def test_a_folders_section_and_one_with_unproven_lessons_say_it_the_same_way(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    lam = Lamar(":memory:")
    lam.add(Experience("the tests fail", "run the failing test alone", scope=Scope(project="shop")))
    export_rules(lam, tmp_path / "web" / "CLAUDE.md", project="shop")
    assert "No lesson of this folder is proven to help yet" in (tmp_path / "web" / "CLAUDE.md").read_text()
    export_rules(lam, tmp_path / "CLAUDE.md", project="shop", unproven=True)
    section = _section((tmp_path / "CLAUDE.md").read_text())
    assert section[3].startswith("No lesson of this project is proven to help yet")
    assert "### Not yet proven" in section and section[-2].startswith("- When the tests fail, run the failing test "
                                                                      "alone. <!-- "), section


def test_a_section_written_with_a_none_yet_bullet_is_replaced_cleanly(tmp_path: Path) -> None:
    # The form the section had before a lesson was proven: regenerated, nothing of it is left behind.
    rules = tmp_path / "CLAUDE.md"
    after = "\n## Mine, below the section\n\n- Keep the changelog\n"
    old = (f"{BEGIN}\n## Rules proven to help in shop\n\n- None yet: no lesson of this project has a lower bound "
           f"above zero.\n{EXPORT_END}\n")
    rules.write_text(_MINE + "\n" + old + after)
    store = tmp_path / "s.db"
    Lamar(str(store)).close()
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "export-rules", "--store", str(store), "--project",
                           "shop", "--to", str(rules)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{rules}: updated; 0 rules proven to help, 0 proposed removals\n"
    text = rules.read_text()
    assert "None yet" not in text and text.startswith(_MINE + "\n" + BEGIN) and text.endswith(EXPORT_END + "\n" + after)
    assert text.count(BEGIN) == text.count(EXPORT_END) == 1
