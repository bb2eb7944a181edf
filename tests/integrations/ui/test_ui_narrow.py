"""`lamar ui` in a narrow window (a phone, a window beside an editor): the header's links wrap onto
lines of their own rather than run off the page, and no page scrolls sideways: charts shrink to fit,
a wide table scrolls in its own box."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lamar import Experience, Lamar, Scope

pytest.importorskip("selenium")

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_trial import serving

WIDTH = 420


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("narrow") / ("a-long-folder-name-" * 4)
    folder.mkdir()
    path = folder / "lessons.db"
    with Lamar(str(path), seed=3) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
        lam.add(Experience("the tests are flaky", "run them one at a time", scope=Scope(project="trace")))
        for n in range(40):  # episodes, so that the charts and the What if? table are drawn
            lam.report(lam.recall({"project": "trace"}).episode_id, 1.0 if n % 3 else -1.0)
    with serving(path) as url:
        yield url


@pytest.fixture
def narrow(browser, server: str) -> Iterator[object]:  # noqa: F811
    size = browser.get_window_size()
    browser.get(server)
    browser.set_window_size(WIDTH, 900)
    try:
        yield browser
    finally:
        browser.set_window_size(size["width"], size["height"])


@pytest.mark.parametrize("page", ["/", "/episodes", "/recall", "/whatif", "/sleep", "/add"])
def test_every_link_of_the_header_is_on_screen(narrow, server: str, page: str) -> None:
    narrow.get(server.split("/?")[0] + page)  # type: ignore[attr-defined]
    width, rights, height = narrow.execute_script(  # type: ignore[attr-defined]
        "return [document.documentElement.clientWidth,"
        " [...document.querySelectorAll('header nav a')].map(a => a.getBoundingClientRect().right),"
        " document.querySelector('header').getBoundingClientRect().height]")
    assert len(rights) == 6 and max(rights) <= width, (rights, width)
    # The store's path wraps on lines of its own, not one letter a line (which took 279 px and more). The
    # path is longer under pytest-xdist's worker folders, so the bound leaves room for a line more of it.
    assert height < 200, height


def test_the_add_form_fits_the_window(narrow, server: str) -> None:
    narrow.get(server.split("/?")[0] + "/add")  # type: ignore[attr-defined]
    width, scrolled = narrow.execute_script(  # type: ignore[attr-defined]
        "return [document.documentElement.clientWidth, document.documentElement.scrollWidth]")
    assert scrolled <= width, (scrolled, width)


@pytest.mark.parametrize("page", ["/", "/lesson", "/episodes", "/recall?context=project%3Dtrace", "/whatif", "/sleep"])
def test_no_page_scrolls_sideways(narrow, server: str, page: str) -> None:
    # The charts are 800 px wide and the tables as wide as their columns: in a window narrower than
    # that, the whole page scrolled sideways, the header and the text with them.
    base = server.split("/?")[0]
    if page == "/lesson":
        narrow.get(base + "/")  # type: ignore[attr-defined]
        page = narrow.execute_script(  # type: ignore[attr-defined]
            "return new URL(document.querySelector('tr.lesson a').href).pathname")
    narrow.get(base + page)  # type: ignore[attr-defined]
    width, scrolled, charts = narrow.execute_script(  # type: ignore[attr-defined]
        "return [document.documentElement.clientWidth, document.documentElement.scrollWidth,"
        " [...document.querySelectorAll('main svg')].filter(s => s.getClientRects().length)"  # the plot drawn for it
        " .map(s => s.getBoundingClientRect().right)]")
    assert scrolled <= width, (page, scrolled, width)
    assert all(0 < right <= width for right in charts), (page, charts, width)  # shrunk, not cut off


def test_a_phone_lays_the_page_out_at_its_own_width(server: str) -> None:
    # A phone's browser lays out a page that names no viewport at 980 px and shrinks it: the narrow
    # layout above never applied, and the text was too small to read without zooming.
    from tests.integrations.ui.test_ui_browser import phone_browser

    phone = phone_browser()
    try:
        phone.get(server)
        for page in ("/", "/add", "/sleep"):
            phone.get(server.split("/?")[0] + page)
            laid_out, scrolled = phone.execute_script(
                "return [window.innerWidth, document.documentElement.scrollWidth]")
            assert laid_out == 390 and scrolled <= 390, (page, laid_out, scrolled)
    finally:
        phone.quit()


@pytest.fixture(scope="module")
def phone(server: str) -> Iterator[object]:
    from tests.integrations.ui.test_ui_browser import phone_browser

    driver = phone_browser()
    try:
        driver.get(server)
        yield driver
    finally:
        driver.quit()


def test_a_phone_reads_the_forest_plots_labels(phone, server: str) -> None:
    # The 820 px plot shrunk to a phone's 334 px drew its 11 px labels at 4.5 px: nothing could be read.
    phone.get(server.split("/?")[0] + "/")  # type: ignore[attr-defined]
    sizes = phone.execute_script(  # type: ignore[attr-defined]
        "return [...document.querySelectorAll('main svg[aria-label^=\"forest plot\"]')]"
        ".filter(s => s.getClientRects().length)"
        ".map(s => 11 * s.getBoundingClientRect().width / s.viewBox.baseVal.width)")
    assert len(sizes) == 1 and sizes[0] >= 10, sizes
    labels = phone.execute_script(  # type: ignore[attr-defined]
        "return [...document.querySelectorAll('main svg[aria-label^=\"forest plot\"]')]"
        ".filter(s => s.getClientRects().length)"
        ".flatMap(s => [...s.querySelectorAll('g > text:first-of-type')].map(t => t.textContent))")
    assert any("clear the cache" in label for label in labels), labels  # the start of what to do is shown


def test_a_phone_shows_the_filters_placeholders_whole(phone, server: str) -> None:
    phone.get(server.split("/?")[0] + "/")  # type: ignore[attr-defined]
    cut = phone.execute_script(  # type: ignore[attr-defined]
        "const c = document.createElement('canvas').getContext('2d');"
        "return [...document.querySelectorAll('main form input[placeholder]')].filter(i => {"
        " const s = getComputedStyle(i); c.font = s.font;"
        " const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);"
        " return c.measureText(i.placeholder).width > room; }).map(i => i.placeholder)")
    assert cut == [], cut
