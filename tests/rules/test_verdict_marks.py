"""Rules marked good or bad by a sign before them (❌ / ✅), as many CLAUDE.md files write a don't and a do."""

from __future__ import annotations

from pathlib import Path

from lamar import Lamar
from lamar.rules import import_rules

FILE = """# Python style

- ❌ bare except clauses
- ✅ pathlib for paths
- ❌ Don't use print for logging
- ✅ Use the logging module
- ✔️ structured log lines
- 🚫 Use `requests.get` without a timeout

## Don'ts

- ✅ dependency injection
- global state
"""


def test_a_cross_is_a_dont_and_a_check_mark_a_do(tmp_path: Path) -> None:
    # Read as prose, "❌ bare except clauses" was left out as describing, and "🚫 Use ..." taken as a do.
    (tmp_path / "CLAUDE.md").write_text(FILE)
    with Lamar(":memory:") as lam:
        plan = import_rules(lam, tmp_path, project="shop")
    assert [e.action for e in plan.lessons] == [
        "Don't: bare except clauses",
        "Do: pathlib for paths",
        "Don't use print for logging",  # it says so itself: no second negation
        "Use the logging module",
        "Do: structured log lines",
        "Don't: Use `requests.get` without a timeout",
        "Do: dependency injection",  # a do under a heading of don'ts, as its mark says
        "Don'ts: global state",
    ]
    assert not plan.skipped


def test_a_marked_status_still_describes(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("## Status\n\n- ✅ Tests pass on main\n- ❌ The nightly build fails\n")
    with Lamar(":memory:") as lam:
        plan = import_rules(lam, tmp_path, project="shop")
    assert not plan.lessons and [rule.text for rule, _ in plan.skipped] == ["✅ Tests pass on main",
                                                                          "❌ The nightly build fails"]
