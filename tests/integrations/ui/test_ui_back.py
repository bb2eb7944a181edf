"""`lamar ui`'s back button after a form in a real browser: each form's answer is a page reached by a GET
(POST/redirect/GET), so going back shows it again rather than the browser's "Confirm Form Resubmission"."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_resend import to_review
from tests.integrations.ui.test_ui_trial import serving


def _settled(driver) -> bool:
    return driver.execute_script("return document.readyState") == "complete"


def test_back_after_adding_a_lesson_shows_the_review_again(tmp_path: Path, browser) -> None:  # noqa: F811
    store = tmp_path / "lessons.db"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(store) as url:
        to_review(browser, url)
        browser.find_element(By.XPATH, "//button[normalize-space()='Yes, add it']").click()
        WebDriverWait(browser, 10).until(lambda d: "/lessons/" in d.current_url)
        browser.back()  # to the review, which answered the first POST
        WebDriverWait(browser, 10).until(_settled)
        assert "ERR_CACHE_MISS" not in browser.page_source and "Resubmission" not in browser.page_source
        assert "Add this lesson?" in browser.page_source, browser.page_source[-600:]
        browser.refresh()  # a reload asks nothing either: it is a GET
        WebDriverWait(browser, 10).until(_settled)
        assert "Add this lesson?" in browser.page_source, browser.page_source[-600:]
        browser.back()  # the empty form
        WebDriverWait(browser, 10).until(_settled)
        assert browser.find_elements(By.XPATH, "//form[@class='add']"), browser.page_source[-600:]
    with Lamar(str(store)) as lam:
        assert [e.precondition for e in lam.experiences()].count("a test flakes") == 1  # added once


def test_back_after_a_refused_edit_shows_the_form_with_its_reason(tmp_path: Path, browser) -> None:  # noqa: F811
    store = tmp_path / "lessons.db"
    with Lamar(str(store)) as lam:
        exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(store) as url:
        base = url.split("/?")[0]
        browser.get(url)
        browser.get(f"{base}/lessons/{exp_id}/edit")
        field = browser.find_element(By.NAME, "scope")
        field.clear()
        field.send_keys("project")  # not KEY=VALUE: the form comes back with the reason
        browser.find_element(By.XPATH, "//form[@class='add']//button").click()
        WebDriverWait(browser, 10).until(lambda d: "is not KEY=VALUE" in d.page_source)
        browser.get(f"{base}/")
        browser.back()
        WebDriverWait(browser, 10).until(_settled)
        assert "is not KEY=VALUE" in browser.page_source, browser.page_source[-600:]
