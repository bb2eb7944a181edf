"""What a sleep button did ("sleep made 1 proposal", "applied 1") shows in the tab that clicked it,
and in no other tab or browser: the app serves them all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_trial import _get, serving


def _shown(driver: Any) -> list[str]:
    return [p.text for p in driver.find_elements(By.CSS_SELECTOR, "p.message")]


def test_a_message_shows_only_in_the_tab_that_clicked(tmp_path: Path, browser) -> None:  # noqa: F811
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
    with serving(path) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + "/sleep")
        clicked = browser.current_window_handle
        browser.find_element(By.XPATH, "//button[starts-with(normalize-space(), 'Run sleep')]").click()
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.message"))
        assert _shown(browser)[0].startswith("sleep made 1 proposal")
        browser.refresh()  # the page reloads itself when the store changes: the message stays
        assert _shown(browser)[0].startswith("sleep made 1 proposal")
        browser.switch_to.new_window("tab")
        try:
            browser.get(url.split("/?")[0] + "/sleep")
            WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "section.proposal"))
            assert _shown(browser) == []  # another tab of the same browser
        finally:
            browser.close()
            browser.switch_to.window(clicked)
        assert 'class="message"' not in _get(url, "/sleep")  # another browser


def test_a_new_store_says_it_holds_no_lesson_yet_not_that_none_matches(tmp_path: Path, browser) -> None:  # noqa: F811
    path = tmp_path / "new.db"
    Lamar(str(path)).close()
    with serving(path) as url:
        browser.get(url)
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.empty"))
        assert browser.find_element(By.CSS_SELECTOR, "p.empty").text.startswith("No lessons yet. Add a lesson")
        assert browser.find_element(By.LINK_TEXT, "Add a lesson").get_attribute("href").endswith("/add")
        browser.get(url.split("/?")[0] + "/?q=anything")  # a filter that finds nothing says so
        assert "No lesson matches." in browser.find_element(By.TAG_NAME, "main").text
        with Lamar(str(path)) as lam:  # written elsewhere: the page follows the store
            lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        browser.get(url.split("/?")[0] + "/")
        WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr.lesson"))
