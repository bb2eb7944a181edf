"""What a team lead meets in `lamar ui` in a real browser: a rejected proposal that stays readable and
un-rejectable, an edit form whose checkbox sits beside its words and whose fields show a long lesson whole,
and a lesson id the store lacks."""

from __future__ import annotations

import html
import urllib.error
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.integrations.ui.test_ui_apply import run_sleep, two_proposals
from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_trial import _get, serving

# The lowest contrast on white of any word inside the element, as the eye gets it: each text's colour
# composited over white through its own alpha and every ancestor's opacity (WCAG 2 relative luminance).
_LOWEST_CONTRAST = """
const lin = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
let lowest = 21, word = '';
const walker = document.createTreeWalker(arguments[0], NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (!node.textContent.trim()) { continue; }
  let alpha = 1;
  for (let e = node.parentElement; e; e = e.parentElement) { alpha *= Number(getComputedStyle(e).opacity); }
  const parts = getComputedStyle(node.parentElement).color.match(/[\\d.]+/g).map(Number);
  alpha *= parts.length > 3 ? parts[3] : 1;
  const [r, g, b] = parts.slice(0, 3).map(c => lin(alpha * c + (1 - alpha) * 255));
  const ratio = 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05);
  if (ratio < lowest) { lowest = ratio; word = node.textContent.trim().slice(0, 40); }
}
return [lowest, word];
"""


def _open(driver, url: str, path: str, css: str) -> None:  # type: ignore[no-untyped-def]
    driver.get(url)  # the token's cookie
    driver.get(url.split("/?", 1)[0] + path)
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, css))


def test_a_rejected_proposal_reads_as_clearly_as_the_others(tmp_path: Path, browser) -> None:  # noqa: F811
    path = tmp_path / "lessons.db"
    two_proposals(path)
    with serving(path) as url:
        cards = run_sleep(url)
        (pid,) = [i for i, kind in cards.items() if kind == "contradiction"]
        _get(url, "/sleep/decide", {"proposal": pid, "decision": "rejected"})
        _open(browser, url, "/sleep", f'section.proposal.rejected[data-id="{pid}"]')
        card = browser.find_element(By.CSS_SELECTOR, f'section.proposal[data-id="{pid}"]')
        lowest, word = browser.execute_script(_LOWEST_CONTRAST, card)
        approve = card.find_element(By.CSS_SELECTOR, 'button[value="approved"]')
        assert approve.is_enabled()
        assert browser.execute_script("return getComputedStyle(arguments[0]).opacity", approve) == "1"
    assert lowest >= 4.5, (lowest, word)  # its words as readable as any card's; its Approve un-rejects it


def test_the_edit_forms_checkbox_sits_beside_its_words(tmp_path: Path, browser) -> None:  # noqa: F811
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        eid = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(path) as url:
        _open(browser, url, f"/lessons/{eid}/edit", 'input[name="keep"]')
        box, words = browser.execute_script("""
            const box = document.querySelector('input[name="keep"]');
            const text = [...box.parentElement.childNodes].find(n => n.nodeType === 3 && n.textContent.trim());
            const range = document.createRange(); range.selectNodeContents(text);
            const first = range.getClientRects()[0], b = box.getBoundingClientRect();
            return [[b.right, b.top, b.bottom], [first.left, first.top, first.bottom]];""")
    right, top, bottom = box
    text_left, text_top, text_bottom = words
    assert right <= text_left, (box, words)  # before its words, on their line: not stacked above them
    assert top < text_bottom and bottom > text_top, (box, words)


def test_a_lesson_id_the_store_lacks_says_where_the_lessons_are(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    with serving(path) as url:
        for page in ("/lessons/exp_0000000000000000", "/lessons/exp_0000000000000000/edit",
                     "/lessons/exp_0000000000000000/retire"):
            with pytest.raises(urllib.error.HTTPError) as caught:
                _get(url, page)
            said = html.unescape(caught.value.read().decode())
            assert caught.value.code == 404
            assert "no lesson 'exp_0000000000000000' in this store" in said, said[-600:]
            assert "the lessons page lists every lesson" in said and "Lamar.experiences()" not in said
        with pytest.raises(urllib.error.HTTPError) as caught:  # no id at all: no lesson '' to look for
            _get(url, "/lessons/")
        assert caught.value.code == 404 and "no such page: /lessons/ID" in html.unescape(caught.value.read().decode())


def test_on_a_phone_a_table_keeps_its_words_whole_and_scrolls_in_its_box(tmp_path: Path) -> None:
    # The tables scroll in a box of their own there, yet their cells of free text shrank to a few letters
    # each, breaking `project=trace`, `release` and every lesson id inside.
    from tests.integrations.ui.test_ui_browser import _need_browser, phone_browser
    from tests.integrations.ui.test_ui_looks import _BROKEN_WORDS

    _need_browser()
    path = tmp_path / "lessons.db"
    two_proposals(path)
    with Lamar(str(path), seed=3) as lam:
        for n in range(20):
            lam.report(lam.recall({"project": "trace", "task": "build"}).episode_id, 1.0 if n % 3 else -1.0)
    broken = {}
    with serving(path) as url:
        run_sleep(url)
        phone = phone_browser()
        try:
            for page in ("/", "/episodes", "/recall?context=project%3Dtrace", "/sleep"):
                _open(phone, url, page, "main table")
                # a word longer than a cell must still break, and a hyphen is a line's place to break
                broken[page] = [w for w in phone.execute_script(_BROKEN_WORDS) if len(w) <= 20 and "-" not in w]
                assert phone.execute_script("return document.documentElement.scrollWidth") <= 390, page
        finally:
            phone.quit()
    assert not any(broken.values()), broken


_LONG = ("run the failing test alone first with the seed it printed, then with the seed of the run before it, "
         "and only then raise its timeout: a test that fails alone fails for its own reasons, one that fails "
         "only among the others shares state with them (a temporary folder, a port, an environment variable "
         "set and never unset), and raising the timeout hides both; write down which it was in the pull request")


@pytest.mark.parametrize("phone", [False, True])
def test_a_long_lesson_is_edited_whole_and_its_text_goes_through_the_store_unchanged(
        tmp_path: Path, phone: bool, request: pytest.FixtureRequest) -> None:
    # The fields were one-line inputs: a lesson of several lines showed its first forty words, scrolled
    # sideways within its box, and a newline typed in it was dropped, gluing the words on either side.
    from selenium.webdriver.common.keys import Keys

    from tests.integrations.ui.test_ui_browser import phone_browser
    from tests.integrations.ui.test_ui_edit import _lesson

    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        exp_id = lam.add(Experience("a UI test times out on CI", _LONG, rationale="", scope=Scope(project="trace")))
    driver = phone_browser() if phone else request.getfixturevalue("browser")
    try:
        with serving(path) as url:
            driver.get(url)
            driver.get(f"{url.split('/?')[0]}/lessons/{exp_id}/edit")
            WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "form.add"))
            fields = driver.execute_script("""
                return [...document.querySelectorAll('form.add [name=precondition], form.add [name=action]')]
                  .map(f => [f.tagName, f.value,
                             f.scrollHeight <= f.clientHeight + 1 && f.scrollWidth <= f.clientWidth + 1,
                             f.getBoundingClientRect().right <= document.documentElement.clientWidth]);""")
            assert fields == [["TEXTAREA", "a UI test times out on CI", True, True],
                              ["TEXTAREA", _LONG, True, True]], fields  # the whole text, on screen
            when = driver.find_element(By.NAME, "precondition")
            driver.execute_script("arguments[0].setSelectionRange(99, 99); arguments[0].focus();", when)
            when.send_keys(Keys.ENTER, "after the runner was upgraded")  # a line of its own, as a person types one
            driver.find_element(By.NAME, "keep").click()  # a wording fix: the action must come back as it was
            driver.find_element(By.XPATH, "//button[starts-with(normalize-space(), 'Review')]").click()
            WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "form.confirm"))
            carried = driver.execute_script(
                "return ['precondition', 'action'].map(n => document.querySelector(`[name=${n}]`).value)")
            typed = "a UI test times out on CI\nafter the runner was upgraded"
            assert carried == [typed, _LONG], carried  # sent on as typed
            assert "Its evidence is kept (a wording fix)." in driver.find_element(By.TAG_NAME, "main").text
            driver.find_element(By.XPATH, "//button[normalize-space()='Yes, store it']").click()
            WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.lesson-text"))
            edited, restarts = _lesson(path, exp_id)
            assert (edited.precondition, edited.action, edited.provenance["version"], restarts) == (
                " ".join(typed.split()), _LONG, 2, 0)  # one line in the prompt, as the review showed it
            driver.get(f"{url.split('/?')[0]}/lessons/{exp_id}/edit")
            WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "form.add"))
            assert driver.find_element(By.NAME, "action").get_attribute("value") == _LONG
    finally:
        if phone:
            driver.quit()


def test_an_edit_form_whose_lesson_was_retired_meanwhile_says_so_and_leads_to_revive(
        tmp_path: Path, browser) -> None:  # noqa: F811
    # `lamar apply` in a terminal (a merge) retired the lesson whose edit form was open: the page followed the
    # store and showed the form again, and the edit typed into it was refused with "revive it first (revive)"
    # under the same form, whose Review… could only be refused again.
    import subprocess
    import sys

    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        eid = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(path) as url:
        _open(browser, url, f"/lessons/{eid}/edit", "form.add")
        subprocess.run([sys.executable, "-m", "lamar.cli", "retire", eid, "--store", str(path), "--reason",
                        "merged in a terminal"], check=True, capture_output=True)
        WebDriverWait(browser, 15).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "form.add"))
        said = browser.find_element(By.CSS_SELECTOR, "main p.error").text
        links = {a.text: a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "main a")}
        with Lamar(str(path)) as lam:
            lam.revive(eid, "back")
        _open(browser, url, f"/lessons/{eid}/edit", "form.add")
        browser.find_element(By.NAME, "action").send_keys(" first")  # typing: the page no longer follows
        with Lamar(str(path)) as lam:
            lam.retire(eid, "again")
        browser.find_element(By.XPATH, "//button[starts-with(normalize-space(), 'Review')]").click()
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "main p.error"))
        refused = browser.find_element(By.CSS_SELECTOR, "main p.error").text
        form_left = browser.find_elements(By.CSS_SELECTOR, "form.add")
    assert said == refused == f"lesson {eid} is retired: revive it to edit it, or add a new lesson", (said, refused)
    assert links.get("Revive…", "").endswith(f"/lessons/{eid}/revive") and "Add a lesson" in links, links
    assert not form_left  # no form whose Review… can only be refused
