"""Verdicts of record by e-BH: each lesson's capital is an e-value, and e-BH keeps its promise."""

from __future__ import annotations

import random

from lamar import Lamar, Verdict
from lamar.policy.ebh import e_values, ebh
from lamar.policy.ledger import Ledger
from tests.worlds import add_lessons, play


def test_an_inert_lessons_capital_rarely_reaches_1_over_a_however_often_it_is_read() -> None:
    # Ville's inequality for the e-value read after every randomized episode: P(ever >= 20) <= 1/20.
    reached = 0
    for seed in range(400):
        rng = random.Random(f"ebh-null:{seed}")
        ledger = Ledger()
        for _ in range(600):
            injected = rng.random() < 0.85
            ledger.record(rng.choice((1.0, 0.6)) if rng.random() < 0.4 else rng.choice((-1.0, -0.6, -0.3)),
                          injected, 0.85)
            if e_values(ledger)[0] >= 20.0:
                reached += 1
                break
    assert reached <= 400 / 20


def test_ebh_rejects_the_largest_e_values_that_clear_m_over_alpha_r() -> None:
    assert ebh({"a": 1e6, "b": 1.0}, 0.05) == {"a"}
    assert ebh({f"l{i}": 100.0 for i in range(4)}, 0.05) == {f"l{i}" for i in range(4)}  # 100 >= 4 / (0.05 * 4)
    assert ebh({}, 0.05) == set()


def test_the_verdicts_of_record_find_the_helpful_lesson_and_not_the_inert_ones() -> None:
    lam = Lamar(":memory:", k=2, seed=3, holdout=0.3)
    effects = add_lessons(lam, "t", {"helps": 0.3, "i1": 0.0, "i2": 0.0, "i3": 0.0})
    play(lam, "t", effects, 3000, seed=4)
    record = lam.verdicts_of_record()
    helper = next(iter(effects))
    assert record[helper] is Verdict.HELPS
    assert all(record[i] is Verdict.UNKNOWN for i in effects if i != helper)
