"""`lamar html`: a page that parses, needs no network, and has one row per lesson."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from lamar import Lamar
from lamar.cli.standing import STANDINGS, colour, no_evidence


class PageReader(HTMLParser):
    """Collects what the tests look at: lesson rows, plot rows, SVG marks, outside references."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[str] = []
        self.plot_rows: list[str] = []
        self.circles: list[dict[str, str | None]] = []
        self.bars = 0
        self.svgs = 0
        self.outside: list[str] = []
        self.tags: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        attributes = dict(attrs)
        self.tags.append(tag)
        if tag not in ("meta", "line", "circle", "rect"):
            self.open.append(tag)
        classes = (attributes.get("class") or "").split()
        if tag == "tr" and "lesson" in classes:
            self.rows.append(attributes["data-id"])
        if tag == "g" and "lesson" in classes:
            self.plot_rows.append(attributes["data-id"])
        if tag == "circle" and "swatch" not in classes:  # a lesson's dot, not the legend's
            self.circles.append(attributes)
        if tag == "rect" and "injected" in classes:
            self.bars += 1
        if tag == "svg":
            self.svgs += 1
        for name in ("src", "href"):
            if attributes.get(name):
                self.outside.append(attributes[name])

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag in ("line", "circle", "rect"):
            return
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1] if self.open else None}>"
        self.open.pop()


def test_html_page_has_one_row_per_lesson_and_no_network(lamar_cli, store, tmp_path):
    before = store.read_bytes()
    out = lamar_cli("html", "--store", store, "--out", tmp_path / "lamar.html")
    assert out.returncode == 0, out.stderr
    assert "wrote" in out.stdout and "6 lessons" in out.stdout
    page = (tmp_path / "lamar.html").read_text(encoding="utf-8")
    reader = PageReader()
    reader.feed(page)
    reader.close()
    lam = Lamar(str(store))
    lessons = [e.id for e in lam.experiences()]
    shown = [i for i in lessons if not no_evidence(lam.evidence(i).lower, lam.evidence(i).upper)]
    assert 0 < len(shown) < len(lessons)  # the fixture has lessons on both sides of "no evidence yet"
    assert reader.rows == lessons  # the table: one row per lesson, in store order
    assert reader.plot_rows == lessons  # the forest plot: one row per lesson
    assert reader.svgs == 2 and reader.bars > 0
    assert "script" not in reader.tags and reader.outside == []
    assert reader.open == []  # every element closed in order
    # Only lessons with an interval get a dot; colour by verdict (one proven to help).
    assert [c["fill"] for c in reader.circles].count(colour("helps")) == 1
    assert len(reader.circles) == len(shown)
    assert "no evidence yet" in page
    assert store.read_bytes() == before


def test_html_escapes_lesson_text(run_cli, tmp_path):
    path = tmp_path / "s.json"
    added = run_cli("add", "--create", "--store", path,
                    "--precondition", "<script>alert(1)</script>", "--action", "a & b")
    assert added.returncode == 0, added.stderr
    assert run_cli("html", "--store", path, "--out", tmp_path / "p.html").returncode == 0
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page and "a &amp; b" in page
    reader = PageReader()
    reader.feed(page)
    assert len(reader.rows) == 1 and reader.circles == []
    assert "No episodes yet." in page


def test_html_charts_name_their_colours_and_axes(lamar_cli, store, tmp_path):
    """Each colour is named by a swatch (a shape, which the page's text style cannot recolour),
    rows are labelled by lesson text, and the bar chart has a y-axis and distinct x labels."""
    from lamar.cli.charts import HELD_OUT, INJECTED

    out = lamar_cli("html", "--store", store, "--out", tmp_path / "lamar.html")
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "lamar.html").read_text(encoding="utf-8")
    swatches = re.findall(r'<rect class="swatch"[^>]*fill="([^"]+)"/><text[^>]*>([^<]+)</text>', page)
    assert (INJECTED, "injected") in swatches
    assert (HELD_OUT, "held out (the randomized control)") in swatches
    assert {(colour(name), name) for name in STANDINGS} <= set(swatches)
    lessons = Lamar(str(store)).experiences()
    labels = re.findall(r'<g class="lesson[^"]*"[^>]*><title>[^<]*</title><text[^>]*>([^<]+)</text>', page)
    assert len(labels) == len(lessons) and all(not label.startswith("exp_") for label in labels)
    first, last = re.findall(r">episode (\d+)</text>", page)
    assert first == "1" and int(last) > 1
    assert re.search(r">lessons per \d+ episodes</text>", page)


def test_html_charts_every_episode_after_a_checkpoint(run_cli, tmp_path):
    """A checkpoint folds the log's first episodes into one snapshot event: the page still counts
    them, in the injection chart and the header, as `lamar stats` and `lamar ui` do."""
    from lamar import Experience, Signal

    path = tmp_path / "s.db"
    lam = Lamar(str(path), seed=3)
    lam.add(Experience("the build fails", "clear the cache"))
    for n in range(45):
        lam.report(lam.recall({}).episode_id, Signal.SHIPPED)
        if n == 39:
            assert lam.checkpoint()
    events = lam.stats()["events"]
    lam.close()
    assert run_cli("html", "--store", path, "--out", tmp_path / "p.html").returncode == 0
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert re.findall(r">episode (\d+)</text>", page) == ["1", "45"]
    assert "1 lesson (" in page and f"), {events} events;" in page


def test_html_says_how_many_bytes_it_wrote(run_cli, tmp_path):
    path = tmp_path / "s.json"
    assert run_cli("add", "--create", "--store", path, "--precondition", "the café's build fails ±",
                   "--action", "read the log 🧪").returncode == 0
    out = run_cli("html", "--store", path, "--out", tmp_path / "p.html")
    assert out.returncode == 0, out.stderr
    written = int(re.search(r"(\d+) bytes\)", out.stdout).group(1))
    assert written == (tmp_path / "p.html").stat().st_size
    # One lesson and one event are counted in the singular, on the page and in the line printed.
    assert out.stdout.startswith(f"wrote {tmp_path / 'p.html'} (1 lesson, ")
    assert ", 1 event; generated" in (tmp_path / "p.html").read_text(encoding="utf-8")
    stats = run_cli("stats", "--store", path)
    assert ", 1 event)" in stats.stdout, stats.stdout
    copied = run_cli("export", "--store", path, "--out", tmp_path / "copy.json")
    assert copied.stdout.startswith("copied 1 event from "), copied.stdout


def test_html_out_dash_writes_the_page_to_stdout(lamar_cli, store, tmp_path):
    out = lamar_cli("html", "--store", store, "--out", "-")
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "-").exists()
    assert out.stdout.startswith("<!DOCTYPE html>") and out.stdout.endswith("</html>\n")
    reader = PageReader()
    reader.feed(out.stdout)
    assert reader.rows == [e.id for e in Lamar(str(store)).experiences()]
    assert out.stderr == ""
    named = lamar_cli("html", "--store", store, "--out", "./-")  # a file called "-", spelt as a path
    assert named.returncode == 0 and (tmp_path / "-").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_every_out_option_takes_its_short_form(run_cli, tmp_path):
    # `lamar html -o f.html` answered only "the following arguments are required: --out".
    path = tmp_path / "s.json"
    assert run_cli("add", "--create", "--store", path, "--precondition", "p", "--action", "a").returncode == 0
    for command, target in (("html", "p.html"), ("export", "copy.json"), ("sleep", "report.json")):
        out = run_cli(command, "--store", path, "-o", tmp_path / target)
        assert out.returncode == 0, (command, out.stderr)
        assert (tmp_path / target).stat().st_size > 0, command
        assert "-o FILE" in run_cli(command, "--help").stdout.replace(".html", "").replace("REPORT.json", "FILE")


def test_a_lesson_with_no_evidence_has_no_lift_in_its_tooltip() -> None:
    # Its row reads "no evidence yet" with no lift beside it; the tooltip read "lift n/a no evidence yet".
    from lamar import Experience
    from lamar.cli.charts import forest_plot
    from lamar.policy.verdicts import Evidence, Verdict

    exp = Experience("a page renders blank", "check the template's escaping", id="exp_blank")
    svg = forest_plot([(exp, Evidence(exp.id, Verdict.UNKNOWN, 0.0, float("-inf"), float("inf"), 0, 0, 0, 0, 0, 0.0))])
    tip = re.search(r"<title>(.*?)</title>", svg)
    assert tip and "(active, unproven): no evidence yet: When " in tip.group(1), svg
    assert "lift" not in tip.group(1)
