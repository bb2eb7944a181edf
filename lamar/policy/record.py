"""`SlotRecord`: the plain-number state records of the policy, saved, restored and summed field by field."""

from __future__ import annotations

from typing import Any, Self


class SlotRecord:
    """A base for records whose `__slots__` are all numbers (counts and sums)."""

    __slots__: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """The inverse of `to_dict` (a checkpoint restores the state exactly)."""
        state = cls.__new__(cls)  # every slot is set below: __init__'s defaults would be overwritten
        for name in cls.__slots__:
            setattr(state, name, data[name])
        return state

    def copy(self) -> Self:
        """An independent copy: every slot holds a number, so copying the slots copies all."""
        state = self.__class__.__new__(self.__class__)
        for name in self.__slots__:
            setattr(state, name, getattr(self, name))
        return state

    def merge(self, other: Self) -> None:
        """Add another record's counts and sums to this one, field by field."""
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))
