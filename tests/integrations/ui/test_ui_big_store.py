"""`lamar ui` over a store too long to read whole on every page: the lessons table a page at a
time with its filters kept, the episodes read from the log's end with the counts `lamar stats`
gives, and what-if estimated once for each state of the store."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient

from lamar_ui.app import PAGE_ROWS, UI, create_app


@pytest.fixture
def client_of(tmp_path: Path) -> Iterator[Any]:
    clients: list[TestClient] = []

    def make(lam: Lamar) -> TestClient:
        ui = UI(lam, report_path=tmp_path / "report.json")
        client = TestClient(create_app(ui), base_url="http://127.0.0.1")
        client.get(f"/?token={ui.token}", follow_redirects=False)  # the cookie
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def _page(client: TestClient, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, response.text
    return html.unescape(response.text)


def _lessons(page: str) -> list[str]:
    return re.findall(r'<tr class="lesson \w+" data-id="([^"]+)">', page)


def test_the_lessons_table_shows_a_page_at_a_time_and_its_links_keep_the_filters(client_of: Any) -> None:
    lam = Lamar(seed=1)
    wanted = [lam.add(Experience(f"case {i} of the build", f"fix {i}", scope=Scope(project="a"))) for i in range(450)]
    lam.add(Experience("case of the other project", "other fix", scope=Scope(project="b")))
    client = client_of(lam)
    first = _page(client, "/?q=build&scope=project%3Da")
    assert _lessons(first) == wanted[:PAGE_ROWS]
    assert "450 lessons; 1 to 200 shown, in the plot and the table." in first
    assert first.count('<a href="/?q=build&scope=project%3Da&page=2" rel="next">') == 2  # above and below
    assert 'rel="prev"' not in first and "page 1 of 3" in first
    last = _page(client, "/?q=build&scope=project%3Da&page=3")
    assert _lessons(last) == wanted[2 * PAGE_ROWS:]
    assert "401 to 450 shown" in last and 'rel="next"' not in last
    assert '<a href="/?q=build&scope=project%3Da&page=2" rel="prev">' in last
    assert _lessons(_page(client, "/?q=build&scope=project%3Da&page=9")) == wanted[2 * PAGE_ROWS:]  # past the end
    assert "is not a page number" in _page(client, "/?page=two")
    one = _page(client, "/?scope=project%3Db")
    assert len(_lessons(one)) == 1 and "page 1 of" not in one and "1 lesson." in one


def test_the_episodes_page_lists_the_latest_from_the_log_and_counts_as_stats(client_of: Any) -> None:
    lam = Lamar(seed=2, k=2)
    for i in range(4):
        lam.add(Experience(f"case {i}", f"fix {i}", scope=Scope(project="x"), status="active"))
    ids = []
    for n in range(700):  # over 1 024 events: the page reads a second window from the log's end
        episode = lam.recall({"project": "x"}).episode_id
        ids.append(episode)
        if n % 7:
            lam.report(episode, 1.0 if n % 2 else -0.5)
    lam.report(ids[-3], 0.25, replace=True)  # a replacing outcome: the later one is shown
    lam.expire(ids[-1], "the run failed")
    assert lam.checkpoint()  # the log forgets the episodes; the fold and stats() keep counting them
    for _ in range(30):
        lam.recall({"project": "x"})
    newest = [lam.recall({"project": "x"}).episode_id for _ in range(90)][::-1]
    stats = lam.stats()
    page = _page(client_of(lam), "/episodes")
    rows = re.findall(r'<tr class="episode( pending)?"><td><code>([^<]+)</code>', page)
    assert [episode for _, episode in rows][:90] == newest and len(rows) == 100
    assert f"{stats['episodes']} episodes, {len(lam.pending())} pending" in page
    waiting = _page(client_of(lam), "/episodes?pending=1")
    pending = [p.episode_id for p in lam.pending()]
    assert re.findall(r'<tr class="episode pending"><td><code>([^<]+)</code>', waiting) == pending[::-1][:100]
    assert len(pending) > 120  # the fold keeps the pending episodes the checkpoint took out of the log
    chart = _page(client_of(lam), "/").split("<h2>Injections over time</h2>")[1]
    assert f">episode {stats['episodes']}</text>" in chart  # the snapshot's episodes too


def test_the_episodes_page_shows_replaced_and_expired_outcomes_read_from_the_end(client_of: Any) -> None:
    lam = Lamar(seed=3)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x"), status="active"))
    ids = [lam.recall({"project": "x"}).episode_id for _ in range(600)]
    for episode in ids[:-3]:
        lam.report(episode, 1.0)
    lam.report(ids[-4], -0.5, replace=True)
    lam.expire(ids[-3], "the run failed")
    page = _page(client_of(lam), "/episodes")
    cells = dict(re.findall(r'<tr class="episode[^"]*"><td><code>([^<]+)</code>.*?<td>([^<]*)</td></tr>', page))
    assert (cells[ids[-1]], cells[ids[-3]], cells[ids[-4]], cells[ids[-5]]) == ("pending", "expired", "-0.50", "+1.00")
    assert len(cells) == 100 and ids[-101] not in cells


def test_what_if_is_estimated_once_for_each_state_of_the_store(client_of: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    lam = Lamar(seed=4, holdout=0.3)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x"), status="active"))
    for n in range(60):
        lam.report(lam.recall({"project": "x"}).episode_id, 1.0 if n % 3 else -1.0)
    asked: list[object] = []
    estimate = lam.whatif
    monkeypatch.setattr(lam, "whatif", lambda policy=None, **kw: asked.append(policy) or estimate(policy, **kw))
    client = client_of(lam)
    first = _page(client, "/whatif")
    assert _page(client, "/whatif") == first and len(asked) == 1
    _page(client, "/whatif?policies=none")
    assert len(asked) == 2
    lam.report(lam.recall({"project": "x"}).episode_id, 1.0)  # the log grew: estimated again
    _page(client, "/whatif")
    assert asked == [None, ["none"], None]


def test_the_what_if_policies_field_takes_names_separated_by_commas_too(client_of: Any) -> None:
    # "none, k:1" read as the names 'none,' and 'k:1' was refused with "did you mean 'none'?".
    lam = Lamar(seed=4, holdout=0.3)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x"), status="active"))
    for n in range(60):
        lam.report(lam.recall({"project": "x"}).episode_id, 1.0 if n % 3 else -1.0)
    page = _page(client_of(lam), "/whatif?policies=none,%20holdout:0.3,k:1")
    assert 'class="error"' not in page, page
    assert re.findall(r'data-policy="([^"]+)"', page) == ["none", "holdout:0.3", "k:1"]
    assert 'value="none holdout:0.3 k:1"' in page


def test_the_injection_chart_is_counted_from_the_episode_table_not_the_what_if_fold(
        client_of: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar.cli.charts import injection_bars
    from lamar.whatif import cache

    lam = Lamar(str(tmp_path / "team.db"), seed=3, k=2)
    lam.add(Experience("case", "fix", scope=Scope(project="x"), status="active"))
    for _ in range(40):
        lam.report(lam.recall({"project": "x"}).episode_id, "shipped")
    lam.checkpoint()  # the episode table catches up
    folded = cache.fold_store(lam.store, cache=False)
    want = injection_bars([(folded.times[j], len(folded.slates[s].injected), len(folded.slates[s].held_out))
                           for j, s in enumerate(folded.slate) if folded.alive[j]])
    folds: list[object] = []
    real = cache.fold_store
    monkeypatch.setattr(cache, "fold_store", lambda store, **kw: folds.append(store) or real(store, **kw))
    client = client_of(lam)
    assert _page(client, "/").split("<h2>Injections over time</h2>")[1].startswith(html.unescape(want))
    lam.report(lam.recall({"project": "x"}).episode_id, "shipped")  # counted from the events since
    assert ">episode 41</text>" in _page(client, "/")
    assert folds == []  # the slates' propensities were never decoded


def test_the_episodes_page_decodes_only_the_episodes_it_shows(client_of: Any, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # On a store of thousands of lessons each episode carries a propensity for every eligible lesson.
    lam = Lamar(str(tmp_path / "many.db"), seed=4, k=2)
    for i in range(30):
        lam.add(Experience(f"case {i}", f"fix {i}", scope=Scope(project="x"), status="active"))
    for n in range(300):
        episode = lam.recall({"project": "x"}).episode_id
        if n % 3:
            lam.report(episode, "shipped")
    decoded: list[str] = []
    real = type(lam.store).decoded
    monkeypatch.setattr(type(lam.store), "decoded", lambda self, row: decoded.append(row.kind) or real(self, row))
    page = _page(client_of(lam), "/episodes")
    assert "300 episodes" in page and page.count("<tr class=\"episode") == 100
    assert decoded.count("episode") == 100
