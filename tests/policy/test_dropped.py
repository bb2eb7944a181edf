"""A lesson the selection dropped after its rewards fell: `evidence` says so and since when, and claims no harm."""

from __future__ import annotations

from pathlib import Path

from lamar import Experience, Lamar
from lamar.policy.dropped import DROP_MARGIN
from lamar.policy.history import History
from tests.worlds import turning


def _unchosen(chosen: list[bool]) -> int:
    return len(chosen) - 1 - max(i for i, c in enumerate(chosen) if c)


def test_a_lesson_that_turned_harmful_reads_dropped_with_how_long_it_went_unchosen(tmp_path: Path) -> None:
    with Lamar(str(tmp_path / "s.db"), k=1, seed=3) as lam:
        exp_id = lam.add(Experience("the build fails", "clear the cache", rationale="stale modules survive"))
        chosen = turning(lam, exp_id, 1600, turn=600, seed=11)
        ev = lam.evidence(exp_id)
    assert ev.verdict.value == "unknown" and ev.estimate < -DROP_MARGIN and ev.restarts == 1, ev
    assert ev.dropped and ev.unchosen == _unchosen(chosen) > 100, (ev.unchosen, _unchosen(chosen))
    assert ev.fell_at is not None and ev.chosen_at is not None and ev.fell_at <= ev.chosen_at
    summary = ev.summary()
    assert f"not chosen in the last {ev.unchosen} reported episodes of its scope" in summary, summary
    assert "Harm is not proven" in summary and "its verdict stays unknown" in summary, summary
    # Opened again (from the state saved on close), and folded from the log alone, it reads the same.
    with Lamar(str(tmp_path / "s.db"), k=1, seed=3) as lam:
        again = lam.evidence(exp_id)
        trail = [text for _, text in lam.history(exp_id).trail]
    assert (again.unchosen, again.chosen_at, again.fell_at) == (ev.unchosen, ev.chosen_at, ev.fell_at)
    assert sum("its injected rewards fell" in text for text in trail) == 1, trail


def test_a_lesson_the_selection_keeps_choosing_is_not_dropped(tmp_path: Path) -> None:
    with Lamar(str(tmp_path / "s.db"), k=1, seed=3) as lam:
        exp_id = lam.add(Experience("the build fails", "clear the cache"))
        chosen = turning(lam, exp_id, 400, turn=10_000, seed=11)
        ev = lam.evidence(exp_id)
    assert not ev.dropped and ev.estimate > 0.0 and ev.fell_at is None, ev
    assert ev.unchosen == _unchosen(chosen) < 5 and "dropped" not in ev.summary()


def test_a_state_saved_before_the_last_choice_was_kept_claims_nothing() -> None:
    saved = History().to_dict()
    del saved["chosen"], saved["fell"]
    assert History.from_dict(saved).since_chosen(500) == {}
    assert History().since_chosen(500) == {"unchosen": 500, "chosen_at": None, "fell_at": None}
