"""The row benchmark builds its states in memory and times them (figures are printed, never
asserted)."""

from __future__ import annotations

from lamar.bench.rows import measure, states


def test_states_carry_the_slices_their_contexts_made() -> None:
    one, four = states(1, lessons=2, episodes=60), states(4, lessons=2, episodes=60)
    assert one and four
    assert {len(s.slices.slices) for s in one} == {1}
    assert max(len(s.slices.slices) for s in four) == 4


def test_a_row_is_measured_in_positive_microseconds() -> None:
    row = measure(1, number=5)
    assert row["slices"] == 1 and row["bytes"] > 0
    assert min(row["decode_us"], row["copy_us"], row["encode_us"]) > 0
