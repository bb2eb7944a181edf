"""Which twin a merge keeps: the lesson that says where it came from (a rules file's line) over a hand-added copy."""

from __future__ import annotations

from lamar import Experience, Lamar, Scope, Status

SHOP = Scope(project="shop")


def _twins(lam: Lamar) -> tuple[str, str]:
    imported = lam.add(Experience(
        "working on shop", "run ruff check before committing", scope=SHOP, status=Status.CANDIDATE,
        provenance={"source": "rules", "file": "CLAUDE.md", "line": 8, "by": "import-rules"}))
    # The same rule typed again by hand later, active (as `lamar add` stores it).
    typed = lam.add(Experience("working on shop", "run ruff check before committing!", scope=SHOP,
                               provenance={"source": "manual", "via": "lamar add"}))
    return imported, typed


def test_the_merge_keeps_the_imported_rule_and_its_file_line() -> None:
    lam = Lamar(":memory:", seed=1)
    imported, typed = _twins(lam)
    report = lam.sleep()
    merges = [p for p in report if p.kind == "merge"]
    assert len(merges) == 1 and merges[0].payload["into"] == imported and merges[0].payload["from"] == [typed]
    result = lam.apply(report, only=[merges[0].id])
    assert result.applied == [merges[0].id]
    kept = lam.get(imported)
    assert (kept.provenance["file"], kept.provenance["line"]) == ("CLAUDE.md", 8)
    assert kept.provenance["merged_from"] == [typed]
    # The user had made the rule an active belief by hand: the kept twin is active too, not demoted to a candidate.
    assert kept.status is Status.ACTIVE
    assert lam.get(typed).status is Status.RETIRED


def test_review_says_the_kept_twin_becomes_active() -> None:
    lam = Lamar(":memory:", seed=1)
    imported, _ = _twins(lam)
    (merge,) = [p for p in lam.sleep() if p.kind == "merge"]
    from lamar.sleep.kinds import describe

    assert any("active" in line and imported in line for line in describe(merge)), describe(merge)


def test_without_a_file_the_active_and_better_evidenced_twin_is_kept_as_before() -> None:
    lam = Lamar(":memory:", seed=1)
    first = lam.add(Experience("working on shop", "run ruff check before committing", scope=SHOP,
                               status=Status.CANDIDATE))
    second = lam.add(Experience("working on shop", "run ruff check before committing!", scope=SHOP))
    (merge,) = [p for p in lam.sleep() if p.kind == "merge"]
    assert merge.payload == {"into": second, "from": [first]}
