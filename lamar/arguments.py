"""Checks of the engine's own arguments (store, k, tuning, reasons, ids), refused with a LamarError
that says what a valid argument looks like; each public call of `Lamar` validates in one line."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from lamar._errors import (
    InvalidArgument,
    InvalidExperience,
    StoreError,
    UnknownEpisode,
    UnknownExperience,
    a_or_an,
    echoed,
)
from lamar.storable import finite_number, text_problem, whole_number
from lamar.store.base import Store

Unknown = TypeVar("Unknown", UnknownEpisode, UnknownExperience)


def engine_store(store: Any) -> Any:
    """A store object from `store` (opened when it is a location); StoreError when it is neither."""
    if isinstance(store, (str, os.PathLike)):
        from lamar.store import open_store

        return open_store(store)
    if not isinstance(store, Store):
        # By module name: the core never imports LangGraph to recognise its stores.
        langgraph = any(k.__module__.startswith("langgraph.store") for k in type(store).__mro__)
        hint = ("; a LangGraph store holds Lamar's log through lamar_langgraph.LangGraphStore: "
                "Lamar(LangGraphStore(store))" if langgraph else "")
        raise StoreError(f"Lamar(store) takes a location (':memory:', a .json or .db path, a postgresql:// URL) "
                         f"or a store object with location, append, read and close (lamar.store.Store); "
                         f"got {type(store).__name__}{hint}")
    return store


def seed(value: Any) -> int | None:
    """The seed of an engine's coins and tie-breaks: a whole number, or None (from the OS)."""
    if value is not None and not whole_number(value):
        raise InvalidArgument(f"seed is a whole number or None; got {echoed(value)}")
    return value


def flag(value: Any, name: str) -> bool:
    """A switch: True or False, nothing that merely reads as one."""
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name} is True or False; got {echoed(value)}")
    return value


# Each slot can hold a lesson of up to 6,000 characters, so this many already fill far more than any
# model's prompt; a bound keeps a k echoed in a report or a what-if row name short, and every k
# exact where JSON is read as a double.
MAX_SLOTS = 1_000


def slots(k: Any, name: str = "k") -> int:
    """`k` as a number of lesson slots: a whole number from 0 to MAX_SLOTS."""
    if not whole_number(k, low=0, high=MAX_SLOTS):
        raise InvalidArgument(f"{name} is the number of lesson slots, a whole number >= 0 and at most "
                              f"{MAX_SLOTS:,} (more than a prompt holds: pass {MAX_SLOTS:,} to inject every "
                              f"eligible lesson up to that many); got {echoed(k)}")
    return k


def _stores_taking(name: object) -> list[str]:
    """The store backends that take `name` as an option (`ExperienceStore(url, namespace="team-a")`),
    which is readily passed to the engine instead: none for a name of no store."""
    import inspect

    from lamar.store.json_file import JsonStore
    from lamar.store.postgres import PostgresStore  # psycopg is imported only when it connects
    from lamar.store.sqlite import SqliteStore

    keyword = inspect.Parameter.KEYWORD_ONLY
    return [kind for kind, backend in (("JSON", JsonStore), ("PostgreSQL", PostgresStore), ("SQLite", SqliteStore))
            if any(name == option and p.kind is keyword for option, p in inspect.signature(backend).parameters.items())]


def draws(value: Any) -> int:
    """How many Thompson draws a preview makes: a whole number from 1 to 100 000."""
    if not whole_number(value, low=1, high=100_000):
        raise InvalidArgument(f"draws is a whole number from 1 to 100000; got {echoed(value)}")
    return value


def policy(tuning: Mapping[str, Any]) -> Any:
    """A Policy from the tuning keywords, each of the type its default has."""
    from lamar.policy.config import Policy, without_retired

    tuning = without_retired(tuning)
    fields = {f.name: f for f in dataclasses.fields(Policy)}
    for name, value in tuning.items():
        if name not in fields and (kinds := _stores_taking(name)):
            # Named when some stores lack it: the store that takes it is then the advice, not a second refusal.
            whose = "the store" if len(kinds) == 3 else f"the {' and '.join(kinds)} store{'s' * (len(kinds) > 1)}"
            url = " or in a PostgreSQL URL (?lamar_namespace=...)" if name == "namespace" else ""
            raise InvalidArgument(f"{name!r} is an option of {whose}, not a tuning keyword of the engine: give it "
                                  f"as Lamar(ExperienceStore(location, {name}=...)){url}")
        if name not in fields:
            raise InvalidArgument(f"unknown tuning keyword {echoed(name)}; the keywords are {sorted(fields)} "
                                  "(see lamar.policy.Policy)")
        default = fields[name].default
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = whole_number(value)
        elif isinstance(default, float):
            ok = finite_number(value)
        else:
            ok = True
        if not ok:
            kind = "a whole number" if isinstance(default, int) else "a finite number"
            raise InvalidArgument(f"{name} must be {kind} (default {default!r}); got {echoed(value)}")
    try:
        return Policy(**tuning)
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"invalid tuning: {exc}") from None


def seconds(value: Any, name: str) -> float | None:
    """A time or a duration in seconds (None stays None): a finite number."""
    if value is None:
        return None
    if not finite_number(value):
        raise InvalidArgument(f"{name} is a number of seconds (or None); got {echoed(value)}")
    return float(value)


def duration(value: Any, name: str) -> float | None:
    """An age or a duration in seconds (None stays None): a finite number >= 0."""
    if value is not None and not (finite_number(value) and value >= 0):
        raise InvalidArgument(f"{name} is an age in seconds, a finite number >= 0 (or None); got {echoed(value)}")
    return None if value is None else float(value)


def reason(text: Any) -> str:
    """A reason for the audit trail: a storable string no longer than a lesson may be, its
    credentials redacted (`lamar show` and the UI print it, and every copy of the log keeps it)."""
    if not isinstance(text, str) or text_problem(text):
        raise InvalidArgument(f"reason must be a string without NUL or lone surrogates; got {echoed(text)}")
    from lamar.safety.boundary import MAX_LESSON_CHARS

    # Printed back and kept in every copy of the log, as a lesson is: held to a lesson's length.
    if len(text) > MAX_LESSON_CHARS:
        raise InvalidArgument(f"the reason is {len(text):,} characters long, at most {MAX_LESSON_CHARS:,}: "
                              "say why in a few sentences")
    from lamar.safety.secrets import scrub

    return scrub(text)[0]


def who(name: Any) -> str:
    """Who does something, for the audit trail: a non-empty string, its credentials redacted, or
    None for the OS user."""
    if name is None:
        import getpass

        try:
            return getpass.getuser()
        except (KeyError, OSError):  # no user name in the environment or the password database
            return "unknown"
    if not isinstance(name, str) or not name.strip() or text_problem(name):
        raise InvalidArgument(f"by names who does it: a non-empty string without NUL (or None: the OS user); "
                              f"got {echoed(name)}")
    from lamar.safety.boundary import MAX_LESSON_CHARS

    # Kept in the audit trail and printed back like a reason, so held to a reason's length and
    # scrubbed as a reason is: a token pasted as a name must not stay in every copy of the log.
    if len(name.strip()) > MAX_LESSON_CHARS:
        raise InvalidArgument(f"by is {len(name.strip()):,} characters long, at most {MAX_LESSON_CHARS:,}: "
                              "name who does it")
    from lamar.safety.secrets import scrub

    return scrub(name.strip())[0]


def candidate_ids(candidates: Iterable[str] | None) -> set[str] | None:
    """The ids a recall may choose from (None: any)."""
    if candidates is None:
        return None
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, Iterable):
        raise InvalidArgument(f"candidates is a list of experience ids; got {type(candidates).__name__}")
    ids = list(candidates)
    # Searched by position, not by value: None itself is one of the things to refuse.
    bad = [c for c in ids if not isinstance(c, str)]
    if bad:
        raise InvalidArgument(f"candidates must be experience ids (strings); got {echoed(bad[0])}")
    return set(ids)


def traces(source: Any) -> Any:
    """`source` when sleep can read traces from it: None, a path, or an iterable of records.

    >>> traces(None), traces("traces.jsonl")
    (None, 'traces.jsonl')
    """
    if source is None or isinstance(source, (str, os.PathLike)):
        return source
    if isinstance(source, (bytes, bytearray)) or not isinstance(source, Iterable):
        raise InvalidArgument(f"traces is a JSON Lines path or an iterable of traces (dicts, Trace objects or "
                              f"JSON lines); got {type(source).__name__}")
    return source


def proposal_ids(only: Any) -> list[str] | None:
    """The proposal ids `apply(only=...)` names (None: all)."""
    return _ids(only, "proposal")


def proposal_id(value: Any) -> str:
    """The proposal id `unreject` names: a string that is not empty."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"proposal_id must be a proposal's id (see `rejections()`); got {value!r}")
    return value


def pending_filter(older_than: Any, now: Any, only: Any) -> list[str] | None:
    """The episode ids `pending(only=...)` names (None: all), once `older_than` and `now` are checked."""
    duration(older_than, "older_than")
    seconds(now, "now")
    return _ids(only, "episode")


def _ids(only: Any, what: str) -> list[str] | None:
    if only is None:
        return None
    if isinstance(only, str):
        return [only]
    if not isinstance(only, Iterable):
        raise InvalidArgument(f"only is a list of {what} ids; got {type(only).__name__}")
    ids = list(only)
    bad = next((i for i in ids if not isinstance(i, str)), None)
    if bad is not None:
        raise InvalidArgument(f"only must list {what} ids (strings); got {echoed(bad)}")
    return ids


def experience(value: Any) -> Any:
    """`value` if it is an Experience (what `add` takes), else an InvalidExperience."""
    from lamar.experience import Experience

    if not isinstance(value, Experience):
        raise InvalidExperience(f"add() takes an Experience; got {type(value).__name__}")
    if value.id:  # a lesson stored before this check keeps its id: every front quotes one it shows
        from lamar.safety.ids import id_problem

        problem = id_problem(value.id)
        if problem:
            raise InvalidExperience(f"Experience.id {problem}")
    return value


def sleep_report(report: Any) -> Any:
    """`report` when `apply` can carry it out: the SleepReport that sleep returned."""
    from lamar.sleep.proposals import SleepReport

    if not isinstance(report, SleepReport):
        raise InvalidArgument(f"apply() takes the SleepReport that sleep() returned (or SleepReport.from_dict "
                              f"of a saved one); got {type(report).__name__}")
    return report


def choice(enum: Any, value: Any, name: str) -> Any:
    """`enum(value)`, a name in any case, or InvalidArgument listing the valid values (None stays None)."""
    if value is None:
        return None
    # The values are lower-case words; "Active" is meant as "active", as `report` takes "Shipped".
    spelled = value.strip().lower() if isinstance(value, str) else value
    try:
        return enum(spelled)
    except (ValueError, TypeError):
        raise InvalidArgument(f"{name} must be one of {[m.value for m in enum]}; got {echoed(value)}") from None


def unknown(kind: type[Unknown], value: Any, location: str, advice: str | None = None,
            held_as: str | None = None, *, what: str | None = None) -> Unknown:
    """The refusal of an id the store has no episode or lesson (`kind`) by, ending with `advice` (for a lesson,
    how to list the ids when None); `held_as`: the kind of id the store does hold it as, which it names, since a
    recall hands over both kinds and one is passed for the other; `what`: the word for it, as the front says it.
    A Recall, a PendingEpisode or an Experience passed is told its id."""
    from lamar.experience import Experience
    from lamar.recall import Recall

    # A Recall, or a PendingEpisode from `lam.pending()` that a script settles: passed whole for its id.
    if kind is UnknownEpisode and not isinstance(value, str) and isinstance(getattr(value, "episode_id", None), str):
        name = type(value).__name__
        return kind(f"pass the {name}'s episode_id ({echoed(value.episode_id)}), not the {name} itself")
    # A LangGraph graph's state or an agent's result holds the episode under this key (the integrations'
    # recall node and middleware put it there): it is passed whole as readily as a Recall is.
    if kind is UnknownEpisode and isinstance(value, Mapping) and isinstance(value.get("lamar_episode_id"), str):
        return kind(f"pass the state's lamar_episode_id ({echoed(value['lamar_episode_id'])}), not the whole "
                    "state or result")
    # LangGraph's invoke(..., version="v2") returns the state in a GraphOutput's `value`.
    inner = getattr(value, "value", None) if kind is UnknownEpisode and not isinstance(value, str) else None
    if isinstance(inner, Mapping) and isinstance(inner.get("lamar_episode_id"), str):
        return kind(f"pass the result's value['lamar_episode_id'] ({echoed(inner['lamar_episode_id'])}), not the "
                    "whole result")
    if kind is UnknownExperience and isinstance(value, Experience):
        return kind(f"pass the lesson's id ({echoed(value.id)}), not the Experience itself")
    if kind is UnknownExperience and isinstance(value, Recall):
        return kind(f"pass one of the Recall's lesson ids ({echoed(value.ids)}), not the Recall itself")
    said, noun = ("episode", "episode") if kind is UnknownEpisode else ("experience", "lesson")
    what = what or said
    if advice is None:
        advice = "; Lamar.experiences() lists the lesson ids" if noun == "lesson" else ""
    note = f" (that is {a_or_an(held_as)} id, not {a_or_an(noun)} id)" if held_as else ""
    shown = echoed(value)
    refusal = kind(f"no {what} {shown} in store {location}{note}{advice}")
    refusal.advice, refusal.note, refusal.held_as = advice, note, held_as
    refusal.shown, refusal.location = shown, location
    return refusal


__all__ = ["MAX_SLOTS", "candidate_ids", "choice", "draws", "duration", "engine_store", "flag", "policy",
           "proposal_id", "proposal_ids", "reason", "seconds", "seed", "sleep_report", "slots", "traces", "unknown",
           "who"]
