"""A form sent from a `lamar ui` page (Yes, erase on a long log; Apply waiting for the store's lock) is
not cancelled by the page following the store: a reload while the answer is awaited would drop it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

pytest.importorskip("selenium")

from selenium.webdriver.common.by import By

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)


def test_a_page_whose_form_was_sent_is_not_reloaded_under_it(browser,  # noqa: F811
                                                             served_lesson: tuple[str, Path, str]) -> None:
    url, path, exp_id = served_lesson
    browser.get(url)
    browser.get(f"{url.split('/?')[0]}/lessons/{exp_id}/erase")
    # The answer is held back (as a slow erase or a locked store holds it): the form is sent, no page comes yet.
    browser.execute_script("window.sentHere = true;"
                           "document.querySelector('main form').addEventListener('submit', e => e.preventDefault());")
    browser.find_element(By.XPATH, "//button[normalize-space()='Yes, erase']").click()
    with Lamar(str(path)) as lam:  # the store changes meanwhile (the erase's own first write, an agent)
        lam.add(Experience("a lint error shows", "pin the linter", scope=Scope(project="trace")))
    time.sleep(6)  # three of the page's two-second looks at the store
    assert browser.execute_script("return window.sentHere === true"), "the page reloaded under the form it sent"


def test_a_page_with_no_form_sent_still_follows_the_store(browser,  # noqa: F811
                                                          served_lesson: tuple[str, Path, str]) -> None:
    url, path, exp_id = served_lesson
    browser.get(url)
    browser.get(f"{url.split('/?')[0]}/lessons/{exp_id}/erase")
    browser.execute_script("window.sentHere = true;")
    with Lamar(str(path)) as lam:
        lam.add(Experience("a lint error shows", "pin the linter", scope=Scope(project="trace")))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and browser.execute_script("return window.sentHere === true"):
        time.sleep(0.2)
    assert not browser.execute_script("return window.sentHere === true"), "the page did not follow the store"


def test_a_form_waiting_for_a_locked_store_says_it_was_sent(browser,  # noqa: F811
                                                            served_lesson: tuple[str, Path, str]) -> None:
    # Yes, retire on a store another process holds locked: the page sat as it was, as if the click had been
    # missed, for as long as the write waited; a user clicked again, or left.
    import sqlite3
    import threading

    url, path, exp_id = served_lesson
    browser.get(url)
    browser.get(f"{url.split('/?')[0]}/lessons/{exp_id}/retire")
    held = threading.Event()

    def hold() -> None:  # another process's writer, mid-transaction, for 4 s
        other = sqlite3.connect(str(path), isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            held.set()
            time.sleep(4)  # the write waits for the lock meanwhile
        finally:
            other.execute("ROLLBACK")
            other.close()

    # The lock is held before the click (a write that got in first would never wait, and say nothing), by
    # another thread: the driver may wait for the page the click leads to, which waits for the lock.
    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    # What the page says while it waits, noted where the next page can read it: the driver waits for that page.
    browser.execute_script("""
        sessionStorage.removeItem('waiting');
        new MutationObserver(() => {
          const e = document.getElementById('waiting');
          if (e) { sessionStorage.setItem('waiting', JSON.stringify([e.textContent, e.getAttribute('role')])); }
        }).observe(document.body, {childList: true, subtree: true, characterData: true});
        setTimeout(() => document.querySelector('main form button').click(), 0);""")
    holder.join()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "set retired" not in browser.find_element(By.TAG_NAME, "main").text:
        time.sleep(0.3)
    assert "set retired" in browser.find_element(By.TAG_NAME, "main").text  # the lock let go: it went through
    said = browser.execute_script("return JSON.parse(sessionStorage.getItem('waiting'))")
    assert said and said[1] == "status" and said[0].startswith("Sent: waiting for lamar ui's answer"), said
    assert not browser.find_elements(By.ID, "waiting")
