"""A proposal rejected on `lamar ui`'s sleep page is remembered by the store: the next Run sleep leaves it
out and says so, and approving it instead undoes the rejection."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Lamar

pytest.importorskip("selenium")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.integrations.ui.test_ui_apply import _message, run_sleep, two_proposals
from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_trial import _get, serving


@pytest.mark.parametrize("name", ["lessons.db", "lessons.json"])
def test_a_rejection_on_the_sleep_page_keeps_the_proposal_out_of_the_next_sleep(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    two_proposals(path)
    with serving(path) as url:
        cards = run_sleep(url)
        (pid,) = [i for i, kind in cards.items() if kind == "contradiction"]
        said = _message(_get(url, "/sleep/decide", {"proposal": pid, "decision": "rejected"}))
        assert said == f"{pid} rejected; sleep leaves it out until what it rests on changes"
        said = _message(_get(url, "/sleep/decide", {"proposal": pid, "decision": "approved"}))
        assert said == f"{pid} approved; its rejection undone"
        _get(url, "/sleep/decide", {"proposal": pid, "decision": "rejected"})
        made = _message(_get(url, "/sleep/run", {}))
        assert made.startswith("sleep made 1 proposal") and made.endswith("; 1 rejected proposal left out"), made
        assert f'data-id="{pid}"' not in _get(url, "/sleep")
    with Lamar(str(path)) as lam:
        (held,) = lam.rejections()
        assert held.proposal == pid and held.id.endswith(":2")


def test_reject_on_a_card_already_rejected_says_nothing_changed_and_what_to_do(
        tmp_path: Path, browser) -> None:  # noqa: F811
    # The second Reject answered "ID rejected" alone, as if it had just rejected it, without saying that sleep
    # leaves it out, nor how to take the no back; and it wrote the report again.
    path = tmp_path / "lessons.db"
    two_proposals(path)
    with serving(path) as url:
        cards = run_sleep(url)
        (pid,) = [i for i, kind in cards.items() if kind == "contradiction"]
        browser.get(url)
        browser.get(url.split("/?")[0] + "/sleep")
        card = f'section.proposal[data-id="{pid}"]'
        browser.find_element(By.CSS_SELECTOR, f'{card} button[value="rejected"]').click()
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, f"{card}.rejected"))
        report = path.with_name(path.name + ".sleep-report.json")
        before = report.read_bytes()
        browser.find_element(By.CSS_SELECTOR, f'{card} button[value="rejected"]').click()
        WebDriverWait(browser, 10).until(lambda d: "already" in d.find_element(By.CSS_SELECTOR, "p.message").text)
        said = browser.find_element(By.CSS_SELECTOR, "p.message").text
        assert said == (f"{pid} was already rejected: nothing changed. Sleep leaves it out until what it rests on "
                        "changes; Approve on its card takes the rejection back."), said
        assert report.read_bytes() == before
    with Lamar(str(path)) as lam:
        assert [r.proposal for r in lam.rejections()] == [pid]
