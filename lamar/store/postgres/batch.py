"""One fold-mode write's fold: the rows it read and its events folded into them, in order, with
the per-kind fold of lamar/policy/fold.py (the in-process fold's)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NamedTuple

from lamar._errors import EventConflict, UnknownEpisode
from lamar.experience import Experience, Status
from lamar.policy import fold
from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState
from lamar.store.base import Event
from lamar.store.postgres.locks import ROWS_LOCK
from lamar.store.postgres.wire import result_parts

SHARDS = 16  # reward-spread counter rows per namespace (a connection adds to one of them)


class FoldInputs(NamedTuple):
    """What a write's first message read (`lamar_fold_inputs`), for its fold."""

    folded: str | None  # the tuning the rows were folded under; None: stale or never built
    episodes: dict[str, str]  # the batch's outcomes' episodes: key -> data
    rows: list[tuple[str, str, int]]  # the rows the batch touches: id, state, version
    shards: list[tuple[Any, Any, Any]]  # the reward-spread counters: n, mean, m2
    active: int  # lessons not retired (the sum of the counter shards')
    inbox: tuple[tuple[int, str, float, str, bool], ...] = ()  # queued outcomes: ticket, key, time, data, key taken
    waiting: bool = False  # the reader's own queued outcome is still in the inbox
    created: int | None = None  # rows in the namespace, retired ones too: read only for a write that adds

    @classmethod
    def of(cls, result: list[tuple[Any, ...]], xid: list[str]) -> FoldInputs:
        """From the function's parts; its first part, the transaction's id if it asked, goes to `xid`."""
        begun, folded, episodes, rows, shards, inbox, waiting = result_parts(result, 7)
        if begun:  # the read began the write's transaction: its id
            xid.append(str(begun[0][2]))
        return cls(folded[0][2] if folded else None, {r[1]: r[2] for r in episodes},
                   [(r[1], r[2], int(r[3])) for r in rows], [r[4:7] for r in shards], sum(int(r[7]) for r in shards),
                   tuple((int(r[3]), r[1], float(r[5]), r[2], bool(r[4])) for r in inbox), bool(waiting))

    @classmethod
    def fetched(cls, cur: Any, xid: list[str], adds: bool) -> FoldInputs:
        """From a read's results, past its BEGIN (and an add's lock): the function's, then an add's
        count of the namespace's rows (`created`)."""
        for _ in range(1 + adds):
            cur.nextset()
        read = cls.of(cur.fetchall(), xid)
        if adds:
            cur.nextset()
            read = read._replace(created=int(cur.fetchone()[0]))
        return read


class Batch:
    """The rows one write read, and the events of the write folded into them in order."""

    def __init__(self, policy: Policy, rows: list[LessonState], read: FoldInputs, strict: bool,
                 location: str) -> None:
        self.policy, self.strict, self.location = policy, strict, location
        self.episodes = {key: json.loads(data) for key, data in read.episodes.items()}
        self.states = {state.experience.id: state for state in rows}
        self.n, self.mean, self.m2 = merge_shards(read.shards)
        self.active = read.active
        self.created = read.created
        self.touched: dict[str, LessonState] = {}
        self.added: dict[str, LessonState] = {}
        self.rewards: tuple[int, float, float] = (0, 0.0, 0.0)  # this write's, for its shard
        self.stale = False

    def fold(self, event: Event) -> Event:
        data, states = event.data, self.states
        if event.kind == "experience":
            exp = Experience.from_dict(data)
            if exp.id in states:
                raise EventConflict(f"experience {exp.id!r} is already in {self.location}")
            if self.created is None:
                raise ValueError("an added lesson's creation rank needs the count of the namespace's rows")
            # Its creation rank as the log's fold gives it: lessons are retired, never removed.
            self.created += 1
            states[exp.id] = self.added[exp.id] = LessonState(exp, rank=self.created)
            self.active += exp.status is not Status.RETIRED
        elif event.kind == "status" and data["id"] in states:
            state = states[data["id"]]
            was = state.experience.status is not Status.RETIRED
            fold.set_status(state, Status(data["status"]))
            self.active += (state.experience.status is not Status.RETIRED) - was
            self.touched[data["id"]] = state
        elif event.kind == "scope" and data["id"] in states:
            if fold.narrow(states[data["id"]], data["key"], data["value"], data.get("continued")):
                self.touched[data["id"]] = states[data["id"]]
        elif event.kind == "edit" and data["id"] in states:
            if fold.edit(states[data["id"]], data) is not None:
                self.touched[data["id"]] = states[data["id"]]
        elif event.kind == "merge":
            into = states.get(data["into"])
            others = [states.get(i) for i in data["from"]]
            active = {id(s) for s in others if s is not None and s.experience.status is not Status.RETIRED}
            retired = fold.merge(into, others, data["from"])
            self.active -= sum(id(s) in active for s in retired)  # one retired already is not counted twice
            self.touched.update((s.experience.id, s) for s in [*retired, *([into] if into else [])])
        elif event.kind == "erase" and data["id"] in states:
            state = states[data["id"]]
            was = state.experience.status is not Status.RETIRED
            fold.erase(state, str(data["by"]), event.time)
            self.active -= was
            self.touched[data["id"]] = state
        elif event.kind == "outcome" and not data.get("expired"):
            return self._outcome(event)
        return event

    def _outcome(self, event: Event) -> Event:
        data = event.data
        episode = self.episodes.get(f"episode:{data['episode']}")
        if data.get("replace") or episode is None:
            if self.strict and episode is None:
                raise UnknownEpisode(f"no episode {data['episode']!r} is found by its key")
            self.stale = True  # a replacement unfolds an outcome: the rows are built again from the log
            return event
        reward = float(data["reward"])
        self.n, self.mean, self.m2 = fold.welford(self.n, self.mean, self.m2, reward)
        self.rewards = fold.welford(*self.rewards, reward)
        sigma = fold.spread(self.n, self.m2)
        for state in fold.fold_outcome(self.states.get, episode["eligible"], episode["injected"], episode["p"],
                                       episode["context"], reward, sigma, self.policy, self.active):
            self.touched[state.experience.id] = state
        return Event(kind="outcome", data={**data, "fold": {"sigma": sigma, "active": self.active}},
                     key=event.key, time=event.time)


def merge_shards(shards: Iterable[tuple[Any, Any, Any]]) -> tuple[int, float, float]:
    """(n, mean, m2) of the union of sharded Welford counters (Chan et al.'s parallel formula)."""
    n, mean, m2 = 0, 0.0, 0.0
    for count, shard_mean, shard_m2 in shards:
        count = int(count)
        if count <= 0:
            continue
        total = n + count
        delta = float(shard_mean) - mean
        mean += delta * count / total
        m2 += float(shard_m2) + delta * delta * n * count / total
        n = total
    return n, mean, m2


def named(event: Event) -> list[str]:
    """The lessons an event names directly (an outcome's come from its episode, in SQL)."""
    data = event.data
    if event.kind in ("status", "scope", "erase", "edit"):
        return [str(data.get("id"))]
    if event.kind == "merge":
        return [str(data.get("into")), *map(str, data.get("from", ()))]
    if event.kind == "experience":
        return [str(data.get("id"))]
    return []


def empty_write(namespace: str) -> dict[str, Any]:
    """The parameters of a `lamar_write` call that writes nothing (a write fills in what it sends)."""
    return {"ns": namespace, "lock": ROWS_LOCK, "stale": False, "r_n": 0, "r_mean": 0.0, "r_m2": 0.0, "active": 0,
            "shards": SHARDS, "updated": "[]", "added": "[]", "expected": None, "n_expected": 0, "absent": [],
            "folded": None, "done": [], "queue": False, "tickets": []}


__all__ = ["SHARDS", "Batch", "FoldInputs", "empty_write", "merge_shards", "named"]
