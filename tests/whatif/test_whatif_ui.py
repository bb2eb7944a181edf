"""The "What if?" page of `lamar ui`, in headless Chromium against the real server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401 - the shared headless Chromium


@pytest.fixture(scope="module")
def address(logged: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # Started before the per-test cache folder is set: the server gets a cache folder of its own.
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("ui-cache"))}
    proc = subprocess.Popen([sys.executable, "-m", "lamar.cli", "ui", "--store", str(logged), "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        match = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=\S+", proc.stdout.readline())
        assert match
        yield match.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_page_lists_each_policy_and_takes_others(browser, address: str) -> None:  # noqa: F811
    browser.get(address)
    browser.find_element(By.LINK_TEXT, "What if?").click()
    assert browser.current_url.endswith("/whatif")
    rows = {row.get_attribute("data-policy"): row.text
            for row in browser.find_elements(By.CSS_SELECTOR, "tr[data-policy]")}
    assert set(rows) == {"logged", "none", "proven", "today", "holdout:0", "k:1"}
    assert "%" in rows["none"] and "no memory" in rows["none"]
    # This log never held out both wanted lessons at once often enough: the page says so under the
    # whole-range interval and gives PI-DR's reading; a narrow interval gets no such line.
    assert "whole range: the log rarely drew this slate; pi-dr, if the lessons add up:" in rows["none"]
    assert "whole range" not in rows["holdout:0"]
    # The cells quote the interval for this reading; hovering gives the sequence for any reading.
    tips = [cell.get_attribute("title") for cell in
            browser.find_elements(By.CSS_SELECTOR, 'tr[data-policy="holdout:0"] td[title]')]
    assert len(tips) == 2 and all(re.fullmatch(r"anytime 95%: \[-?[\d.]+, -?[\d.]+\]", tip) for tip in tips), tips
    field = browser.find_element(By.NAME, "policies")
    field.clear()
    field.send_keys("holdout:0.3 <b>k:9")
    field.submit()
    # Each submit loads a new page: wait for it rather than read the one still shown.
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.error"))
    error = browser.find_element(By.CSS_SELECTOR, "p.error").text
    assert "unknown policy '<b>k:9'" in error  # shown as text, not markup
    field = browser.find_element(By.NAME, "policies")
    field.clear()
    field.send_keys("holdout:0.3 k:1")
    field.submit()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr[data-policy]"))
    shown = [row.get_attribute("data-policy") for row in browser.find_elements(By.CSS_SELECTOR, "tr[data-policy]")]
    assert shown == ["holdout:0.3", "k:1"]
