"""The logged episodes as off-policy evaluation reads them: each eligible lesson's inclusion
probability, what was injected, and the outcome, read through any store's public `read`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from lamar._errors import LamarError, advised
from lamar.policy.config import Policy, holdout_lever
from lamar.store.base import Store
from lamar.whatif.cache import fold_store
from lamar.whatif.slate import Slate

# The next step a refusal of the log names, in the command line's words (its `advice`), and what it adds
# where since/scope narrowed the log: the MCP server finds each by these values and says it in its tools' words.
ADVICE = {"report": "(lamar report EPISODE SIGNAL)",
          "recall": "(lamar recall KEY=VALUE ..., or your agent's hooks, then lamar report EPISODE SIGNAL)",
          "add": "(lamar add; `lamar recall --dry-run` shows which are eligible)",
          "eligible": "the episodes since/scope select: widen them to episodes where it was",
          "coin": "and ask again once episodes with a coin are logged"}
WIDEN = {"report": " or widen since/scope", "recall": " or widen since/scope",
         "add": ", or widen since/scope to episodes that had some",
         "coin": ", or widen since/scope to episodes that had some"}


@dataclasses.dataclass(frozen=True)
class LoggedEpisode:
    """One reported episode: its slate and its outcome."""

    id: str
    time: float
    slate: Slate
    reward: float
    success: bool


@dataclasses.dataclass(frozen=True)
class Log:
    """The reported episodes of a selection, oldest first, by columns: episode j logged the
    slate `slates[slate[j]]` (episodes that logged the same slate share one), and got
    `reward[j]`, `success[j]`."""

    slates: list[Slate]
    slate: list[int]
    reward: list[float]
    success: list[bool]
    ids: list[str]
    times: list[float]
    logged: int  # episodes in the selection, reported or not
    randomized: int  # reported episodes with at least one coin (0 < p < 1)
    # What readers derive from the log once and share (the outcome models: `lamar.whatif.model.fitted`).
    derived: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @property
    def episodes(self) -> list[LoggedEpisode]:
        return [LoggedEpisode(self.ids[j], self.times[j], self.slates[self.slate[j]], self.reward[j],
                              self.success[j]) for j in range(len(self.slate))]

    @classmethod
    def of(cls, episodes: Sequence[LoggedEpisode]) -> Log:
        """The columns of `episodes` (all reported, oldest first)."""
        index: dict[tuple[object, ...], int] = {}
        slates: list[Slate] = []
        slate = []
        for episode in episodes:
            key = episode.slate.key
            if key not in index:
                index[key] = len(slates)
                slates.append(episode.slate)
            slate.append(index[key])
        randomized = sum(1 for e in episodes if any(0.0 < v < 1.0 for v in e.slate.p.values()))
        return cls(slates, slate, [e.reward for e in episodes], [e.success for e in episodes],
                   [e.id for e in episodes], [e.time for e in episodes], len(episodes), randomized)


def read_log(store: Store, since: float | None = None, scope: Mapping[str, str] | None = None, *,
             cache: bool = True) -> Log:
    """The store's reported episodes (oldest first), folded by the engine's rules for outcomes.

    A second report counts only as a replacement, an expired episode has no reward, a compacted
    one is gone, a checkpoint's snapshot carries the episodes it kept; the pending policy's
    default outcomes count, as they do for the engine. A file store's fold is kept in a cache
    (see `lamar.whatif.cache`), so a later read folds only the events logged since.

    Args:
        store: any backend.
        since: keep episodes logged at or after this time (seconds since the epoch).
        scope: keep episodes whose context has every one of these key=value pairs.
        cache: use and refresh the cache of a file store.
    """
    folded = fold_store(store, cache=cache)
    alive, times, rewards = folded.alive, folded.times, folded.reward
    fits = folded.context_ok(dict(scope)) if scope else None
    selected = [j for j, live in enumerate(alive) if live and (since is None or times[j] >= since)
                and (fits is None or fits[j])]
    keep = [j for j in selected if rewards[j] is not None]
    used = sorted({folded.slate[j] for j in keep})
    renumber = {old: new for new, old in enumerate(used)}
    slate = [renumber[folded.slate[j]] for j in keep]
    randomized = sum(1 for j in keep if folded.randomized[folded.slate[j]])
    successes = folded.successes()
    reward = [value for value in (rewards[j] for j in keep) if value is not None]  # every one: keep has no None
    return Log([folded.slates[old] for old in used], slate, reward,
               [successes[j] for j in keep], [folded.ids[j] for j in keep], [times[j] for j in keep],
               len(selected), randomized)


def check_log(log: Log, minimum: int, location: str, unselected: Callable[[], Log] | None = None, *,
              holdout: float = Policy().holdout) -> None:
    """Refuse a log that cannot support any counterfactual, naming what is missing.

    `unselected` reads the store's whole log, where since or scope selected `log`, only to word a refusal:
    widening them is advice only where the whole log holds what the selection lacks, and "in this selection"
    only where it left episodes out (a store with no episode at all is said to have none, whatever was selected).
    `holdout`: the rate the store's agents run at, named where no coin was logged.

    Raises:
        LamarError: too few reported episodes, no eligible lesson in any episode, or no episode with
            a coin (0 < p < 1).
    """
    reported = len(log.slate)
    if reported >= minimum and log.randomized > 0:
        return  # nothing to refuse: the whole log is not read
    whole = unselected() if unselected is not None else None
    narrowed = whole is not None and whole.logged > log.logged
    if reported < minimum:
        # Reporting every logged episode would not reach the minimum: more episodes are logged first.
        step, said = ("report", "report more outcomes ") if log.logged >= minimum else (
            "recall", "log more episodes and report them ")
        widen = whole is not None and len(whole.slate) >= minimum
        raise advised(
            LamarError,
            f"store {location} has {reported} reported episode(s){' in this selection' if narrowed else ''} "
            f"({log.logged} logged); a what-if estimate needs at least {minimum}: {said}",
            ADVICE[step] + (WIDEN[step] if widen else ""))
    if log.randomized == 0 and not lessons_in(log.slates):
        # No lesson to flip a coin for: a holdout, whatever its rate, would not have changed that.
        widen = whole is not None and bool(lessons_in(whole.slates))
        raise advised(
            LamarError,
            f"store {location} has {reported} reported episodes but no lesson was eligible in any of "
            "them, so no coin was ever flipped and the log cannot say what another policy would have "
            "done. Add lessons whose scope matches these contexts ", ADVICE["add"] + (WIDEN["add"] if widen else ""))
    if log.randomized == 0:
        # A holdout above zero is not enough: the coins stop where no verdict is within reach, and a
        # compaction or since/scope may have left out the episodes that had them.
        widen = whole is not None and whole.randomized > 0
        said = (f"store {location} has {reported} reported episodes but none with a logged coin "
                "(an inclusion probability strictly between 0 and 1), so they cannot say what another policy "
                "would have done. ")
        if holdout <= 0:
            said += (f"The engine flips a coin only while the holdout is above zero, and this store's "
                     f"holdout={holdout:g}: set it above zero (the default: "
                     f"{holdout_lever(Policy().holdout)}) ")
        else:
            # A user already above zero needs the lever that brings coins back, and its price.
            said += (f"The engine flips a lesson's coin only while its verdict is within reach (docs/decisions.md, "
                     f"\"The evidence coin, and where it is spent\"), which at this store's holdout={holdout:g} "
                     f"a young store's lessons seldom are: a higher holdout ({holdout_lever()}) brings "
                     "verdicts within reach sooner, at the price of a lesson's lift on each episode it is held "
                     "out of (docs/gym.md, \"What a project can expect: volume\"); or keep it ")
        raise advised(LamarError, said, ADVICE["coin"] + (WIDEN["coin"] if widen else ""))


def lessons_in(slates: Iterable[Slate]) -> set[str]:
    """Every lesson eligible in at least one of these slates."""
    out: set[str] = set()
    for slate in slates:
        out.update(slate.p)
    return out
