"""`lamar ui` refuses a scope or context that gives one key twice (`team=a team=b`): keeping either
value would store, or match, a scope the user did not write."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, InvalidArgument, Lamar, Scope

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get, serving


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(team="a")))
    with serving(path) as url:
        yield url, path


def _lessons(path: Path) -> list[tuple[str, dict[str, str]]]:
    with Lamar(str(path)) as lam:
        return [(e.action, dict(e.scope)) for e in lam.experiences()]


@pytest.mark.parametrize("path, data", [
    ("/add", {"precondition": "a test flakes", "action": "rerun it once", "scope": "team=a, team=b",
              "confirm": "yes"}),
    ("/add", {"precondition": "a test flakes", "action": "rerun it once", "scope": "team=a team=b"}),
    ("/add/many", {"lessons": "- When a test flakes, rerun it once\n", "scope": "team=a team=b", "confirm": "yes"}),
])
def test_a_scope_key_given_twice_is_refused_by_name_and_adds_nothing(server: tuple[str, Path], path: str,
                                                                     data: dict[str, str]) -> None:
    url, store = server
    before = _lessons(store)
    page = html.unescape(_get(url, path, data))
    assert 'class="error"' in page and "scope gives 'team' twice" in page, page[-600:]
    assert _lessons(store) == before


def test_a_context_or_filter_key_given_twice_is_refused_by_name(server: tuple[str, Path]) -> None:
    url, _ = server
    page = html.unescape(_get(url, "/recall?context=team%3Da+team%3Db"))
    assert "context gives 'team' twice (team=a and team=b): keep the one you mean" in page
    page = html.unescape(_get(url, "/?scope=team%3Db+team%3Da"))
    assert "scope gives 'team' twice" in page and "clear the cache" not in page


def test_the_app_and_the_command_refuse_a_key_given_two_values_alike() -> None:
    # They used to differ: UsageError and "('a' and 'b'): give each key once" on the command line,
    # InvalidArgument and "(team=a and team=b): keep the one you mean" in the app, which also
    # refused the same value given twice.
    from lamar.cli.observe import parse_pairs
    from lamar_ui.forms import pairs

    with pytest.raises(InvalidArgument) as app:
        pairs("team=a team=b")
    with pytest.raises(InvalidArgument) as command:
        parse_pairs(["team=a", "team=b"], "scope")
    assert str(app.value) == str(command.value) == "scope gives 'team' twice (team=a and team=b): keep the one you mean"
    assert pairs("team=a team=a") == parse_pairs(["team=a", "team=a"], "scope") == {"team": "a"}
