"""The logged episodes as off-policy evaluation reads them: each eligible lesson's inclusion
probability, what was injected, and the outcome, read from any store's public `read`."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from lamar._errors import LamarError
from lamar.checkpoint import _EPISODE_FIELDS  # the order of a snapshot's episode rows
from lamar.store.base import Event, Store

SUCCESS_SIGNALS = frozenset({"shipped", "accepted"})


@dataclasses.dataclass(frozen=True)
class LoggedEpisode:
    """One reported episode. `p` holds every eligible lesson's inclusion probability (a lesson
    not in `p` was not eligible); `held_out` the lessons wanted and left out (by their coin, or
    vacated by an exposure round, then with p = 0)."""

    id: str
    time: float
    context: Mapping[str, str]
    p: Mapping[str, float]
    injected: frozenset[str]
    held_out: frozenset[str]
    reward: float
    success: bool

    @property
    def slots_used(self) -> int:
        """Slots the logged policy filled or left empty on purpose: its wanted lessons (an exposure
        round's candidate, at p = 0.5, takes a free slot or a vacated one, never one of its own)."""
        return len(self.held_out) + sum(1 for i in self.injected if self.p.get(i, 0.0) != 0.5)


@dataclasses.dataclass(frozen=True)
class Log:
    """What `read_log` found: the reported episodes kept, and how many episodes it read."""

    episodes: list[LoggedEpisode]
    logged: int  # episodes in the store (after `since` and `scope`), reported or not
    randomized: int  # reported episodes with at least one coin (0 < p < 1)


def read_log(store: Store, since: float | None = None, scope: Mapping[str, str] | None = None) -> Log:
    """Fold the store's episode and outcome events into the reported episodes, oldest first.

    Follows the engine's rules for outcomes: a second report counts only as a replacement, an
    expired episode has no reward, a compacted episode is gone, a checkpoint's snapshot carries
    the episodes it kept. Default outcomes of the pending policy count, as they do for the engine.

    Args:
        store: any backend.
        since: keep episodes logged at or after this time (seconds since the epoch).
        scope: keep episodes whose context has every one of these key=value pairs.
    """
    raw: dict[str, list[Any]] = {}  # id -> [data, time, reward, signal, sealed]
    for event in store.read(0):
        _fold(raw, event)
    wanted = dict(scope or {})
    episodes: list[LoggedEpisode] = []
    logged = randomized = 0
    for data, when, reward, signal, _ in raw.values():
        context = data["context"]
        if since is not None and when < since:
            continue
        if wanted and any(context.get(key) != value for key, value in wanted.items()):
            continue
        logged += 1
        if reward is None:
            continue
        p = {str(i): float(v) for i, v in data["p"].items()}
        if any(0.0 < v < 1.0 for v in p.values()):
            randomized += 1
        success = signal in SUCCESS_SIGNALS if signal is not None else reward > 0.0
        episodes.append(LoggedEpisode(data["id"], when, context, p, frozenset(data["injected"]),
                                      frozenset(data["held_out"]), float(reward), success))
    return Log(episodes, logged, randomized)


def _fold(raw: dict[str, list[Any]], event: Event) -> None:
    kind, data = event.kind, event.data
    if kind == "episode":
        raw[data["id"]] = [data, event.time, None, None, False]
    elif kind == "outcome":
        row = raw.get(data["episode"])
        if row is None:
            return  # an outcome of a compacted episode
        if row[4] and data.get("replace"):
            return  # a checkpoint sealed this outcome: the engine refuses its replacement too
        if data.get("expired"):
            row[2] = row[3] = None
        else:
            row[2], row[3] = float(data["reward"]), data.get("signal")
    elif kind == "compact":
        for episode_id in data["episodes"]:
            raw.pop(episode_id, None)
    elif kind == "snapshot":
        raw.clear()
        for values in data["episodes"]:
            fields = dict(zip(_EPISODE_FIELDS, values, strict=True))
            raw[fields["id"]] = [fields, fields["time"], fields["reward"], fields["signal"], True]


def check_log(log: Log, minimum: int, location: str) -> None:
    """Refuse a log that cannot support any counterfactual, naming what is missing.

    Raises:
        LamarError: too few reported episodes, or no episode with a coin (0 < p < 1).
    """
    reported = len(log.episodes)
    if reported < minimum:
        raise LamarError(
            f"store {location} has {reported} reported episode(s) in this selection "
            f"({log.logged} logged); a what-if estimate needs at least {minimum}: report more outcomes "
            "(lamar report EPISODE SIGNAL) or widen since/scope")
    if log.randomized == 0:
        raise LamarError(
            f"store {location} has {reported} reported episodes but none with a logged coin "
            "(an inclusion probability strictly between 0 and 1): the log never randomized, so it "
            "cannot say what another policy would have done. Keep a holdout above zero "
            "(the default holdout=0.15) and ask again once episodes are logged")


def lessons_in(episodes: Iterable[LoggedEpisode]) -> set[str]:
    """Every lesson eligible in at least one of these episodes."""
    out: set[str] = set()
    for episode in episodes:
        out.update(episode.p)
    return out
