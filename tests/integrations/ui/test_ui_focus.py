"""`lamar ui`'s sleep page with the keyboard alone: after each button, focus is where the next action is
(the next proposal to decide, then Apply, then what Apply did), and what the button did is read out with it."""

from __future__ import annotations

from pathlib import Path

import pytest

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.integrations.ui.test_ui_apply import two_proposals
from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_trial import serving

# Where focus is, and what a screen reader says with it: the focused element's own words, then the text of
# what its aria-describedby names, and whether that text sits in a live region (role="status").
_FOCUSED = """
const e = document.activeElement;
const said = (e.getAttribute('aria-describedby') || '').split(' ').map(i => document.getElementById(i))
  .filter(Boolean);
const own = e.id === 'said' ? [e] : [];
return [e.tagName.toLowerCase() + (e.id || e.dataset.id ? '#' + (e.id || e.dataset.id) : '') +
        (e.className ? '.' + e.className : ''),
        [...said, ...own].map(d => d.textContent).join(' '),
        [...said, ...own].every(d => d.getAttribute('role') === 'status')];
"""


def _press(driver, key: str) -> None:  # type: ignore[no-untyped-def]
    ActionChains(driver).send_keys(key).perform()


def _tab_to(driver, css: str) -> None:  # type: ignore[no-untyped-def]
    """Tab forward until the focused element matches `css`, as a keyboard user would."""
    for _ in range(40):
        if driver.execute_script("return document.activeElement.matches(arguments[0])", css):
            return
        _press(driver, Keys.TAB)
    raise AssertionError(f"no {css} within 40 tabs")


def _after(driver, page: str) -> tuple[str, str, bool]:  # type: ignore[no-untyped-def]
    """Press Enter on the focused button, wait for the page it leads to: where focus is and what is said."""
    old = driver.find_element("tag name", "html")
    _press(driver, Keys.ENTER)
    WebDriverWait(driver, 20).until(lambda d: d.find_element("tag name", "html") != old and
                                    d.execute_script("return document.readyState") == "complete" and
                                    page in d.current_url)
    focused, said, live = driver.execute_script(_FOCUSED)
    return focused, said, live


def test_a_review_opens_on_its_question_and_a_refusal_on_its_reason(tmp_path: Path, browser) -> None:  # noqa: F811
    # Review… led to a page with focus at its top: a screen reader heard the same title as before, not the
    # question (nor, for an edit another tab had stored first, the refusal), and Yes was 7 tabs away.
    from lamar import Experience, Lamar, Scope
    from tests.integrations.ui.test_ui_lead_walk import _open

    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        eid = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(path) as url:
        _open(browser, url, f"/lessons/{eid}/edit", "form.add")
        _tab_to(browser, "textarea[name=action]")
        _press(browser, Keys.END + " twice")
        _tab_to(browser, "form.add button")
        _after(browser, "/edit")
        question = browser.execute_script("return document.activeElement.textContent")
        assert question.startswith("Store this as the lesson's next version?"), question
        _press(browser, Keys.TAB)
        assert browser.execute_script("return document.activeElement.textContent") == "Yes, store it"

        with Lamar(str(path)) as lam:  # another tab stores its edit meanwhile
            lam.edit(eid, action="clear DerivedData", reason="another tab")
        _after(browser, "/edit")
        refusal, role = browser.execute_script(
            "return [document.activeElement.textContent, document.activeElement.getAttribute('role')]")
        assert refusal.startswith("the lesson was edited since this form was opened") and role == "alert", refusal

        _open(browser, url, "/add", "form.add")
        _tab_to(browser, "form.add button")
        _after(browser, "/add")
        refusal, role = browser.execute_script(
            "return [document.activeElement.textContent, document.activeElement.getAttribute('role')]")
        assert "empty" in refusal and role == "alert", refusal


def test_after_each_sleep_button_focus_is_on_the_next_thing_to_do(tmp_path: Path, browser) -> None:  # noqa: F811
    # Every button led back to the page with focus at its top: a keyboard user tabbed through the header's
    # links and Run sleep again to reach the first proposal, and a screen reader said nothing of the result.
    path = tmp_path / "lessons.db"
    two_proposals(path)
    with serving(path) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + "/sleep")
        _tab_to(browser, "form[action='/sleep/run'] button")
        focused, said, live = _after(browser, "/sleep?note=")
        first, second = browser.execute_script(
            "return [...document.querySelectorAll('section.proposal')].map(s => s.dataset.id)")
        assert focused.startswith(f"section#{first}."), focused
        assert said.startswith("sleep made 2 proposals") and live, (said, live)

        _tab_to(browser, f"section.proposal[data-id='{first}'] button[value='approved']")
        focused, said, live = _after(browser, "/sleep?note=")
        assert focused.startswith(f"section#{second}."), focused  # the next proposal to decide
        assert said == f"{first} approved" and live, (said, live)

        _tab_to(browser, f"section.proposal[data-id='{second}'] button[value='rejected']")
        focused, said, live = _after(browser, "/sleep?note=")
        assert focused == "button", focused  # none left to decide: Apply is next
        assert browser.execute_script("return document.activeElement.textContent") == "Apply 1 approved proposal"
        assert said.startswith(f"{second} rejected") and live, (said, live)

        focused, said, live = _after(browser, "/sleep?note=")
        assert focused == "div#said", focused  # what Apply did, read out where focus lands
        assert said == "applied 1, skipped 0" and live, (said, live)
        outline = browser.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # a sighted keyboard user sees where focus is


def test_a_lever_says_what_it_did_where_focus_lands(tmp_path: Path, browser) -> None:  # noqa: F811
    # Yes, retire led back to the lesson page with focus at its top and nothing said: a screen reader heard
    # "Lesson", the same as before the click, and had to find the status line to learn whether it worked.
    from lamar import Experience, Lamar, Scope
    from tests.integrations.ui.test_ui_lead_walk import _open

    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        eid = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(path) as url:
        _open(browser, url, f"/lessons/{eid}", "p.lesson-text")
        _tab_to(browser, "main a.button[href$='/retire']")
        _after(browser, "/retire")
        _press(browser, Keys.TAB)
        focused, said, live = _after(browser, f"/lessons/{eid}")
        assert focused == "div#said" and live, focused
        assert said == "Retired: it is no longer injected; its evidence and audit trail are kept.", said
        with Lamar(str(path)) as lam:  # revived elsewhere: the page that follows the store no longer says so
            lam.revive(eid, "back")
        browser.get(browser.current_url)
        shown = browser.find_elements("css selector", "#said")
    assert not shown


def test_apply_is_a_few_keys_back_from_the_next_proposal(tmp_path: Path, browser) -> None:  # noqa: F811
    # Apply sat below every proposal: approving the first of 19 and applying it took 76 tabs past the others.
    path = tmp_path / "lessons.db"
    two_proposals(path)
    with serving(path) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + "/sleep")
        _tab_to(browser, "form[action='/sleep/run'] button")
        _after(browser, "/sleep?note=")
        first = browser.execute_script("return document.querySelector('section.proposal').dataset.id")
        _tab_to(browser, f"section.proposal[data-id='{first}'] button[value='approved']")
        focused, _, _ = _after(browser, "/sleep?note=")
        assert focused.startswith("section#"), focused  # on the proposal left to decide
        for back in range(10):
            if browser.execute_script("return document.activeElement.textContent") == "Apply 1 approved proposal":
                break
            ActionChains(browser).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        else:
            raise AssertionError("no Apply within 10 presses of Shift+Tab")
        focused, said, _ = _after(browser, "/sleep?note=")
    assert focused == "div#said" and said == "applied 1, skipped 0", (focused, said, back)
