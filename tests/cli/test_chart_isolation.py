"""A chart's labels and tooltips hold no markup: a lesson's id and each of its fields are isolated there by FSI and
PDI marks, as `<bdi>` isolates them on a page (the layout itself is checked in a browser: test_ui_bidi.py)."""

from __future__ import annotations

import re

from lamar import Experience
from lamar.cli.charts import forest_plot
from lamar.cli.isolate import FSI, PDI, lesson_marked
from lamar.cli.render import shorten
from lamar.policy.verdicts import Evidence, Verdict

WHEN, DO, WHY = "عندما يفشل البناء", "امسح الذاكرة المؤقتة", "לא נכון יותר 2"


def test_each_field_and_the_id_are_marked_in_the_forest_plot() -> None:
    exp = Experience(WHEN, DO, WHY, id="درس-1")
    svg = forest_plot([(exp, Evidence(exp.id, Verdict.UNKNOWN, 0.1, -0.5, 0.7, 9, 5, 4, 9, 0, 0.1))])
    tip = re.search(r"<title>(.*?)</title>", svg).group(1)
    assert tip.startswith(f"{FSI}درس-1{PDI} (") and f"{FSI}{WHEN}{PDI}, {FSI}{DO}{PDI}, because {FSI}" in tip
    label = re.search(r'<text x="4"[^>]*>(.*?)</text>', svg).group(1)
    assert label.startswith(f"When {FSI}{WHEN}{PDI}, {FSI}") and label.endswith("...")
    assert label.count(FSI) == label.count(PDI)  # a field cut short still closes its isolate


def test_the_marks_change_nothing_but_the_layout() -> None:
    for exp, width in [(Experience(WHEN, DO, WHY), None), (Experience("the build fails", "clear the cache"), 20),
                       (Experience("a, b", "c, d", "e"), 12), (Experience(WHEN, DO), 30)]:
        shown = lesson_marked(exp, width)
        plain = exp.render() if width is None else shorten(exp.render(), width)
        assert shown.replace(FSI, "").replace(PDI, "") == plain, shown
        assert shown.count(FSI) == shown.count(PDI)
