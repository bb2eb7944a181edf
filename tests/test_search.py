"""`lamar.search.search` from Python: the lessons holding every word of a text (any case) in their
text, scope or id, after `Lamar.experiences` has filtered by scope and status."""

from __future__ import annotations

import pytest

from lamar import Experience, InvalidArgument, Lamar, Scope
from lamar.search import search


def test_every_word_in_any_case_within_the_scope_and_status_chosen() -> None:
    lam = Lamar(":memory:")
    swift = lam.add(Experience("the Xcode build fails", "clear DerivedData", scope=Scope(project="trace",
                                                                                        language="swift")))
    ci = lam.add(Experience("a test fails only in CI", "compare the CI locale", scope=Scope(project="trace")))
    shop = lam.add(Experience("a migration times out", "run it in batches", scope=Scope(project="shop")))
    lam.retire(ci)

    def found(text: str, **filters: object) -> list[str]:
        return [e.id for e in search(lam.experiences(**filters), text)]  # type: ignore[arg-type]

    assert found("FAILS") == [swift, ci]
    assert found("fails xcode") == [swift]  # every word
    assert found("language=swift") == [swift]  # the scope is searched
    assert found(shop[:10]) == [shop]  # and the id
    assert found("fails", status="active") == [swift]
    assert found("batches", scope={"project": "trace"}) == []


@pytest.mark.parametrize("text", ["", "   ", None, 3, ["fails"]])
def test_no_words_is_an_invalid_argument(text: object) -> None:
    with pytest.raises(InvalidArgument, match="search for some words"):
        search([], text)  # type: ignore[arg-type]
