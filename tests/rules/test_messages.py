"""What `lamar import-rules` tells a user with nothing to import, or who names what is not there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, InvalidArgument, Lamar
from lamar.rules import import_rules


def _lamar(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, check=False)


def test_a_named_file_that_is_missing_is_named_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("- Never push to main\n")
    done = _lamar(tmp_path, "import-rules", "--file", "AGENT.md")
    assert done.returncode == 1 and "Errno" not in done.stderr, done.stderr
    assert "no file AGENT.md: check its path, or leave it out" in done.stderr


def test_a_folder_that_is_missing_is_not_a_folder_without_rules(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="^no folder .*shop: check the path"):
        import_rules(Lamar(":memory:"), tmp_path / "shop")
    # Where there is a folder, the refusal names every file it looked for.
    with pytest.raises(InvalidArgument, match="CLAUDE.local.md, AGENTS.md.*.cursorrules.*sub-folders"):
        import_rules(Lamar(":memory:"), tmp_path)


@pytest.mark.parametrize(("text", "said"), [
    ("", "nothing to add: a rule is a bullet or a short paragraph that directs"),
    ("The shop's backend, in Go.\n", "nothing to add: a rule is a bullet or a short paragraph that directs"),
    ("- Never push to main\n", "nothing new to add: each rule is a lesson already"),
], ids=["empty", "prose", "imported"])
def test_a_dry_run_with_nothing_to_add_does_not_ask_for_apply(tmp_path: Path, text: str, said: str) -> None:
    store = tmp_path / "lessons.db"
    (tmp_path / "CLAUDE.md").write_text("- Never push to main\n")
    assert _lamar(tmp_path, "import-rules", "--store", str(store), "--apply", "--create").returncode == 0
    (tmp_path / "CLAUDE.md").write_text(text)
    done = _lamar(tmp_path, "import-rules", "--store", str(store))
    assert done.returncode == 0 and said in done.stdout and "--apply" not in done.stdout, done.stdout


def test_a_lesson_another_import_adds_meanwhile_is_skipped_as_held(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Two imports at once (two MCP clients, two shells) plan the same lessons; the one that adds a lesson
    # second finds it stored: its end state is the one it asked for, so it reports the lesson as held.
    (tmp_path / "CLAUDE.md").write_text("- Never push to main\n- Always run the linter\n")
    lam = Lamar(":memory:")
    other = import_rules(Lamar(":memory:"), tmp_path).lessons[1]  # what the other import adds first
    add = Lamar.add

    def racing(self: Lamar, exp: Experience) -> str:
        if exp.id == other.id:
            add(self, other)  # the other process's add lands between this one's plan and its add
        return add(self, exp)

    monkeypatch.setattr(Lamar, "add", racing)
    plan = import_rules(lam, tmp_path, apply=True)
    assert plan.applied and [e.action for e in plan.lessons] == ["Never push to main"]
    assert plan.skipped[-1][1] == f"already held as {other.id} (added by another import meanwhile)"
    assert sorted(e.id for e in lam.experiences()) == sorted([plan.lessons[0].id, other.id])


def test_a_skipped_block_cut_short_says_so_and_is_cut_between_words(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("This repository is the checkout service for the shop. It is written in "
                                        "Python 3.12.\n\n- Never push to main\n")
    done = _lamar(tmp_path, "import-rules")
    assert done.returncode == 0, done.stderr
    skipped = next(line for line in done.stdout.splitlines() if "skipped AGENTS.md:1" in line)
    # Cut at 80 characters it read "... written in Python 3.": a version that is not the file's.
    assert skipped.endswith("It is written in Python...") and "Python 3." not in skipped, skipped
