"""The saved state: the fold cache as checksummed text kept beside the log, never in it, so
that a fresh process folds only the tail (see `Follower.resume`)."""

from __future__ import annotations

import dataclasses
import json
import zlib
from typing import TYPE_CHECKING, Any

from lamar.state.snapshot import snapshot_of
from lamar.store.base import StoredText

if TYPE_CHECKING:
    from lamar.policy.config import Policy
    from lamar.state.cache import FoldCache
    from lamar.state.episode import EpisodeRecord
    from lamar.store.base import Event

# Bumped whenever what a lesson's saved form holds (LessonState.to_dict), or how the events fold
# into it, changes, so that a state saved by another Lamar is rebuilt from the events instead of trusted.
STATE_VERSION = 9
# Most episodes the undo marks a state carries may name (`Marks.to_data`): each is kept in the state whole,
# as are their lesson copies, at most two per lesson.
_MARKED = 256


def fingerprint(event: Event | StoredText) -> str:
    """A digest of one stored event: a state saved after it is valid only while it is still there.
    Its text as stored gives the same digest as the event decoded (a store writes `data_json`)."""
    data = event.data if isinstance(event, StoredText) else event.data_json()
    text = f"{event.seq}|{event.kind}|{event.key}|{event.time!r}|{data}"
    return _digest(text.encode("utf-8", "surrogatepass"))


def _digest(data: bytes) -> str:
    """CRC-32 and length: enough to notice a torn, edited or different text (not an adversary:
    whoever can write the store can write its events too), and zlib loads in microseconds
    where hashlib loads OpenSSL on every cold start."""
    return f"{zlib.crc32(data):08x}{len(data):x}"


def tuning_of(policy: Policy) -> dict[str, Any]:
    """The policy's tuning that the fold depends on, as it reads back from JSON (a state folded
    under other tuning differs); the settling knobs (`SETTLING`) are left out."""
    return fold_tuning(json.loads(json.dumps(dataclasses.asdict(policy), default=str)))


def fold_tuning(tuning: dict[str, Any]) -> dict[str, Any]:
    """`tuning` (a policy as JSON) without the knobs the fold does not read: a state or rows
    folded by an engine with `pending_after` serve one without it, such as the `lamar` command."""
    from lamar.policy.config import SETTLING

    return {name: value for name, value in tuning.items() if name not in SETTLING}


def kept_episodes(cache: FoldCache) -> list[EpisodeRecord]:
    """The episodes a saved state holds: those pinned by a checkpoint, and the pending ones."""
    return [record for record in cache.episodes.values() if record.id in cache.pinned or record.reports == 0]


def state_text(cache: FoldCache, last: Event | StoredText) -> str:
    """The cache's folded state up to `last` (the last event folded), checksummed.

    Episodes that the store can look up by key are left out (that is what keeps a reopen
    cheap). Kept: the ones it cannot (known only from a checkpoint snapshot), and the pending
    ones (no outcome yet), which `Lamar.pending` and the settling walk.
    """
    kept = kept_episodes(cache)
    marks, named = cache.marks.to_data(_MARKED, 2 * len(cache.lessons)) if cache.marks.on else ([], set())
    if named:  # a rewind to a mark sets their outcomes back, and folds theirs after it again
        kept += [r for r in cache.episodes.values() if r.id in named and r.id not in cache.pinned and r.reports]
    data = snapshot_of(cache, episodes=kept)
    if marks:
        data["marks"] = marks
    data["pinned"] = [record.id for record in kept if record.id in cache.pinned]
    data["sealed"] = [record.id for record in kept if record.sealed]
    data["counters"] = [cache.n_episodes, cache.wanted, cache.held]
    payload = {"version": STATE_VERSION, "seq": last.seq, "last": fingerprint(last),
               # The whole tuning, settling knobs included: reading compares only what the fold reads,
               # and a reader that compares the whole tuning still finds this state its own.
               "policy": json.loads(json.dumps(dataclasses.asdict(cache.policy), default=str)), "state": data}
    body = json.dumps(payload, separators=(",", ":"))  # ASCII: any text survives any backend
    return _digest(body.encode("ascii")) + "\n" + body


def saved_tuning(text: str | None) -> dict[str, Any]:
    """The tuning that a saved state (`state_text`) was folded under, without the settling knobs; {} when
    the text is not one. Read without decoding the state itself, which `read_state` then decodes once."""
    digest, sep, body = (text or "").partition("\n")
    at = body.find(',"policy":')  # after the version, seq and fingerprint, which cannot hold it
    if not sep or at < 0 or _digest(body.encode("utf-8", "surrogatepass")) != digest:
        return {}
    try:
        tuning, _ = json.JSONDecoder().raw_decode(body, at + len(',"policy":'))
    except ValueError:
        return {}
    return fold_tuning(tuning) if isinstance(tuning, dict) else {}


def read_state(text: str, policy: Policy) -> dict[str, Any]:
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
    saved = payload.get("policy")
    if not isinstance(saved, dict) or fold_tuning(saved) != tuning_of(policy):
        raise ValueError("the saved state was folded under other tuning")
    if not isinstance(payload.get("seq"), int) or not isinstance(payload.get("last"), str):
        raise TypeError("the saved state has no seq or fingerprint")
    return payload


__all__ = ["STATE_VERSION", "fingerprint", "fold_tuning", "read_state", "saved_tuning", "state_text", "tuning_of"]
