"""An address `lamar ui` has no page for (a typo, a form's address opened again from the address bar)
answers in the app's frame, saying what to do, with its links to every page."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_trial import serving


def _status(url: str, path: str) -> int:
    base, token = url.split("/?token=")
    cookie = f"lamar_ui_token_{urllib.parse.urlsplit(base).port}={token}"
    try:
        with urllib.request.urlopen(urllib.request.Request(base + path, headers={"Cookie": cookie}), timeout=30):
            return 200
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.parametrize(("path", "status", "says", "link"), [
    ("/lesson/exp_1", 404, "no page at /lesson/exp_1", "/"),
    ("/add/many", 405, "takes the form of the Add a lesson page", "/add"),
    ("/sleep/apply", 405, "takes the form of the Sleep page", "/sleep"),
])
def test_an_address_with_no_page_answers_in_the_app(tmp_path: Path, browser, path: str, status: int,  # noqa: F811
                                                    says: str, link: str) -> None:
    # These answered Starlette's bare "Not Found" or "Method Not Allowed": no way on but the back button.
    store = tmp_path / "lessons.db"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(store) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + path)
        assert len(browser.find_elements(By.CSS_SELECTOR, "header nav a")) == 6
        main = browser.find_element(By.TAG_NAME, "main")
        assert says in main.text, main.text
        assert any(urllib.parse.urlsplit(a.get_attribute("href")).path == link
                   for a in main.find_elements(By.TAG_NAME, "a"))
        assert _status(url, path) == status


def test_without_the_token_no_answer_names_the_store(tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    Lamar(str(store)).close()
    with serving(store) as url:
        base = url.split("/?")[0]
        for path in ("/lesson/exp_1", "/static/missing.css"):  # /static/ is served without the token
            with pytest.raises(urllib.error.HTTPError) as caught:
                urllib.request.urlopen(base + path, timeout=30)
            assert caught.value.code in (403, 404)
            assert str(store) not in caught.value.read().decode()


def test_a_form_sent_to_a_page_that_takes_none_says_so(tmp_path: Path) -> None:
    from tests.integrations.ui.test_ui_trial import _get

    store = tmp_path / "lessons.db"
    Lamar(str(store)).close()
    with serving(store) as url:
        with pytest.raises(urllib.error.HTTPError) as caught:
            _get(url, "/episodes", {"x": "1"})
        assert caught.value.code == 405
        assert "/episodes takes no form: open it" in caught.value.read().decode()


@pytest.mark.parametrize("tail, css", [("", "p.lesson-text"), ("/edit", "form.add"), ("/retire", "form.confirm")])
def test_a_lessons_address_with_a_slash_at_its_end_opens_that_page(tmp_path: Path, browser,  # noqa: F811
                                                                   tail: str, css: str) -> None:
    # `/lessons/ID/` (a slash typed or pasted after the id) answered "no lever ''": a 404 for a lesson shown
    # a click before. It is the page without the slash, at the address without it.
    store = tmp_path / "lessons.db"
    with Lamar(str(store)) as lam:
        exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(store) as url:
        base = url.split("/?")[0]
        browser.get(url)
        browser.get(f"{base}/lessons/{exp_id}{tail}/")
        assert browser.current_url == f"{base}/lessons/{exp_id}{tail}"
        assert browser.find_elements(By.CSS_SELECTOR, css), browser.find_element(By.TAG_NAME, "main").text
        assert _status(url, f"/lessons/{exp_id}{tail}/") == 200
