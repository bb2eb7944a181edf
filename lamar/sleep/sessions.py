"""Which traces are one session: the runs that name one episode (a run stopped for a review and its resume),
as mining shows them to the model, counts a lesson's support in, and names them in a candidate's reason."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lamar.sleep.traces import Trace

Scrub = Callable[[str], "tuple[str, list[str]]"]


def session_key(trace: Trace) -> str:
    """The session `trace` is a run of: its episode, or the trace alone when it names none."""
    return trace.episode_id or f"\0{trace.id}"


def sessions_of(traces: Iterable[Trace]) -> dict[str, list[Trace]]:
    """The traces grouped by session, in the order each session first appears."""
    grouped: dict[str, list[Trace]] = {}
    for trace in traces:
        grouped.setdefault(session_key(trace), []).append(trace)
    return grouped


def episode_labels(traces: Sequence[Trace], scrub: Scrub) -> tuple[dict[str, str], int]:
    """The session the prompt shows for each episode the traces name, and how many held a secret.

    An episode is shown by its id scrubbed, unless that holds a secret or could be read as another
    session (a trace's id, which is the session of a trace naming no episode, or another episode
    scrubbed alike): then by a stand-in (`session-3`), so the model never takes two sessions for one.
    """
    used = {trace.id for trace in traces}
    labels: dict[str, str] = {}
    secrets = 0
    for episode in dict.fromkeys(t.episode_id for t in traces if t.episode_id):
        shown, found = scrub(episode)
        secrets += bool(found)
        if found or shown in used:
            n = len(labels)
            while f"session-{n}" in used:
                n += 1
            shown = f"session-{n}"
        labels[episode] = shown
        used.add(shown)
    return labels, secrets


def support_words(support: Sequence[Trace], named: Mapping[str, str], scrub: Scrub) -> str:
    """The sessions and traces a lesson was mined from, for its reason: "3 sessions (5 traces: t1, t2 of
    episode ep_a; t3, t4 of episode ep_b; t5)", or "2 sessions (traces t1, t2)" when each is one trace."""
    grouped = sessions_of(sorted(support, key=lambda t: t.time))  # as they happened, a session's runs together
    count = f"{len(grouped)} session{'s' if len(grouped) != 1 else ''}"
    if len(grouped) == len(support):
        return f"{count} (traces {', '.join(named[runs[0].id] for runs in grouped.values())})"
    parts = [", ".join(named[t.id] for t in runs) + (f" of episode {scrub(runs[0].episode_id)[0]}"
                                                      if len(runs) > 1 and runs[0].episode_id else "")
             for runs in grouped.values()]
    return f"{count} ({len(support)} traces: {'; '.join(parts)})"


def few_sessions(support: Sequence[Trace], min_support: int, named: Mapping[str, str]) -> str:
    """Why `support` holds fewer than `min_support` sessions, or "": the traces that name one episode are the
    runs of one session (LangChain's handler writes one per run, and a resumed review is a run of its
    own), so counting them apart would let one session mint a lesson."""
    grouped = sessions_of(support)
    if len(grouped) >= min_support:
        return ""
    episode, runs = next((episode, runs) for episode, runs in grouped.items() if len(runs) > 1)
    ids = [named[t.id] for t in runs]
    return (f"supported by {len(support)} traces of {len(grouped)} session{'s' if len(grouped) > 1 else ''} "
            f"({', '.join(ids[:-1])} and {ids[-1]} name episode {episode}: the runs of one session, such as a run "
            f"stopped for a review and its resume); a lesson needs at least {min_support} sessions")


__all__ = ["episode_labels", "few_sessions", "session_key", "sessions_of", "support_words"]
