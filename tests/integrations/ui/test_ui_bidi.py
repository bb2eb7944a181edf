"""Right-to-left lessons in `lamar ui`, in a real browser: every piece of user text is isolated (`<bdi>`, or
dir=auto on a field), so an Arabic or Hebrew lesson, scope or reason cannot reorder the words around it."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from lamar import Experience, Lamar, Scope

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)
from tests.integrations.ui.test_ui_trial import serving

WHEN, DO, WHY = "عندما يفشل البناء", "امسح الذاكرة المؤقتة", "لأنها قديمة"
REASON = "לא נכון יותר 2"

# Where each of `parts` starts on screen (its first character's left edge), found in whichever text node holds it.
_LEFT = """
const [root, parts] = arguments, out = [];
for (const part of parts) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.textContent.indexOf(part);
    if (at < 0) { continue; }
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + part.length);
    out.push(range.getBoundingClientRect().left);
    break;
  }
}
return out;
"""

# Each text node holding a right-to-left letter whose nearest element does not isolate it from the page. A chart's
# labels are left out: each is an SVG text placed on its own, whose words cannot move any other's.
_LOOSE = """
const loose = [];
const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (!/[\\u0590-\\u08ff]/.test(node.textContent) || node.parentElement.closest('svg')) { continue; }
  const bidi = getComputedStyle(node.parentElement).unicodeBidi;
  if (bidi !== 'isolate' && bidi !== 'plaintext') { loose.push([node.parentElement.tagName, node.textContent]); }
}
return loose;
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    store = tmp_path_factory.mktemp("bidi") / "lessons.db"
    with Lamar(str(store)) as lam:
        exp_id = lam.add(Experience(WHEN, DO, WHY, scope=Scope(project="قاعدة")))
        lam.add(Experience("the build fails", "clear the cache"))
        for _ in range(3):
            lam.report(lam.recall({"project": "قاعدة"}).episode_id, 0.5)
        lam.retire(exp_id, REASON)
        lam.revive(exp_id, REASON)
    return str(store), exp_id


def test_a_lessons_fields_keep_the_sentences_order(served: tuple[str, str], browser) -> None:  # noqa: F811
    # One Arabic stretch "WHEN, DO" would be laid out right to left as a whole: the action first on screen.
    store, exp_id = served
    with serving(Path(store)) as url:
        browser.get(url)
        browser.get(url.split("/?")[0] + f"/lessons/{quote(exp_id, safe='')}")
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.lesson-text"))
        text = browser.find_element(By.CSS_SELECTOR, "p.lesson-text")
        when, do, why = browser.execute_script(_LEFT, text, [WHEN, DO, WHY])
        assert when < do < why, (when, do, why)


def test_a_charts_label_keeps_the_sentences_order(served: tuple[str, str], browser) -> None:  # noqa: F811
    # An SVG text holds no <bdi>: without marks around each field, the Arabic condition and action would run as
    # one right-to-left stretch in the forest plot's row label, the action drawn left of the condition.
    store, exp_id = served
    with serving(Path(store)) as url:
        browser.get(url)
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "g.lesson text"))
        label = browser.find_element(By.CSS_SELECTOR, f'g.lesson[data-id="{exp_id}"] text')
        when, do = browser.execute_script(_LEFT, label, [WHEN, DO.split()[0]])
        assert when < do, (when, do)


def test_every_piece_of_user_text_is_isolated(served: tuple[str, str], browser) -> None:  # noqa: F811
    store, exp_id = served
    with serving(Path(store)) as url:
        base = url.split("/?")[0]
        browser.get(url)
        for path, css in [("/", "tr.lesson"), (f"/lessons/{quote(exp_id, safe='')}", "ul.changes"),
                          ("/episodes", "tr.episode"), ("/recall?context=" + quote("project=قاعدة"), "table"),
                          (f"/lessons/{quote(exp_id, safe='')}/retire", "form.confirm"),
                          (f"/lessons/{quote(exp_id, safe='')}/edit", "form.add")]:
            browser.get(base + path)
            WebDriverWait(browser, 10).until(lambda d, css=css: d.find_elements(By.CSS_SELECTOR, css))
            assert WHEN in browser.find_element(By.TAG_NAME, "main").text or path == "/episodes", path
            assert browser.execute_script(_LOOSE) == [], path
        browser.find_element(By.NAME, "rationale").send_keys(" مرة أخرى")  # a change: an edit of nothing is refused
        browser.find_element(By.XPATH, "//form[@class='add']//button").click()  # the edit's review
        WebDriverWait(browser, 10).until(lambda d: "next version?" in d.page_source)
        assert browser.execute_script(_LOOSE) == []
        browser.get(base + "/add")
        browser.find_element(By.NAME, "precondition").send_keys(WHEN)
        browser.find_element(By.NAME, "action").send_keys(DO)
        browser.find_element(By.NAME, "scope").send_keys("project=قاعدة")
        fields = browser.find_elements(By.CSS_SELECTOR, "form.add input:not([type=hidden]), textarea")
        assert [field.get_attribute("dir") for field in fields] == ["auto"] * 5  # typed right to left, shown so
        browser.find_element(By.XPATH, "//form[@class='add']//button").click()
        WebDriverWait(browser, 10).until(lambda d: "Add this lesson?" in d.page_source)
        assert browser.execute_script(_LOOSE) == []
