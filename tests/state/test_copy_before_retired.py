"""A copy of a lesson stored by a worker that added it at the same moment as another, in the instant
before its adder retires it: a recall then chooses from one of them, never from both."""

from __future__ import annotations

from lamar import Experience, Lamar, Scope, Signal

CONTEXT = {"project": "trace"}


def _with_copy(location: str) -> tuple[Lamar, str, str]:
    lam = Lamar(location, k=3, seed=1)
    first = lam.add(Experience("the build fails", "clear the cache", scope=Scope(CONTEXT)))
    # What a racing adder has stored before it sees the first and retires its own (tests/state/test_concurrent_add.py):
    # the same texts and scope under another id. A given id stores it as is, as that add did.
    copy = lam.add(Experience("the build fails", "clear the cache", scope=Scope(CONTEXT), id="exp_copy_in_flight"))
    lam.add(Experience("the build fails", "rebuild", scope=Scope(CONTEXT)))
    return lam, first, copy


def test_a_recall_injects_the_first_of_two_copies_never_both(store_location: str) -> None:
    lam, first, copy = _with_copy(store_location)
    for _ in range(20):
        rec = lam.recall(CONTEXT)
        assert copy not in rec.ids
        assert rec.as_prompt().count("clear the cache") <= 1
        lam.report(rec.episode_id, Signal.SHIPPED)
    assert lam.evidence(copy).randomized == 0 and lam.evidence(first).randomized > 0
    preview = lam.preview(CONTEXT)
    assert copy not in preview.eligible
    lam.close()


def test_a_lesson_alone_in_its_texts_is_chosen_as_before(store_location: str) -> None:
    lam = Lamar(store_location, k=3, seed=1)
    ids = [lam.add(Experience("the build fails", action, scope=Scope(CONTEXT))) for action in ("a", "b", "c")]
    assert sorted(lam.recall(CONTEXT).ids) == sorted(ids)
    lam.close()
