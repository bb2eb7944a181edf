"""`lamar ui` for a keyboard and a screen reader, in a real browser: every field it can reach has a
name read out, and every page has one main heading."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lamar import Experience, Lamar, Scope
from lamar.cli.review import save_report

selenium = pytest.importorskip("selenium")
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_trial import serving

PAGES = ("/", "/recall?context=project%3Dtrace", "/whatif", "/sleep", "/add")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Two lessons sleep will merge, so the sleep page shows a proposal with its buttons."""
    path = tmp_path_factory.mktemp("access") / "lessons.db"
    with Lamar(str(path), seed=3) as lam:
        lam.add(Experience("the build fails", "clear DerivedData", scope=Scope(project="trace")))
        lam.add(Experience("The build fails.", "Clear DerivedData.", scope=Scope(project="trace")))
        lam.report(lam.recall({"project": "trace"}).episode_id, "shipped")
        save_report(str(path) + ".sleep-report.json", lam.sleep().to_dict())
    with serving(path) as url:
        yield url


def _names(driver: webdriver.Chrome) -> list[tuple[str, str]]:
    """(field, the name a screen reader reads for it) for every field and button a keyboard reaches."""
    fields = driver.find_elements(By.CSS_SELECTOR, "main input:not([type=hidden]), main select, main textarea, "
                                                    "main button")
    # A placeholder is no name: it goes as soon as the field is typed in, and not every reader reads it.
    return [(f.get_attribute("outerHTML")[:80], "" if f.accessible_name == f.get_attribute("placeholder")
             else f.accessible_name) for f in fields if f.is_displayed()]


@pytest.mark.parametrize("page", PAGES)
def test_every_field_has_a_name_a_screen_reader_reads(server: str, browser: webdriver.Chrome,  # noqa: F811
                                                      page: str) -> None:
    browser.get(server)
    browser.get(server.split("/?", 1)[0] + page)
    assert len(browser.find_elements(By.TAG_NAME, "h1")) == 1
    named = _names(browser)
    assert named, "the page has fields"
    assert [field for field, name in named if not name.strip()] == []


def test_each_proposals_buttons_say_which_proposal_they_decide(server: str, browser: webdriver.Chrome  # noqa: F811
                                                               ) -> None:
    browser.get(server)
    browser.get(server.split("/?", 1)[0] + "/sleep")
    (proposal,) = browser.find_elements(By.CSS_SELECTOR, "section.proposal")
    pid = proposal.get_attribute("data-id")
    names = [b.accessible_name for b in proposal.find_elements(By.TAG_NAME, "button")]
    assert names == [f"Approve {pid}", f"Reject {pid}"]
