"""The alternative policies a log can be asked about (docs/whatif.md, A5)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Protocol

from lamar._errors import InvalidArgument, echoed
from lamar.arguments import MAX_SLOTS
from lamar.typed import typed_number, typed_whole
from lamar.whatif.log import Log, lessons_in
from lamar.whatif.model import fold_lifts
from lamar.whatif.slate import Slate


class Alternative(Protocol):
    """A policy to evaluate, a product over an episode's eligible lessons: `changes(slate, fold)`
    gives the inclusion probability of every lesson it treats differently from the log. A lesson
    the logged policy wanted has p > 0 (1 - its coin); one it did not want has p = 0. `changes`
    must depend only on what was known before the episode's outcome (its logged probabilities,
    and beliefs fixed before the evaluation)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def changes(self, episode: Slate, fold: int = 0) -> Mapping[str, float]:
        """Inclusion probabilities that differ from the slate's logged ones; every other lesson keeps
        its p. `fold` is the episode's fold (an alternative ranked on the other folds uses it)."""
        ...


@dataclasses.dataclass(frozen=True)
class Beliefs:
    """What Lamar believes today, fixed before the evaluation: each active lesson's lift and
    whether it is proven to help, the coins (undecided and decided) and the slots per recall."""

    lift: Mapping[str, float]
    proven: frozenset[str]
    k: int
    holdout: float
    holdout_decided: float

    def ranked(self, ids: list[str]) -> list[str]:
        """`ids` highest lift first (unknown lessons last), ties by id so the order is fixed."""
        return ranked(ids, self.lift)


def ranked(ids: list[str], lift: Mapping[str, float]) -> list[str]:
    """`ids` highest `lift` first (lessons without one last), ties by id so the order is fixed."""
    return sorted(ids, key=lambda i: (-lift.get(i, float("-inf")), i))


@dataclasses.dataclass(frozen=True)
class Logged:
    name: str = "logged"
    description: str = "what the logged policy did"

    def changes(self, episode: Slate, fold: int = 0) -> Mapping[str, float]:
        return {}


@dataclasses.dataclass(frozen=True)
class NoMemory:
    name: str = "none"
    description: str = "no memory: inject nothing"

    def changes(self, episode: Slate, fold: int = 0) -> Mapping[str, float]:
        return {i: 0.0 for i, p in episode.p.items() if p > 0.0}


@dataclasses.dataclass(frozen=True)
class Without:
    lesson: str

    @property
    def name(self) -> str:
        return f"without:{self.lesson}"

    @property
    def description(self) -> str:
        return f"the logged policy, lesson {self.lesson} never injected (its slot left empty)"

    def changes(self, episode: Slate, fold: int = 0) -> Mapping[str, float]:
        return {self.lesson: 0.0} if episode.p.get(self.lesson, 0.0) > 0.0 else {}


@dataclasses.dataclass(frozen=True)
class Holdout:
    rate: float

    @property
    def name(self) -> str:
        rate = self.rate + 0.0  # -0.0 is the rate 0, and is named as "holdout:0" is
        short = f"{rate:g}"  # the rate as asked, unless six digits would round it (to 1, say)
        return f"holdout:{short if float(short) == rate else repr(rate)}"

    @property
    def description(self) -> str:
        # The rate's own digits as a percent: a whole percent would call 0.001 no holdout at all.
        percent = format((Decimal(repr(self.rate + 0.0)) * 100).normalize(), "f")
        return f"the logged policy, every wanted lesson held out at {percent}%"

    def changes(self, episode: Slate, fold: int = 0) -> Mapping[str, float]:
        keep = 1.0 - self.rate
        return {i: keep for i, p in episode.p.items() if p > 0.0 and p != keep}


@dataclasses.dataclass(frozen=True)
class Slots:
    """k slots. Below the logged k, the wanted lessons ranked first keep their coins (the log does
    not record the logged ranking): by `lifts[fold]`, each lesson's lift measured on the other
    folds, when given (so no episode's own outcome picks what the alternative drops there), else
    by today's lift. Above the logged k, an episode whose slots were all taken while a lesson
    sat at p = 0 would have injected a lesson the log never tried."""

    k: int
    beliefs: Beliefs
    lifts: tuple[Mapping[str, float], ...] = ()

    @property
    def name(self) -> str:
        return self.named(self.k)

    @staticmethod
    def named(k: int) -> str:
        """The name of the alternative with `k` slots, known before any beliefs are read."""
        return f"k:{k}"

    @property
    def description(self) -> str:
        return f"{self.k} slot{'' if self.k == 1 else 's'} per recall instead of {self.beliefs.k}"

    def changes(self, episode: Slate, fold: int = 0) -> Mapping[str, float]:
        p = episode.p
        if self.k >= self.beliefs.k:
            if self.k == self.beliefs.k or episode.slots_used < self.beliefs.k:
                return {}  # the selector wanted fewer than k: more slots change nothing
            spare = [i for i, v in p.items() if v == 0.0 and i not in episode.held_out]
            extra = self.beliefs.ranked(spare)[: self.k - self.beliefs.k]
            return {i: 1.0 - self.beliefs.holdout for i in extra}
        certain = [i for i, v in p.items() if v == 1.0]
        lift = self.lifts[fold] if self.lifts else self.beliefs.lift
        coins = ranked([i for i, v in p.items() if 0.0 < v < 1.0], lift)
        room = max(0, self.k - len(certain))
        dropped = {i: 0.0 for i in coins[room:]}
        dropped.update({i: 0.0 for i in certain[self.k:]})  # a certain lesson beyond k: outside
        return dropped


@dataclasses.dataclass(frozen=True)
class Proven:
    beliefs: Beliefs
    name: str = "proven"
    description: str = "only lessons proven to help today, at a decided lesson's coin"

    def changes(self, episode: Slate, fold: int = 0) -> Mapping[str, float]:
        beliefs = self.beliefs
        chosen = beliefs.ranked([i for i in episode.p if i in beliefs.proven])[: beliefs.k]
        return _replace(episode, {i: 1.0 - beliefs.holdout_decided for i in chosen})


@dataclasses.dataclass(frozen=True)
class Today:
    beliefs: Beliefs
    name: str = "today"
    description: str = "today's beliefs from the start: lessons with a positive lift, each at its coin today"

    def changes(self, episode: Slate, fold: int = 0) -> Mapping[str, float]:
        beliefs = self.beliefs
        positive = [i for i in episode.p if beliefs.lift.get(i, 0.0) > 0.0]
        chosen = beliefs.ranked(positive)[: beliefs.k]
        return _replace(episode, {i: 1.0 - (beliefs.holdout_decided if i in beliefs.proven else beliefs.holdout)
                                  for i in chosen})


def _replace(episode: Slate, chosen: dict[str, float]) -> dict[str, float]:
    """The changes that make an episode inject `chosen` (at those probabilities) and nothing else."""
    out = {i: 0.0 for i, p in episode.p.items() if p > 0.0 and i not in chosen}
    out.update({i: q for i, q in chosen.items() if episode.p[i] != q})
    return out


STANDARD = ("logged", "none", "proven", "today", "holdout:0", "k:1")
# `proven`'s description when no lesson eligible in the log is proven: its row would otherwise
# repeat `none`'s figures without a word on why.
NOTHING_PROVEN = "no lesson eligible in these episodes is proven to help today, so it injects nothing: the same as none"
_PLAIN = frozenset(kind.name for kind in (Logged, NoMemory, Proven, Today))  # their dataclass defaults


def form(spec: str) -> tuple[str, str]:
    """A spec's name and argument, checked for form alone: a typo is named before the log is read.

    Raises:
        InvalidArgument: an unknown name, a rate outside [0, 1), a k outside 1..MAX_SLOTS or not in digits.
    """
    several = _several(spec)  # before `k:1,none` is read as k of `1,none`
    if several:
        raise InvalidArgument(f"unknown policy {echoed(spec)}{several}")
    head, _, arg = spec.strip().partition(":")
    head = head.lower()
    if head in ("logged", "none", "proven", "today") and not arg:
        return head, ""
    if head == "without" and arg:
        return head, arg
    if head == "holdout" and arg:
        if not 0.0 <= _number(spec, arg) < 1.0:
            raise InvalidArgument(f"policy {echoed(spec)}: a holdout rate is in [0, 1)")
        return head, arg
    if head == "k" and arg:
        _slots(spec, arg)
        return head, arg
    raise InvalidArgument(f"unknown policy {echoed(spec)}{_close(head, arg)}; use logged, none, "
                          "proven, today, without:ID, holdout:Q (0 <= Q < 1) or k:K")


_HEADS = frozenset(("logged", "none", "proven", "today", "without", "holdout", "k"))


def _several(spec: str) -> str:
    """" (one policy per name: give 'none' and 'k:1' ...)" for a comma-separated list whose parts are each a
    name: the list of forms, itself separated by commas, would not say why it was refused."""
    parts = [part.strip() for part in spec.split(",")]
    if len(parts) < 2 or not all(parts):
        return ""
    for part in parts:
        try:
            form(part)
        except InvalidArgument:
            return ""
    return (f" (one policy per name: give {' and '.join(map(echoed, parts))} one by one, as a list in Python or "
            f"--policy {' --policy '.join(parts)} on the command line)")


def _close(head: str, arg: str) -> str:
    """" (did you mean 'holdout:0.1'?)" for a misspelt name (`holdot:0.1`), as a mistyped command or option is
    answered; a right name used wrongly (`none:1`, `k`) is left to the list of forms."""
    import difflib

    names = ("without", "holdout", "k") if arg else ("logged", "none", "proven", "today")
    if head in _HEADS:
        return ""
    close = difflib.get_close_matches(head, names, n=1, cutoff=0.6)
    return f" (did you mean {echoed(close[0] + (':' + arg.strip() if arg else ''))}?)" if close else ""


def name_of(spec: str) -> str:
    """The name of the row a spec gives: the spec as it can be asked for again (` K:1 ` is `k:1`).

    Raises:
        InvalidArgument: as `form`.
    """
    head, arg = form(spec)
    if head == "holdout":
        return Holdout(_number(spec, arg)).name
    if head == "k":
        return Slots.named(_slots(spec, arg))
    if head == "without":
        return Without(arg).name
    return head  # a policy without an argument is named by its class's default name


def parse(spec: str, beliefs: Beliefs, log: Log) -> Alternative:
    """The alternative a spec names: logged, none, proven, today, without:ID, holdout:Q, k:K
    (fewer slots rank the wanted lessons on the log's other folds: `fold_lifts`).

    Raises:
        InvalidArgument: as `form`, and a lesson no episode of the log had eligible.
    """
    head, arg = form(spec)
    if head == "logged":
        return Logged()
    if head == "none":
        return NoMemory()
    if head == "proven":
        if not beliefs.proven & lessons_in(log.slates):
            return Proven(beliefs, description=NOTHING_PROVEN)
        return Proven(beliefs)
    if head == "today":
        return Today(beliefs)
    if head == "without":
        if arg not in lessons_in(log.slates):
            raise InvalidArgument(f"policy {echoed(spec)}: no lesson {echoed(arg)} was eligible in these episodes "
                                  "(see `lamar ls` for ids)")
        return Without(arg)
    if head == "holdout":
        return Holdout(_number(spec, arg))
    slots = _slots(spec, arg)
    return Slots(slots, beliefs, fold_lifts(log) if slots < beliefs.k else ())


def _number(spec: str, text: str) -> float:
    value = typed_number(text)  # float() also reads `0_5` as 5.0 and other scripts' digits as ours
    if value is None:
        raise InvalidArgument(f"policy {echoed(spec)}: {echoed(text)} is not a number written in ASCII digits "
                              "(such as holdout:0.05)")
    if not math.isfinite(value):
        raise InvalidArgument(f"policy {echoed(spec)}: {echoed(text)} is not a finite number")
    return value


def _slots(spec: str, text: str) -> int:
    """k as typed: ASCII digits alone, so that no other spelling (`1e99`, `3.0`, `1_0`) passes for
    a whole number; the engine's own `k` is an int, never read from text."""
    value = typed_whole(text)
    if value is None or not 1 <= value <= MAX_SLOTS:
        raise InvalidArgument(f"policy {echoed(spec)}: k is a whole number from 1 to {MAX_SLOTS:,} written in digits "
                              f"(such as k:2); got {echoed(text)}")
    return value
