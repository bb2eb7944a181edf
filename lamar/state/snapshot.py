"""Snapshots: the fold cache as the data of one `snapshot` event, and back, exactly: folding a
snapshot and the events after it gives the evidence and decisions that folding the whole log gives."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from lamar.policy.lesson import LessonState
from lamar.state.episode import EpisodeRecord
from lamar.store.episode_rows import EPISODE_FIELDS  # the order of a snapshot's episode rows

if TYPE_CHECKING:
    from lamar.state.cache import FoldCache

FORMAT = 1


def new_audit() -> dict[str, Any]:
    """Audit figures of compacted episodes, before any compaction."""
    return {"compactions": 0, "episodes": 0, "reports": 0, "by_signal": {}, "reward_sum": 0.0,
            "first_time": None, "last_time": None, "wanted": 0, "held_out": 0}


def add_to_audit(audit: dict[str, Any], dropped: Iterable[EpisodeRecord]) -> None:
    """Count one compaction's dropped episodes into `audit` (the figures outlive the episodes)."""
    audit["compactions"] += 1
    by_signal = audit["by_signal"]
    for record in dropped:
        audit["episodes"] += 1
        # the holdout rate counts every episode logged, as `stats()["episodes"]` does
        audit["held_out"] += len(record.held_out)
        audit["wanted"] += len(record.held_out) + len(record.injected)
        first, last = audit["first_time"], audit["last_time"]
        audit["first_time"] = record.time if first is None else min(first, record.time)
        audit["last_time"] = record.time if last is None else max(last, record.time)
        if record.reward is not None:
            audit["reports"] += 1
            audit["reward_sum"] += record.reward
            name = record.signal or "reward"
            by_signal[name] = by_signal.get(name, 0) + 1


def note_no(noes: dict[str, dict[str, Any]], data: Mapping[str, Any], at: float) -> None:
    """Keep, from one `applied` event, what `lamar rejections` shows of a person's no (lamar.sleep.rejected): a
    checkpoint takes the event out of the log, and the snapshot keeps this in its place. An undo forgets it."""
    if data.get("kind") == "reject":
        noes[str(data["proposal"])] = {k: data[k] for k in ("of", "lessons", "reason") if k in data} | {"time": at}
    elif data.get("kind") == "unreject":
        noes.pop(str(data["proposal"]).removeprefix("unreject:"), None)


def snapshot_of(cache: FoldCache, episodes: Iterable[EpisodeRecord] | None = None) -> dict[str, Any]:
    """The cache as plain JSON-safe data, in the order the cache keeps it.

    Args:
        cache: the fold cache.
        episodes: the episodes to include (default: every one the cache holds).
    """
    held = cache.episodes.values() if episodes is None else episodes
    return {
        "format": FORMAT,
        "lessons": [state.to_dict() for state in cache.lessons.values()],
        # Scope buckets as the cache holds them: recall sorts what they give by the order of adding,
        # so the coins' order does not hang on theirs across a checkpoint.
        "index": [[[list(pair) for pair in key], list(bucket)] for key, bucket in cache.index.items()],
        "episodes": [[getattr(record, name) for name in EPISODE_FIELDS] for record in held],
        # Outcomes the pending policy or `expire` stood in with: a late report still replaces an
        # expiry, and the integrations tell a failed run's expiry from a report by it.
        "settled": {record.id: record.settled for record in held if record.settled is not None},
        "applied": sorted(cache.applied),
        **({"noes": cache.noes} if cache.noes else {}),  # only when held: a snapshot of no rejection reads as before
        "removed": {exp_id: list(done) for exp_id, done in cache.removed.items()},
        "active": cache.n_active,
        "reports": cache.reports,
        "compacted": {**cache.compacted, "by_signal": dict(cache.compacted["by_signal"])},
        "rewards": [cache.reward_n, cache.reward_mean, cache.reward_m2],
    }


def restore(cache: FoldCache, data: Mapping[str, Any]) -> None:
    """Reset the cache to a snapshot (raises KeyError/TypeError/ValueError if malformed)."""
    if data["format"] != FORMAT:
        raise ValueError(f"snapshot format {data['format']!r}; this Lamar reads format {FORMAT}")
    cache.reset()
    for raw in data["lessons"]:
        state = LessonState.from_dict(raw)
        _check_numbers(state)
        state.rank = state.rank or len(cache.lessons) + 1  # a snapshot from before ranks: in the order kept
        cache.lessons[state.experience.id] = state
    for key, ids in data["index"]:
        cache.index[tuple((str(f), str(v)) for f, v in key)] = {i: cache.lessons[i] for i in ids}
    for row in data["episodes"]:
        fields = dict(zip(EPISODE_FIELDS, row, strict=True))
        record = EpisodeRecord(fields, float(fields["time"]))
        record.reward = None if fields["reward"] is None else float(fields["reward"])
        record.signal = fields["signal"]
        record.reports = int(fields["reports"])
        record.number = int(fields["number"])
        record.outcome_seq = int(fields["outcome_seq"])
        record.sealed = record.reward is not None  # its reward is inside the lessons' sums now
        cache.episodes[record.id] = record
    for episode_id, how in data.get("settled", {}).items():  # a snapshot from before it kept none
        if how not in ("default", "expired"):
            raise ValueError(f"episode {episode_id} is settled as {how!r}, not 'default' or 'expired'")
        if (settled := cache.episodes.get(episode_id)) is not None:
            settled.settled = how
    cache.applied = set(data["applied"])
    # A snapshot written before it kept them has none: its rejections show their ids alone.
    cache.noes = {str(record): {**seen} for record, seen in data.get("noes", {}).items()}
    # A snapshot written before lessons' removals were kept has none: its log showed them.
    cache.removed = {str(i): (int(seq), str(how)) for i, (seq, how) in data.get("removed", {}).items()}
    cache.n_active = int(data["active"])
    cache.reports = int(data["reports"])
    cache.compacted = {**new_audit(), **data["compacted"]}
    cache.compacted["by_signal"] = dict(cache.compacted["by_signal"])  # the event's data stays as stored
    n, mean, m2 = data["rewards"]
    cache.reward_n, cache.reward_mean, cache.reward_m2 = int(n), float(mean), float(m2)
    if cache.reward_n < 0 or not cache.reward_m2 >= 0.0 or not math.isfinite(cache.reward_m2 + cache.reward_mean):
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


__all__ = ["EPISODE_FIELDS", "FORMAT", "add_to_audit", "new_audit", "note_no", "restore", "snapshot_of"]
