"""`lamar ui` in a real browser while other things go on: a page that answers a form is not
reloaded when another process writes (the reload would send the form again), and two launches at
once keep their own token cookies."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_trial import serving


def _review_id(page: str) -> str:
    found = re.search(r'<input type="hidden" name="id" value="([^"]+)">', page)
    assert found, page[-800:]
    return found.group(1)


def to_review(driver, url: str) -> None:
    """Open the launch's address (which sets the token cookie), then ask to add a lesson, and wait for its review."""
    driver.get(url)
    driver.get(url.split("/?")[0] + "/add")
    driver.find_element(By.NAME, "precondition").send_keys("a test flakes")
    driver.find_element(By.NAME, "action").send_keys("rerun it once")
    driver.find_element(By.XPATH, "//form[@class='add']//button").click()
    WebDriverWait(driver, 10).until(lambda d: "Add this lesson?" in d.page_source)


def test_a_review_stays_put_while_an_agent_writes(tmp_path: Path, browser) -> None:  # noqa: F811
    store = tmp_path / "lessons.db"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(store) as url:
        to_review(browser, url)
        shown = _review_id(browser.page_source)
        with Lamar(str(store)) as lam:  # an agent at work while the user reads the review
            lam.recall({"project": "trace"})
        time.sleep(5)  # two and a half polls of ui.js
        assert _review_id(browser.page_source) == shown, "the review was sent again"
        browser.find_element(By.XPATH, "//button[normalize-space()='Yes, add it']").click()
        WebDriverWait(browser, 10).until(lambda d: "/lessons/" in d.current_url)
    with Lamar(str(store)) as lam:
        assert [e.id for e in lam.experiences()][-1] == shown


def test_two_launches_at_once_do_not_log_each_other_out(tmp_path: Path, browser) -> None:  # noqa: F811
    stores = []
    for name in ("a", "b"):
        stores.append(tmp_path / f"{name}.db")
        with Lamar(str(stores[-1])) as lam:
            lam.add(Experience(f"project {name} builds", "run make", scope=Scope(project=name)))
    with serving(stores[0]) as first, serving(stores[1]) as second:
        browser.get(first)
        browser.get(second)  # a browser keeps one set of cookies per host, whatever the port
        for url, name in ((first, "a"), (second, "b")):
            browser.get(url.split("/?")[0] + "/")
            WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr.lesson, title"))
            assert browser.title == "What the agent believes · Lamar", browser.page_source[-300:]
            assert f"project {name} builds" in browser.find_element(By.CSS_SELECTOR, "table.lessons").text
