"""recall's hint when the lessons without a scope are all that a context's labels reach, while lessons
are scoped by the same key under another value."""

from __future__ import annotations

from lamar import Experience, Lamar, Scope
from lamar_mcp.bench import counting
from lamar_mcp.tools import LamarTools


def _tools() -> tuple[Lamar, LamarTools, str]:
    lam = Lamar(k=3, seed=0, holdout=0.0)
    everywhere = lam.add(Experience("a command fails", "read its whole error output first"))
    lam.add(Experience("a migration times out", "run it in batches", scope=Scope(project="shop")))
    lam.add(Experience("the bundle is too large", "split the vendor chunk", scope=Scope(project="web")))
    lam.add(Experience("a test is flaky", "run it alone first", scope=Scope(task="tests_fail")))
    return lam, LamarTools(lam), everywhere


def test_a_label_no_lesson_uses_is_hinted_at_when_only_unscoped_lessons_match() -> None:
    lam, tools, everywhere = _tools()
    tools.recall({"project": "shop"})  # the server's first call learns the labels
    handed = counting(lam)
    for dry_run in (False, True):
        found = tools.recall({"project": "Shop-App"}, dry_run=dry_run)
        # The lesson without a scope is recalled, yet the project's lessons are under another label.
        assert found.lesson_ids == [everywhere], found.lesson_ids
        assert "project = Shop-App" in found.hint and "project = shop, web" in found.hint, found.hint
        assert "task" not in found.hint and "lamar://scopes" in found.hint
    # From the labels the server keeps and the lessons' ids, not from every lesson read again.
    assert handed[0] == 0, handed[0]
    # Each key the lessons use and whose value none uses is named with the values they use.
    both = tools.recall({"project": "shop-app", "task": "build_fails"}).hint
    assert "project = shop, web" in both and "task = tests_fail" in both, both


def test_no_hint_once_a_label_the_context_gave_matched_a_scoped_lesson() -> None:
    _, tools, everywhere = _tools()
    assert tools.recall({"project": "shop"}).hint == ""
    assert tools.recall({"Project": "SHOP"}, dry_run=True).hint == ""  # respelled as the scope spells it
    # A task lesson matched: the project that matched none is not what kept the model from its lessons.
    assert tools.recall({"project": "Shop-App", "task": "tests_fail"}).hint == ""
    # A key no lesson is scoped by says nothing of labels the model could have given instead.
    found = tools.recall({"ticket": "PRJ-12"})
    assert found.lesson_ids == [everywhere] and found.hint == ""
    # No lesson at all matched: the hint lists every label, as before.
    lam = Lamar(k=3, seed=0, holdout=0.0)
    lam.add(Experience("a migration times out", "run it in batches", scope=Scope(project="shop")))
    assert "No lesson's scope matches" in LamarTools(lam).recall({"project": "Shop-App"}).hint
