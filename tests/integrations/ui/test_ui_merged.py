"""A lesson retired by a merge reads "retired: merged into exp_..." in the app, as `lamar show` words it."""

from __future__ import annotations

import html
import re
from pathlib import Path

from lamar import Experience, Lamar, Scope
from lamar.cli.html import lesson_table
from lamar.cli.standing import standing
from lamar_ui import pages


def test_a_merged_lesson_is_labelled_merged_not_dropped(tmp_path: Path) -> None:
    # Its tooltip read "(retired, dropped)": "dropped" is the selection giving up on a lesson whose
    # estimate fell below zero, which says nothing once its evidence went into another lesson.
    lam = Lamar(str(tmp_path / "s.db"), seed=1)
    twins = [lam.add(Experience(p, a, scope=Scope(language="swift"))) for p, a in
             (("a lint error", "run the formatter first"), ("A lint error.", "Run the formatter first."))]
    for _ in range(40):  # worse whenever a lesson is injected: the estimates fall below zero
        rec = lam.recall({"language": "swift"})
        lam.report(rec.episode_id, -0.8 if rec.ids else 0.8)
    lam.apply(lam.sleep())
    gone, kept = sorted(lam.experiences(), key=lambda e: e.status.value == "active")
    assert {gone.id, kept.id} == set(twins) and gone.provenance["merged_into"] == kept.id
    assert standing(lam.evidence(gone.id)) == "dropped"
    rows = [(e, lam.evidence(e.id)) for e in lam.experiences()]
    page = html.unescape(pages.lessons_page(rows, verdict="", status="", scope="", chart=""))
    page = re.sub("[\u2066-\u2069]", "", page)  # the labels' bidi isolates, invisible
    assert f"{gone.id} (retired: merged into {kept.id}): " in page and "(retired, dropped)" not in page
    row = re.search(rf'<tr class="lesson retired" data-id="{gone.id}">.*?</tr>', page)
    assert row
    assert f'<td>retired: merged into <a href="/lessons/{kept.id}"><code>{kept.id}</code></a></td>' in row.group(0)
    one = pages.lesson_page(gone, rows[twins.index(gone.id)][1], [], [], "injected in no episode", [])
    assert "<dt>status</dt><dd>retired: merged into <a" in one
    assert f"<td>retired: merged into {kept.id}</td>" in lesson_table(rows)  # `lamar html`'s table alike
    lam.retire(kept.id)
    retired = [(lam.get(kept.id), lam.evidence(kept.id))]  # retired by hand: its standing still shown
    page = pages.lessons_page(retired, verdict="", status="", scope="", chart="")
    assert f"{kept.id} (retired, " in re.sub("[\u2066-\u2069]", "", html.unescape(page))
    lam.close()


def test_a_sleep_card_names_a_dropped_lesson_as_the_lessons_page_does(tmp_path: Path) -> None:
    # The card's "now" column read "unknown" for a lesson the lessons page (and `lamar show`) call dropped.
    lam = Lamar(str(tmp_path / "s.db"), seed=1)
    twins = [lam.add(Experience(p, a, scope=Scope(language="swift"))) for p, a in
             (("a lint error", "run the formatter first"), ("A lint error.", "Run the formatter first."))]
    for _ in range(40):
        rec = lam.recall({"language": "swift"})
        lam.report(rec.episode_id, -0.8 if rec.ids else 0.8)
    (merge,) = lam.sleep().of_kind("merge")
    now = {i: lam.evidence(i) for i in twins}
    dropped = [i for i in twins if standing(now[i]) == "dropped"]
    assert dropped, now
    page = pages.sleep_page([merge], {}, now, {i: lam.get(i).render() for i in twins}, "token", has_report=True,
                            model="", message="")
    cells = re.findall(r'<td class="text">(<span class="verdict [^"]*"[^>]*>[^<]*</span>)', page)
    assert len(cells) == 4, cells  # each lesson: as proposed, then now
    # as proposed too: sleep ran on the evidence now, so the report's copy (verdict, estimate, bounds) reads alike
    named = sum('<span class="verdict dropped"' in c and c.endswith(">dropped</span>") for c in cells)
    assert named == 2 * len(dropped), cells
    lam.close()
