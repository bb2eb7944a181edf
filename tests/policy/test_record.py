"""SlotRecord: the per-class slot reader and writer behind copies, merges and row decodes."""

from __future__ import annotations

import pytest

from lamar.policy.change import ChangeDetector
from lamar.policy.ledger import Ledger
from lamar.policy.record import SlotRecord
from lamar.policy.selection import ArmStats


@pytest.mark.parametrize("cls", [ArmStats, Ledger, ChangeDetector])
def test_values_assign_copy_and_merge_cover_every_slot(cls: type[SlotRecord]) -> None:
    numbers = [float(i) + 0.5 for i in range(len(cls.__slots__))]
    record = cls.filled(numbers)
    assert list(cls.values(record)) == numbers
    assert record.to_dict() == dict(zip(cls.__slots__, numbers, strict=True))
    assert cls.from_dict(record.to_dict()).to_dict() == record.to_dict()
    twin = record.copy()
    assert twin is not record and twin.to_dict() == record.to_dict()
    twin.merge(record)
    assert list(cls.values(twin)) == [2 * n for n in numbers]
    assert list(cls.values(record)) == numbers  # the copy was independent


def test_assign_refuses_a_wrong_count_and_changes_nothing() -> None:
    record = Ledger()
    before = record.to_dict()
    with pytest.raises(ValueError):
        record.assign([1.0] * (len(Ledger.__slots__) + 1))
    with pytest.raises(ValueError):
        record.assign([1.0] * (len(Ledger.__slots__) - 1))
    assert record.to_dict() == before


def test_a_record_class_needs_two_slots_or_more() -> None:
    with pytest.raises(TypeError, match="two slots or more"):
        type("One", (SlotRecord,), {"__slots__": ("n",)})


def test_a_detector_saved_before_its_second_statistic_loads_with_that_statistic_at_rest() -> None:
    record = ChangeDetector.filled([float(i) + 0.5 for i in range(len(ChangeDetector.__slots__))])
    saved = {name: value for name, value in record.to_dict().items() if not name.startswith("slow")}
    back = ChangeDetector.from_dict(saved)
    assert {name: getattr(back, name) for name in saved} == saved
    assert [getattr(back, name) for name in ChangeDetector.__slots__ if name.startswith("slow")] == [0.0] * 5
    assert ChangeDetector.from_dict({"other": 1.0}).to_dict() == ChangeDetector().to_dict()
