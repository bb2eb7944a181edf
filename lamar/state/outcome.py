"""`write_outcome`: a report written as an outcome event, checked against the folded episode first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lamar._errors import DuplicateReport, UnknownEpisode, advised
from lamar.arguments import unknown
from lamar.store.base import Event

if TYPE_CHECKING:
    from lamar.state.follower import Follower

# A report that may still be replaced says how; a final one (sealed, or refused by the fold) does not.
REPLACE_ADVICE = "; pass replace=True to replace that outcome"


def write_outcome(log: Follower, episode_id: str, reward: float, signal: str | None, replace: bool, *,
                  synced: bool = False) -> bool:
    """Append the outcome of `episode_id` and fold it; True when the fold refused it. `synced`: the
    caller folded the log just now, and holds it so that nothing else is written until this returns.

    Raises:
        UnknownEpisode: the log has no such episode.
        DuplicateReport: the episode has an outcome and `replace` is False, or it is sealed.
        EventConflict: another writer stored an outcome of the episode after the log was read here:
            `report_outcome` reads it again, to replace it where asked or where it is a default.
    """
    if not synced:
        log.sync()
    episode = log.find(episode_id)
    if episode is not None and log.checkpointed_elsewhere(episode):
        log.refold()  # its outcome is final now: said so below, rather than advising a replacement refused later
        episode = log.find(episode_id)
    if episode is None:
        raise unknown_episode(episode_id, log.store.location)
    # A default or an expiry from the pending policy only stood in for this report.
    replace = replace or episode.settled is not None or (episode.reports > 0 and episode.reward is None)
    if episode.sealed:  # before the advice to replace it, which would be refused the same way
        raise DuplicateReport(
            f"episode {episode_id}'s outcome ({episode.signal or episode.reward}) is final: it "
            "was folded into a checkpoint when the store was compacted, so it cannot be replaced"
        )
    if episode.reports and not replace:
        raise advised(DuplicateReport, f"episode {episode_id} was already reported "
                      f"({episode.signal or episode.reward})", REPLACE_ADVICE)
    key = f"outcome:{episode_id}" + (f":{episode.reports}" if episode.reports else "")
    data = {"episode": episode_id, "reward": reward, "signal": signal, "replace": bool(episode.reports)}
    (stored,) = log.append([Event("outcome", data, key=key)])
    log.cache.ignored.clear()
    if synced:
        log.fold_tail([stored])  # the only event since the caller's fold
    else:
        log.sync()
    now = log.cache.episodes.get(episode_id)
    return stored.seq in log.cache.ignored or (now is not None and now.outcome_seq < stored.seq)


def overtaken(episode_id: str, replace: bool, tries: int) -> DuplicateReport:
    """The refusal of a report that other writers' outcomes of the episode overtook at each of its `tries`."""
    if not replace:
        return advised(DuplicateReport, f"episode {episode_id} was reported by another writer just now", REPLACE_ADVICE)
    return advised(DuplicateReport, f"episode {episode_id} was reported by other writers each of the {tries} "
                   "times this report tried to replace their outcome", "; nothing of it was stored: report it again "
                   "with replace=True")


def unknown_episode(episode_id: str, location: str, *, lesson: bool = False) -> UnknownEpisode:
    """The refusal of a report of an episode the log has none by; `lesson`: `episode_id` is a lesson's
    id, and the message says so, since a recall hands over both kinds of id and one is passed for the other."""
    return unknown(
        UnknownEpisode, episode_id, location,
        ": report the episode_id that recall() returned, against the same store (an episode that sleep "
        "compacted is gone too: an old reported one, whose outcome stays counted, or one left unreported "
        "past keep_unreported)", "lesson" if lesson else None)


def refused(episode_id: str) -> DuplicateReport:
    """The error for an outcome the fold refused: another writer reported the episode and a
    checkpoint dropped that report's key before this one was written, so every process refuses it."""
    return DuplicateReport(
        f"episode {episode_id} was reported by another writer, and compacted, just now; "
        "this report was not counted"
    )


__all__ = ["overtaken", "refused", "unknown_episode", "write_outcome"]
