"""How a lesson reads as one sentence, and that the reading never touches what it is stored as."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar


@pytest.mark.parametrize(("parts", "sentence"), [
    (("The Xcode build fails", "clear DerivedData", ""), "When the Xcode build fails, clear DerivedData."),
    (("A lint error", "The formatter fixes it", "It is configured"),
     "When a lint error, the formatter fixes it, because it is configured."),
    (("My tests are flaky.", "Rerun them once!", "Every third run fails"),
     "When my tests are flaky, rerun them once, because every third run fails."),
    (("is the cache stale?", "clear it", "no one knows!"), "When is the cache stale, clear it, because no one knows!"),
    (("the build fails;", "rebuild,", "stale maps:"), "When the build fails, rebuild, because stale maps."),
    # names, acronyms, "I" and a letter that is part of a word keep their capital
    (("Xcode fails", "ask", "CI says so"), "When Xcode fails, ask, because CI says so."),
    (("A/B tests fail", "Python 3.12 breaks it", "I saw it"),
     "When A/B tests fail, Python 3.12 breaks it, because I saw it."),
    (("Anyone reverts", "Thereafter ask", "Themes differ"),
     "When Anyone reverts, Thereafter ask, because Themes differ."),
])
def test_a_lesson_reads_as_one_sentence(parts: tuple[str, str, str], sentence: str) -> None:
    """"When The Xcode build fails" and "rebuild!, because" were shown as written."""
    assert Experience(parts[0], parts[1], rationale=parts[2]).render() == sentence


def test_the_reading_changes_no_id_and_no_duplicate(tmp_path: Path) -> None:
    store = str(tmp_path / "lessons.db")
    lam = Lamar(store, seed=0)
    capital = lam.add(Experience("The build fails", "Rebuild."))
    lower = lam.add(Experience("the build fails", "rebuild"))
    assert capital != lower and lam.get(capital).render() == lam.get(lower).render()
    assert lam.add(Experience("The build fails", "Rebuild.")) == capital  # the same stored texts: the same lesson
    lam.close()
    again = Lamar(store)
    assert (again.get(capital).precondition, again.get(capital).action) == ("The build fails", "Rebuild.")
    assert len(again.experiences()) == 2
