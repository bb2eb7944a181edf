"""What a new user of `lamar ui` tripped over, each checked against a real server (and a real browser).

A page that silently stops following a stopped server, "1 proposals", an episodes page that did
not say it lists only the latest 100, a hand-edited filter answered with Python's enum error, and
a favicon the browser asked for on every page and got a 404 for.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar.extras import install_command

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.integrations.ui.test_ui_browser import browser  # noqa: F401  (the shared headless Chromium)

CONTEXT = {"project": "trace", "language": "swift"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """120 episodes (more than the 100 the episodes page lists) and two lessons sleep will merge."""
    path = tmp_path_factory.mktemp("trial") / "lessons.db"
    lam = Lamar(str(path), k=3, seed=5)
    lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
    lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
    lam.add(Experience("the build fails", "clear DerivedData", scope=Scope(project="trace")))
    lam.add(Experience("a log line is long", "x" * 400, scope=Scope(project="logs")))
    rng = random.Random(5)
    for _ in range(120):
        lam.report(lam.recall(CONTEXT).episode_id, rng.choice(["shipped", "reverted"]))
    lam.close()
    return path


def _start(path: Path, *options: str, before: str = "") -> tuple[subprocess.Popen[str], str]:
    """`before`: Python code the server's process runs before the command line does."""
    run = f"{before}\nimport sys\nfrom lamar.cli import main\nsys.exit(main())"
    entry = ["-c", run] if before else ["-m", "lamar.cli"]
    proc = subprocess.Popen([sys.executable, *entry, "ui", "--store", str(path), "--no-browser", *options],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
    if not match:
        proc.kill()
        raise AssertionError(f"no address printed: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc, match.group(0)


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(timeout=10)


@contextlib.contextmanager
def serving(path: Path, *options: str, before: str = "") -> Iterator[str]:
    """`lamar ui` on the store at `path` for the length of the block; yields its address with the token."""
    proc, url = _start(path, *options, before=before)
    try:
        yield url
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def server(store: Path) -> Iterator[str]:
    with serving(store) as url:
        yield url


def _get(url: str, path: str, data: Mapping[str, str | list[str]] | None = None) -> str:
    """GET (or POST `data`, with the token) as the browser does, following redirects; the page's HTML.
    A list is sent as a field repeated, as a form's inputs of one name are."""
    base, token = url.split("/?token=")
    cookie = f"lamar_ui_token_{urllib.parse.urlsplit(base).port}={token}"
    request = urllib.request.Request(base + path, headers={"Cookie": cookie},
                                     data=None if data is None
                                     else urllib.parse.urlencode({**data, "token": token}, doseq=True).encode())
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(response.read().decode())


def test_sleep_message_counts_proposals_in_good_english(server: str) -> None:
    page = _get(server, "/sleep/run", {})
    message = re.search(r'<p class="message">([^<]*)</p>', page)
    assert message, page[-500:]
    assert re.fullmatch(r"sleep made 1 proposal at \d\d:\d\d:\d\d", message.group(1)), message.group(1)


def test_an_applied_proposal_is_not_offered_again(server: str, browser) -> None:  # noqa: F811
    _get(server, "/sleep/run", {})
    browser.get(server)
    browser.get(server.split("/?")[0] + "/sleep")
    browser.find_element(By.XPATH, "//button[normalize-space()='Approve']").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "section.proposal.approved"))
    browser.find_element(By.XPATH, "//button[normalize-space()='Apply 1 approved proposal']").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.applied"))
    assert browser.find_element(By.CSS_SELECTOR, ".message").text == "applied 1, skipped 0"
    assert browser.find_element(By.CSS_SELECTOR, "p.applied").text == "1 proposal already applied, not listed."
    assert browser.find_elements(By.CSS_SELECTOR, "section.proposal") == []
    assert not browser.find_elements(By.XPATH, "//button[starts-with(normalize-space(), 'Apply')]")
    assert "Nothing is left to decide; run sleep again for new proposals." in browser.page_source


def test_a_long_word_wraps_instead_of_scrolling_the_page(server: str, browser) -> None:  # noqa: F811
    browser.get(server)
    link = next(a for a in browser.find_elements(By.CSS_SELECTOR, "td a") if "a log line is long" in a.text)
    browser.get(link.get_attribute("href"))
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.TAG_NAME, "h2"))
    scroll, client = browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll <= client, f"the page scrolls sideways: {scroll} px of content in {client} px"


def test_episodes_page_says_it_lists_only_the_latest(server: str) -> None:
    page = _get(server, "/episodes")
    assert page.count('<tr class="episode') == 100
    assert "120 episodes, 0 pending (no outcome reported yet); the latest 100 shown, newest first." in page


def test_a_hand_edited_filter_gets_the_values_to_use(server: str) -> None:
    page = _get(server, "/?verdict=proven")
    assert "verdict &#x27;proven&#x27; is not one of helps, harms, unknown; leave it empty for any verdict" in page
    assert "is not a valid Verdict" not in page
    page = _get(server, "/?status=gone")
    assert "status &#x27;gone&#x27; is not one of candidate, active, retired" in page


def test_pages_load_without_a_browser_error(server: str, browser) -> None:  # noqa: F811
    browser.get(server)
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "table"))
    browser.get(server.split("/?")[0] + "/episodes")
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr.episode"))
    severe = [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []


def test_a_stopped_server_is_announced_on_the_page(store: Path, browser) -> None:  # noqa: F811
    proc, url = _start(store)
    try:
        browser.get(url)
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "table"))
        assert browser.find_elements(By.ID, "offline") == []
    finally:
        _stop(proc)
    WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "offline"))
    text = browser.find_element(By.ID, "offline").text
    assert "not answering" in text and "no longer follows the store" in text
    assert browser.find_elements(By.CSS_SELECTOR, "table"), "the last page stays readable"


def test_a_store_deleted_under_an_open_page_is_announced_on_it(tmp_path: Path, browser) -> None:  # noqa: F811
    store = tmp_path / "gone.db"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    proc, url = _start(store)
    try:
        browser.get(url)
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "table"))
        for gone in tmp_path.glob("gone.*"):
            gone.unlink()
        WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "offline"))
        text = browser.find_element(By.ID, "offline").text
        assert "can no longer read its store" in text and "Reload it to see why" in text
    finally:
        _stop(proc)


def _run_ui(store: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", "ui", "--store", str(store), "--no-browser", *options],
                          capture_output=True, text=True, timeout=60, check=False)


def test_a_port_in_use_or_out_of_range_is_one_line_that_says_what_to_do(store: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _run_ui(store, "--port", str(port))
    assert done.returncode == 1, done.stderr
    assert done.stderr == (f"lamar: error: cannot listen on 127.0.0.1:{port} (Address already in use): "
                           "pick another --port, or leave it out for a free one\n")
    done = _run_ui(store, "--port", "99999")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "--port: expected a port number 0-65535 in digits (0 or left out: a free one), got '99999'" in done.stderr


def _ui_without(module: str, store: Path) -> subprocess.CompletedProcess[str]:
    """`lamar ui` in a real interpreter where importing `module` fails, as on a broken or partial install."""
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            f"from lamar.cli import main; sys.exit(main(['ui', '--store', {str(store)!r}, '--no-browser']))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)


def test_an_empty_store_flag_is_said_before_the_missing_web_stack(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['starlette'] = None\n"
            "from lamar.cli import main; sys.exit(main(['ui', '--store', '', '--no-browser']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 1 and "--store is empty" in done.stderr and "the ui extra" not in done.stderr, done.stderr


def test_only_a_missing_web_stack_is_blamed_on_the_extra(store: Path) -> None:
    missing = _ui_without("starlette", store)
    assert missing.returncode == 2 and f"the ui extra: {install_command('ui')}" in missing.stderr, missing.stderr
    broken = _ui_without("lamar_ui.pages", store)  # part of the lamar wheel: the extra would not bring it
    assert broken.returncode == 2 and "lamar_ui.pages" in broken.stderr
    assert "the ui extra" not in broken.stderr, broken.stderr


def test_importing_lamar_ui_without_its_web_stack_names_the_extra() -> None:
    """`lamar_ui.serve` and `create_app` are public (docs/api.md): imported from Python without the extra
    they said only "No module named 'starlette'", where the other integrations name their extra."""
    code = "import sys; sys.modules['starlette'] = None\nimport lamar_ui"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    last = done.stderr.strip().splitlines()[-1]
    assert last.endswith(f"lamar_ui needs its web stack (import of starlette halted; None in sys.modules), "
                         f"the ui extra: {install_command('ui')}"), done.stderr
    assert _ui_without("starlette", Path("unused.db")).stderr.count("the ui extra") == 1  # said once by `lamar ui`


def test_the_forest_plot_caption_explains_a_dashed_line(server: str) -> None:
    page = _get(server, "/")
    caption = re.search(r"Dot: lift[^<]*", page)
    assert caption and "line: its anytime-valid interval" in caption.group(0)
    assert "(dashed where it runs past the axis)" in caption.group(0)


def test_traces_or_a_model_that_cannot_be_used_are_refused_at_launch(store: Path, tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_text("")
    done = _run_ui(store, "--traces", str(tmp_path / "missing.jsonl"), "--model", "anthropic:claude-sonnet-4-5")
    assert done.returncode == 1, done.stderr
    assert done.stderr == (f"lamar: error: no trace file {tmp_path / 'missing.jsonl'}: "
                           "pass a JSON Lines file of traces\n")
    done = _run_ui(store, "--traces", "/dev/null", "--model", "anthropic:claude-sonnet-4-5")
    assert done.stderr == "lamar: error: /dev/null is not a regular file; --traces takes a JSON Lines file of traces\n"
    done = _run_ui(store, "--traces", str(traces), "--model", "mystery:model")
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("lamar: error: --model: unknown model provider 'mystery'"), done.stderr
