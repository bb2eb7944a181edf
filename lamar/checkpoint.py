"""Checkpoints: the engine's cache as the data of one `snapshot` event, and back.

A snapshot restores the state exactly (lessons with their selection model, ledger and
change detector, episodes, counters, reward spread), so folding a snapshot and the events
after it gives the same evidence and the same decisions as folding the whole log.

The same data, without the episodes a store can look up by key, is also the engine's
persisted *state* (`state_text`, `read_state`): saved beside the log, never in it, so a fresh
process folds only the tail (see `Lamar._resume`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import zlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from lamar.policy.lesson import LessonState
from lamar.state.episode import EpisodeRecord

if TYPE_CHECKING:
    from lamar.engine import Lamar
    from lamar.store.base import Event

FORMAT = 1
# Version of a lesson's saved state (LessonState.to_dict), bumped whenever that changes, so a
# persisted copy of the folded state made by an older Lamar is rebuilt from the events instead of
# trusted. 2 added the context slices (policy/features.py); a version-1 lesson restores with no
# slices, which then relearn. 3: segments spend alpha (no running intersection), a reward level in
# the ledger, a two-sided change detector with doubt.
STATE_VERSION = 8
# 4: the selection's fall detector (policy/selection.py). 5: the cold-start persisted state.
# 6: a withdrawal's verdict comes back by a betting test (policy/change.py), counted per lesson.
# 7: each lesson's history (policy/history.py), which `lamar show` draws instead of a replay.
# 8: the third decision core (docs/decisions.md): new ledger sums, fall detector, creation rank.
_EPISODE_FIELDS = ("id", "context", "eligible", "injected", "held_out", "p", "time", "reward", "signal",
                   "reports", "number", "outcome_seq")


def new_audit() -> dict[str, Any]:
    """Audit figures of compacted episodes, before any compaction."""
    return {"compactions": 0, "episodes": 0, "reports": 0, "by_signal": {}, "reward_sum": 0.0,
            "first_time": None, "last_time": None}


def add_to_audit(audit: dict[str, Any], dropped: Iterable[EpisodeRecord]) -> None:
    """Count one compaction's dropped episodes into `audit` (the figures outlive the episodes)."""
    audit["compactions"] += 1
    by_signal = audit["by_signal"]
    for record in dropped:
        audit["episodes"] += 1
        first, last = audit["first_time"], audit["last_time"]
        audit["first_time"] = record.time if first is None else min(first, record.time)
        audit["last_time"] = record.time if last is None else max(last, record.time)
        if record.reward is not None:
            audit["reports"] += 1
            audit["reward_sum"] += record.reward
            name = record.signal or "reward"
            by_signal[name] = by_signal.get(name, 0) + 1


def snapshot_of(lam: Lamar, episodes: Iterable[EpisodeRecord] | None = None) -> dict[str, Any]:
    """The engine's cache as plain JSON-safe data, in the order the cache keeps it.

    Args:
        lam: the engine.
        episodes: the episodes to include (default: every one the engine holds).
    """
    held = lam._episodes.values() if episodes is None else episodes
    return {
        "format": FORMAT,
        "lessons": [state.to_dict() for state in lam._lessons.values()],
        # Scope buckets in insertion order, empty ones too: recall walks them in this order,
        # and the walk (hence the coins' order) must not change across a checkpoint.
        "index": [[[list(pair) for pair in key], list(bucket)] for key, bucket in lam._index.items()],
        "episodes": [[getattr(record, name) for name in _EPISODE_FIELDS] for record in held],
        "applied": sorted(lam._applied),
        "active": lam._n_active,
        "reports": lam._reports,
        "compacted": {**lam._compacted, "by_signal": dict(lam._compacted["by_signal"])},
        "rewards": [lam._reward_n, lam._reward_mean, lam._reward_m2],
    }


def fingerprint(event: Event) -> str:
    """A digest of one stored event: a state saved after it is valid only while it is still there."""
    text = f"{event.seq}|{event.kind}|{event.key}|{event.time!r}|{event.data_json()}"
    return _digest(text.encode("utf-8", "surrogatepass"))


def _digest(data: bytes) -> str:
    """CRC-32 and length: enough to notice a torn, edited or different text (not an adversary:
    whoever can write the store can write its events too), and zlib loads in microseconds
    where hashlib loads OpenSSL on every cold start."""
    return f"{zlib.crc32(data):08x}{len(data):x}"


def tuning_of(lam: Lamar) -> dict[str, Any]:
    """The policy's tuning as it reads back from JSON (a state folded under other tuning differs)."""
    loaded: dict[str, Any] = json.loads(json.dumps(dataclasses.asdict(lam.policy), default=str))
    return loaded


def state_text(lam: Lamar, last: Event) -> str:
    """The engine's folded state up to `last` (the last event folded), checksummed.

    Episodes that the store can look up by key are left out (that is what keeps a reopen
    cheap); the ones it cannot (restored from a checkpoint snapshot) are kept.
    """
    # Kept: the episodes known only from a checkpoint snapshot (no key to look them up by),
    # and the pending ones (no outcome yet), which `Lamar.pending` and the settling walk.
    kept = [record for record in lam._episodes.values() if record.id in lam._pinned or record.reports == 0]
    data = snapshot_of(lam, episodes=kept)
    data["pinned"] = [record.id for record in kept if record.id in lam._pinned]
    data["sealed"] = [record.id for record in kept if record.sealed]
    data["counters"] = [lam._n_episodes, lam._wanted, lam._held]
    payload = {"version": STATE_VERSION, "seq": last.seq, "last": fingerprint(last),
               "policy": tuning_of(lam), "state": data}
    body = json.dumps(payload, separators=(",", ":"))  # ASCII: any text survives any backend
    return _digest(body.encode("ascii")) + "\n" + body


def read_state(text: str, lam: Lamar) -> dict[str, Any]:
    """The payload of a saved state, checked; raises ValueError when it cannot be trusted.

    Refused: a torn or edited text (checksum), another STATE_VERSION, other tuning.
    The caller still checks `seq` and `last` against the log.
    """
    digest, sep, body = text.partition("\n")
    if not sep or _digest(body.encode("utf-8", "surrogatepass")) != digest:
        raise ValueError("the saved state fails its checksum (torn or edited)")
    payload = json.loads(body)
    if not isinstance(payload, dict):
        raise TypeError("the saved state is not an object")
    if payload.get("version") != STATE_VERSION:
        raise ValueError(f"the saved state has version {payload.get('version')!r}, not {STATE_VERSION}")
    if payload.get("policy") != tuning_of(lam):
        raise ValueError("the saved state was folded under other tuning")
    if not isinstance(payload.get("seq"), int) or not isinstance(payload.get("last"), str):
        raise TypeError("the saved state has no seq or fingerprint")
    return payload


def restore(lam: Lamar, data: Mapping[str, Any]) -> None:
    """Reset the engine's cache to a snapshot (raises KeyError/TypeError/ValueError if malformed)."""

    if data["format"] != FORMAT:
        raise ValueError(f"snapshot format {data['format']!r}; this Lamar reads format {FORMAT}")
    lam._reset()
    for raw in data["lessons"]:
        state = LessonState.from_dict(raw)
        _check_numbers(state)
        state.rank = state.rank or len(lam._lessons) + 1  # a snapshot of state version < 8: in the order kept
        lam._lessons[state.experience.id] = state
    for key, ids in data["index"]:
        lam._index[tuple((str(f), str(v)) for f, v in key)] = {i: lam._lessons[i] for i in ids}
    for row in data["episodes"]:
        fields = dict(zip(_EPISODE_FIELDS, row, strict=True))
        record = EpisodeRecord(fields, float(fields["time"]))
        record.reward = None if fields["reward"] is None else float(fields["reward"])
        record.signal = fields["signal"]
        record.reports = int(fields["reports"])
        record.number = int(fields["number"])
        record.outcome_seq = int(fields["outcome_seq"])
        record.sealed = record.reward is not None  # its reward is inside the lessons' sums now
        lam._episodes[record.id] = record
    lam._applied = set(data["applied"])
    lam._n_active = int(data["active"])
    lam._reports = int(data["reports"])
    lam._compacted = {**new_audit(), **data["compacted"]}
    lam._compacted["by_signal"] = dict(lam._compacted["by_signal"])  # the event's data stays as stored
    n, mean, m2 = data["rewards"]
    lam._reward_n, lam._reward_mean, lam._reward_m2 = int(n), float(mean), float(m2)
    if lam._reward_n < 0 or not lam._reward_m2 >= 0.0 or not math.isfinite(lam._reward_m2 + lam._reward_mean):
        raise ValueError("the snapshot's reward statistics are out of range")


def _check_numbers(state: LessonState) -> None:
    """Refuse a lesson whose sums could not come from folding outcomes (a mangled snapshot):
    later arithmetic on them would fail far from the cause."""
    for part in (state.arms.to_dict(), state.ledger.to_dict(), state.detector.to_dict()):
        for name, value in part.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"lesson {state.experience.id}: {name} is {value!r}, not a finite number")
    if state.ledger.n >= 2 and not state.ledger.weight > 0.0:
        raise ValueError(f"lesson {state.experience.id}: a ledger of {state.ledger.n} episodes has no weight")


__all__ = ["FORMAT", "STATE_VERSION", "add_to_audit", "fingerprint", "new_audit", "read_state", "restore",
           "snapshot_of", "state_text", "tuning_of"]
