"""Harm must be provable: exposure rounds keep a suspected-harmful lesson randomized, at a logged
cost, and a harms verdict stays revisable through re-test rounds."""

from __future__ import annotations

from lamar import Lamar, Verdict
from tests.worlds import add_lessons, play


def test_an_exposure_round_injects_one_candidate_on_a_fair_coin_and_vacates_a_slot() -> None:
    lam = Lamar(":memory:", k=1, seed=3, harm_exposure=0.3)  # the documented price of proving harm
    lessons = add_lessons(lam, "t", {"good": 0.3, "bad": -0.3})
    good, bad = lessons
    play(lam, "t", lessons, 1500, seed=4)
    rounds = injected = 0
    for _ in range(600):
        rec = lam.recall({"task": "t"})
        assert len(rec.ids) <= 1
        if rec.propensities[bad] == 0.5:  # a round for the suspected-harmful lesson
            rounds += 1
            injected += bad in rec.ids
            # the wanted lesson's slot was vacated before the coin: no evidence for it here
            assert rec.propensities[good] == 0.0 and good not in rec.ids
        lam.report(rec.episode_id, 0.0)
    # rounds at harm_exposure (0.3) while "bad" is unjudged, or harm_retest (0.02) once judged
    assert 6 <= rounds <= 260
    assert abs(injected - rounds / 2) <= 3 * (rounds / 4) ** 0.5 + 1


def test_a_harmful_lesson_is_proven_harmful_by_exposure_and_sleep_proposes_retiring_it() -> None:
    lam = Lamar(":memory:", k=1, seed=5, harm_exposure=0.3)  # the documented price of proving harm
    lessons = add_lessons(lam, "t", {"good": 0.2, "bad": -0.2, "inert": 0.0})
    bad = list(lessons)[1]
    play(lam, "t", lessons, 5000, seed=6)
    ev = lam.evidence(bad)
    assert ev.verdict is Verdict.HARMS and ev.upper < 0
    # its exposure was bounded: it was injected in well under a fifth of the episodes
    assert ev.injected < 0.2 * ev.eligible
    assert any(bad in p.experience_ids and p.kind == "retire" for p in lam.sleep().proposals)


def test_harms_stays_revisable_a_judged_lesson_is_still_retested() -> None:
    lam = Lamar(":memory:", k=1, seed=5, harm_exposure=0.3)  # the documented price of proving harm
    lessons = add_lessons(lam, "t", {"good": 0.2, "bad": -0.2, "inert": 0.0})
    bad = list(lessons)[1]
    play(lam, "t", lessons, 5000, seed=6)
    assert lam.evidence(bad).verdict is Verdict.HARMS
    before = lam.evidence(bad).randomized
    play(lam, "t", lessons, 2000, seed=7, start=5000)
    assert lam.evidence(bad).randomized > before  # re-test rounds keep measuring it
