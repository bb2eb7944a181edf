"""`lamar ui` in a real browser: headless Chromium driven by Selenium against the real server.

The docs' screenshots are made by test_ui_looks.py, at 1024 and 1280 px.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Status, Verdict

selenium = pytest.importorskip("selenium")
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">'
BUILD = {"project": "trace", "task": "build"}


def _need_browser() -> None:
    if Path(CHROMIUM).exists() and Path(DRIVER).exists():
        return
    message = "headless Chromium and chromedriver are needed (apt-get install chromium chromium-driver)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A SQLite store with a lesson proven harmful (so sleep proposes retiring it) and a hostile one."""
    path = tmp_path_factory.mktemp("ui") / "lessons.db"
    lam = Lamar(str(path), k=3, seed=7, holdout=0.5, explore=4.0)
    ids = {
        "bad": lam.add(Experience("the build fails", "delete the repository and clone it again",
                                  scope=Scope(project="trace"))),
        "good": lam.add(Experience("the build fails after a bump", "clear DerivedData", scope=Scope(project="trace"))),
        "hostile": lam.add(Experience(f"a page shows {HOSTILE}", "render it as text",
                                      scope=Scope(project="docs", note=HOSTILE))),
    }
    rng = random.Random(3)
    for n in range(1, 4001):
        rec = lam.recall(BUILD)
        reward = 0.1 + rng.gauss(0.0, 0.3) - 0.6 * (ids["bad"] in rec.ids) + 0.3 * (ids["good"] in rec.ids)
        lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
        if n % 50 == 0 and lam.evidence(ids["bad"]).verdict is Verdict.HARMS:
            break
    for _ in range(3):  # a few episodes left pending
        lam.recall(BUILD)
    assert lam.evidence(ids["bad"]).verdict is Verdict.HARMS
    lam.close()
    return path, ids


@pytest.fixture(scope="module")
def server(store: tuple[Path, dict[str, str]]) -> Iterator[str]:
    """`lamar ui` as a user starts it; yields the address it printed (with the token)."""
    path, _ = store
    proc = subprocess.Popen([sys.executable, "-m", "lamar.cli", "ui", "--store", str(path), "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
        assert match, f"no address printed: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
        yield match.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    _need_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1300,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()



def phone_browser() -> webdriver.Chrome:
    """Headless Chromium as a phone sees a page: 390 px wide, touch, three device pixels a CSS pixel."""
    _need_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"):
        options.add_argument(flag)
    options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844,
                                                                          "pixelRatio": 3.0, "touch": True}})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def _base(url: str) -> str:
    return url.split("/?", 1)[0]


def _wait(driver: webdriver.Chrome, css: str, timeout: float = 10.0) -> None:
    WebDriverWait(driver, timeout).until(lambda d: d.find_elements(By.CSS_SELECTOR, css))


def test_lessons_page_lists_every_lesson_and_hostile_text_stays_text(
        server: str, browser: webdriver.Chrome, store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    browser.get(server)  # sets the token cookie and redirects to /
    _wait(browser, "tr.lesson")
    rows = [r.get_attribute("data-id") for r in browser.find_elements(By.CSS_SELECTOR, "tr.lesson")]
    with Lamar(str(path)) as lam:
        assert rows == [e.id for e in lam.experiences()]
    plotted = [g.get_attribute("data-id") for g in browser.find_elements(By.CSS_SELECTOR, "g.lesson")]
    assert plotted == rows
    assert browser.title != "pwned" and "pwned" not in browser.title
    row = browser.find_element(By.CSS_SELECTOR, f'tr.lesson[data-id="{ids["hostile"]}"]')
    assert "<script>" in row.text and "onerror" in row.text  # shown as text, never run
    assert browser.execute_script("return document.querySelectorAll('main script, main img').length") == 0

    browser.get(_base(server) + "/?verdict=harms")
    _wait(browser, "tr.lesson")
    assert [r.get_attribute("data-id") for r in browser.find_elements(By.CSS_SELECTOR, "tr.lesson")] == [ids["bad"]]


def test_the_file_that_opens_the_browser_leads_to_a_session(server: str, browser: webdriver.Chrome) -> None:
    # `lamar ui` opens the browser on a private file:// page that sends it on to the address with the
    # token. That navigation is cross-site: a SameSite=Strict cookie set by a redirect in it is held
    # back from the redirect's target, which answered 403 until the server moved on with a page of its own.
    from lamar_ui.redirect import redirect_file

    browser.delete_all_cookies()
    with redirect_file(server) as page:
        browser.get(page.as_uri())
        WebDriverWait(browser, 10).until(lambda d: d.current_url == _base(server) + "/" and
                                         d.find_elements(By.CSS_SELECTOR, "tr.lesson, title"))
        _wait(browser, "tr.lesson")
    assert browser.title != "Forbidden"
    browser.get(_base(server) + "/add")  # the cookie now stands for the token
    _wait(browser, "form")


def test_lesson_and_episodes_pages(server: str, browser: webdriver.Chrome, store: tuple[Path, dict[str, str]]) -> None:
    _, ids = store
    browser.get(server)
    browser.get(f"{_base(server)}/lessons/{ids['bad']}")
    _wait(browser, "p.lesson-text")
    assert "delete the repository" in browser.find_element(By.CSS_SELECTOR, "p.lesson-text").text
    assert "harms" in browser.find_element(By.CSS_SELECTOR, "dl").text
    assert browser.find_elements(By.CSS_SELECTOR, "svg circle"), "the evidence chart has points"
    browser.get(f"{_base(server)}/episodes?pending=1")
    _wait(browser, "tr.episode")
    assert len(browser.find_elements(By.CSS_SELECTOR, "tr.episode.pending")) == 3
    browser.get(f"{_base(server)}/episodes")
    _wait(browser, "tr.episode")


def test_approving_a_retire_proposal_retires_the_lesson(
        server: str, browser: webdriver.Chrome, store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    browser.get(server)
    browser.get(_base(server) + "/sleep")
    browser.find_element(By.XPATH, "//button[starts-with(normalize-space(), 'Run sleep')]").click()
    _wait(browser, "section.proposal")
    retire = browser.find_element(By.XPATH, "//section[contains(@class,'proposal')][h2[starts-with(normalize-space(),"
                                            " 'retire')]]")
    pid = retire.get_attribute("data-id")
    retire.find_element(By.XPATH, ".//button[@value='approved']").click()
    _wait(browser, f'section.proposal.approved[data-id="{pid}"]')
    with Lamar(str(path)) as lam:
        assert lam.get(ids["bad"]).status is Status.ACTIVE  # approving changes nothing yet
    browser.find_element(By.XPATH, "//button[starts-with(normalize-space(), 'Apply')]").click()
    # The approval's page may still show its own message while the next page loads: wait for
    # Apply's, reading the text by script so that a page replaced meanwhile is read again.
    WebDriverWait(browser, 10).until(lambda d: "applied" in d.execute_script(
        "const m = document.querySelector('p.message'); return m ? m.textContent : '';"))
    assert "applied 1" in browser.execute_script("return document.querySelector('p.message').textContent;")
    with Lamar(str(path)) as lam:
        assert lam.get(ids["bad"]).status is Status.RETIRED
    report = path.with_name(path.name + ".sleep-report.json")
    assert pid in report.read_text(encoding="utf-8")  # the same review record `lamar review` writes


def test_the_page_follows_writes_from_another_process(server: str, browser: webdriver.Chrome,
                                                     store: tuple[Path, dict[str, str]]) -> None:
    path, _ = store
    browser.get(server)
    _wait(browser, "tr.lesson")
    before = len(browser.find_elements(By.CSS_SELECTOR, "tr.lesson"))
    subprocess.run([sys.executable, "-m", "lamar.cli", "add", "--store", str(path), "--precondition",
                    "a lesson written elsewhere", "--action", "shows up"], check=True, capture_output=True)
    WebDriverWait(browser, 15).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "tr.lesson")) == before + 1)


def test_requests_without_the_token_are_refused(server: str, store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    base = _base(server)
    token = server.split("token=", 1)[1]

    def status(url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None) -> int:
        request = urllib.request.Request(url, data=data, headers=headers or {})
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            return opener.open(request, timeout=10).status
        except urllib.error.HTTPError as exc:
            return exc.code

    cookie = {"Cookie": f"lamar_ui_token_{base.rsplit(':', 1)[1]}={token}"}
    with Lamar(str(path)) as lam:
        before = len(lam.store.read(0))
    assert status(base + "/") == 403
    assert status(base + "/api/version") == 403
    form = b"reason=x&confirm=yes"
    assert status(f"{base}/lessons/{ids['good']}/retire", data=form) == 403  # no cookie
    assert status(f"{base}/lessons/{ids['good']}/retire", data=form, headers=cookie) == 403  # no form token
    cross = {**cookie, "Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}
    assert status(f"{base}/lessons/{ids['good']}/retire", data=form + f"&token={token}".encode(),
                  headers=cross) == 403
    assert status(base + "/", headers={**cookie, "Host": "evil.example"}) == 400  # DNS rebinding
    with Lamar(str(path)) as lam:
        assert len(lam.store.read(0)) == before and lam.get(ids["good"]).status is Status.ACTIVE
    same = {**cookie, "Content-Type": "application/x-www-form-urlencoded"}
    assert status(f"{base}/lessons/{ids['good']}/retire", data=form + f"&token={token}".encode(),
                  headers=same) == 303
    with Lamar(str(path)) as lam:
        assert lam.get(ids["good"]).status is Status.RETIRED
    assert status(f"{base}/lessons/{ids['good']}/revive", data=b"reason=back&confirm=yes&token=" + token.encode(),
                  headers=same) == 303
    with Lamar(str(path)) as lam:
        assert lam.get(ids["good"]).status is Status.ACTIVE
        assert lam.store.read(0)[-1].data == {"id": ids["good"], "status": "active", "reason": "back"}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def test_adding_a_lesson_asks_once_more_and_then_writes(server: str, browser: webdriver.Chrome,
                                                        store: tuple[Path, dict[str, str]]) -> None:
    path, _ = store
    browser.get(server)
    browser.get(_base(server) + "/add")
    for name, value in (("precondition", "the linter fails on CI only"), ("action", "pin the linter's version"),
                        ("scope", "project=trace language=python")):
        browser.find_element(By.NAME, name).send_keys(value)
    browser.find_element(By.XPATH, "//button[starts-with(normalize-space(), 'Review')]").click()
    _wait(browser, "form.confirm")
    with Lamar(str(path)) as lam:
        assert not [e for e in lam.experiences() if "linter" in e.precondition]  # nothing written yet
    browser.find_element(By.XPATH, "//button[normalize-space()='Yes, add it']").click()
    _wait(browser, "p.lesson-text")
    with Lamar(str(path)) as lam:
        (added,) = [e for e in lam.experiences() if "linter" in e.precondition]
        assert dict(added.scope) == {"project": "trace", "language": "python"}
        assert added.provenance.get("via") == "lamar ui"
    assert added.id in browser.current_url
