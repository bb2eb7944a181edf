"""What a solo developer meets in `lamar ui` after importing a CLAUDE.md, in a real browser: rows of the forest plot
that tell the rules of one heading apart, an evidence chart whose axis reads true after a restart, an erased lesson's
provenance in words, and a *Run sleep* button that says what a run without a model proposes."""

from __future__ import annotations

import random
from pathlib import Path
from urllib.parse import quote

import pytest

from lamar import Experience, Lamar, Scope

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_trial import serving

HEADING = "working on shop (Build and test)"  # the condition `lamar import-rules` gives each rule under a heading
_NO_MARKS = str.maketrans("", "", "\u2068\u2069")  # a label's isolate marks, invisible on screen
ACTIONS = ("run `make test` before you commit; CI runs the same target", "use `pnpm`, not `npm`, in `web/`",
           "run `ruff format` before committing Python")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    store = tmp_path_factory.mktemp("walk") / "lessons.db"
    with Lamar(str(store), holdout=0.5, seed=3) as lam:
        ids = {action: lam.add(Experience(HEADING, action, scope=Scope(project="shop"))) for action in ACTIONS}
        ids["gone"] = lam.add(Experience("the dev server cannot bind port 8000", "kill the old runserver"))
        rng = random.Random(5)
        for n in range(120):
            if n == 80:  # a new wording: its evidence restarts
                lam.edit(ids[ACTIONS[0]], action="run `make test` and `make lint` before you commit")
            rec = lam.recall({"project": "shop"})
            lam.report(rec.episode_id, rng.choice(["shipped", "reverted"]))
        lam.erase(ids["gone"], by="dana")
        lam.edit(ids[ACTIONS[2]], rationale="CI checks the format")  # restarted: no randomized episode since
    return str(store), ids


def test_the_rules_of_one_heading_read_apart_in_the_forest_plot(served, browser) -> None:  # noqa: F811
    store, ids = served
    with serving(Path(store)) as url:
        browser.get(url)
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "g.lesson"))
        labels = {g.get_attribute("data-id"): g.find_element(By.CSS_SELECTOR, "text").text.translate(_NO_MARKS)
                  for g in browser.find_elements(By.CSS_SELECTOR, "g.lesson")}
        widest = browser.execute_script(
            "return Math.max(...[...document.querySelectorAll('g.lesson > text:first-of-type')]"
            ".map(t => t.getBBox().x + t.getBBox().width))")
        plot = browser.execute_script("return Math.min(...[...document.querySelectorAll('.forest.wide svg line')]"
                                      ".map(l => l.x1.baseVal.value))")
    assert widest < plot, (widest, plot)  # every label ends before the plot's first rule
    shown = [labels[ids[action]] for action in ACTIONS]
    assert len(set(shown)) == len(ACTIONS), shown
    for label, action in zip(shown, ACTIONS, strict=True):
        assert action.split()[1].strip("`,") in label, (label, action)  # what to do shows: make, pnpm, ruff
        assert label.startswith("When working on shop"), label


def test_the_evidence_charts_axis_counts_episodes_through_a_restart(served, browser) -> None:  # noqa: F811
    store, ids = served
    with serving(Path(store)) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + f"/lessons/{quote(ids[ACTIONS[0]], safe='')}")
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.lesson-text"))
        chart = browser.find_elements(By.CSS_SELECTOR, "main svg")[0]
        ends = [t.text for t in chart.find_elements(By.CSS_SELECTOR, "text")][-2:]
    assert ends[0] == "1 reported", ends
    assert ends[1].startswith("120 reported episodes, ") and ends[1].endswith("randomized since the restart"), ends


def test_an_erased_lessons_provenance_reads_in_words(served, browser) -> None:  # noqa: F811
    store, ids = served
    with serving(Path(store)) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + f"/lessons/{quote(ids['gone'], safe='')}")
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.lesson-text"))
        page = browser.find_element(By.TAG_NAME, "main").text
    assert "erased: by dana at 20" in page and " UTC" in page, page
    assert '"time"' not in page and "{" not in page, page


def test_run_sleep_says_what_a_run_without_a_model_proposes(served, browser) -> None:  # noqa: F811
    store, _ = served
    with serving(Path(store)) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + "/sleep")
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "main button"))
        button = browser.find_element(By.CSS_SELECTOR, "main button").text
    for kind in ("retire", "narrow", "merge", "promote", "contradiction", "compact"):
        assert kind in button, button


def test_a_pasted_claude_md_is_pointed_to_import_rules(served, browser) -> None:  # noqa: F811
    # A CLAUDE.md's rules are instructions ("- Run `make test` before you commit"), not "When X, Y" bullets.
    rules = "## Build and test\n- Run `make test` before you commit; CI runs the same target.\n"
    store, _ = served
    with serving(Path(store)) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + "/add")
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "main textarea[name=lessons]"))
        box = browser.find_element(By.CSS_SELECTOR, "main textarea[name=lessons]")
        box.send_keys(rules)
        box.find_element(By.XPATH, "ancestor::form").find_element(By.CSS_SELECTOR, "button").click()
        WebDriverWait(browser, 10).until(lambda d: "answer=" in d.current_url)
        page = browser.find_element(By.TAG_NAME, "main").text
        kept = browser.find_element(By.CSS_SELECTOR, "main textarea[name=lessons]").get_attribute("value")
    assert "line 2: a lesson bullet reads" in page and "nothing was added" in page, page
    assert "lamar import-rules --file" in page and "CLAUDE.md" in page, page
    assert kept.strip() == rules.strip()


def test_a_restarted_lessons_verdict_says_its_evidence_restarted(served, browser) -> None:  # noqa: F811
    # Read as "no evidence yet" alone, a lesson measured over 120 episodes seems never to have been measured.
    store, ids = served
    with serving(Path(store)) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + f"/lessons/{quote(ids[ACTIONS[2]], safe='')}")
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.lesson-text"))
        page = browser.find_element(By.TAG_NAME, "main").text
    assert "no evidence yet: 0 randomized episodes since its evidence restarted leave every lift" in page, page


def test_a_merge_card_names_each_lesson_by_its_id(tmp_path: Path, browser) -> None:  # noqa: F811
    # Near-duplicates read alike: the reason says which id is kept, so each row says which id it is.
    store = tmp_path / "dups.db"
    with Lamar(str(store)) as lam:
        first = lam.add(Experience("a lint error shows on CI only", "pin the linter's version", scope=Scope(p="s")))
        second = lam.add(Experience("A lint error shows on CI only.", "Pin the linter's version.", scope=Scope(p="s")))
    with serving(store) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + "/sleep")
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "main button"))
        browser.find_element(By.CSS_SELECTOR, "main button").click()
        WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "section.proposal"))
        rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "section.proposal tbody tr")]
    assert len(rows) == 2 and first in "".join(rows) and second in "".join(rows), rows
    assert [first in row or second in row for row in rows] == [True, True], rows
