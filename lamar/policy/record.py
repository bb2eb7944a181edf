"""`SlotRecord`: the plain-number state records of the policy, saved, restored and summed field by field."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Self


class SlotRecord:
    """A base for records whose `__slots__` are all numbers (counts and sums)."""

    __slots__: tuple[str, ...] = ()
    # Every slot's value, in slot order (`Cls.values(record)`), and the inverse
    # (`record.assign(values)`); made once per class.
    values: ClassVar[Callable[[Any], tuple[Any, ...]]]
    assign: Callable[[Sequence[Any]], None]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        slots = cls.__dict__.get("__slots__", ())
        if len(slots) < 2:
            raise TypeError(f"{cls.__name__}: a SlotRecord has two slots or more")
        cls.values = operator.attrgetter(*slots)
        # One statement that unpacks a tuple into every slot, generated from the slot names as
        # dataclasses generates __init__: a fold copies, and a row's decode fills, about a dozen
        # records per lesson, and one unpacking statement costs far less than a setattr per slot. The
        # text compiled holds nothing but the class's own slot names, checked as identifiers.
        if not all(name.isidentifier() for name in slots):
            raise TypeError(f"{cls.__name__}: a slot name is not an identifier")
        code: dict[str, Any] = {}
        exec(f"def assign(self, values):\n    {', '.join(f'self.{name}' for name in slots)}, = values\n", code)  # noqa: S102
        cls.assign = code["assign"]

    @classmethod
    def filled(cls, values: Sequence[Any]) -> Self:
        """A record holding `values`, one per slot in slot order."""
        state = cls.__new__(cls)
        state.assign(values)
        return state

    def to_dict(self) -> dict[str, Any]:
        return dict(zip(self.__slots__, type(self).values(self), strict=True))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """The inverse of `to_dict` (a checkpoint restores the state exactly)."""
        return cls.filled([data[name] for name in cls.__slots__])

    def copy(self) -> Self:
        """An independent copy: every slot holds a number, so copying the slots copies all."""
        return self.filled(type(self).values(self))

    def merge(self, other: Self) -> None:
        """Add another record's counts and sums to this one, field by field."""
        pairs = zip(type(self).values(self), type(other).values(other), strict=True)
        self.assign([mine + theirs for mine, theirs in pairs])
