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


_LISTED = 5  # sessions a reason names; the provenance cites the traces


def support_words(support: Sequence[Trace], named: Mapping[str, str], scrub: Scrub, *,
                  cited: int | None = None) -> tuple[str, str]:
    """What a lesson was mined from, for its reason: the count ("3 sessions (5 traces)", or "2 sessions" when each
    is one trace), and the traces session by session, as they happened ("Traces: t1, t2 of episode ep_a; t3.").

    The count goes first and the list last, so a reason cut to one line shows the lesson, not trace ids. `cited`:
    how many of the traces the lesson's provenance cites (all when None).
    """
    grouped = sessions_of(sorted(support, key=lambda t: t.time))  # as they happened, a session's runs together
    count = f"{len(grouped)} session{'s' if len(grouped) != 1 else ''}"
    if len(grouped) != len(support):
        count += f" ({len(support)} traces)"
    parts = [", ".join(named[t.id] for t in runs) + (f" of episode {scrub(runs[0].episode_id)[0]}"
                                                      if len(runs) > 1 and runs[0].episode_id else "")
             for runs in grouped.values()]
    more, joint = len(parts) - _LISTED, "; " if len(grouped) != len(support) else ", "
    cut = cited is not None and cited < len(support)
    where = (f"the lesson's provenance cites the first {cited} by id and counts all {len(support)}" if cut
             else "every trace is in the lesson's provenance")
    listed = (joint.join(parts[:_LISTED]) + f"; and {more} more session{'s' if more > 1 else ''} ({where})"
              if more > 0 else joint.join(parts) + (f" ({where})" if cut else ""))
    return count, f"Traces: {listed}."


def session_outcomes(support: Sequence[Trace]) -> tuple[dict[str, int], int]:
    """How many sessions ended each way, and how many met tool errors. A session's outcome is its last run's
    that has one: the run stopped for a review has none yet when its trace is written, its resume has it."""
    outcomes: dict[str, int] = {}
    errors = 0
    for runs in sessions_of(sorted(support, key=lambda t: t.time)).values():
        said = [t.outcome for t in runs if t.outcome]
        outcome = said[-1] if said else "unknown"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        errors += any(t.tool_errors for t in runs)
    return dict(sorted(outcomes.items())), errors


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


__all__ = ["episode_labels", "few_sessions", "session_key", "session_outcomes", "sessions_of", "support_words"]
