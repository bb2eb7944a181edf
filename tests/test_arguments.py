"""Every bad argument of `Lamar`'s public methods is a LamarError that says what to pass, raised
before anything is stored; no builtin ValueError, TypeError or OverflowError escapes."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lamar import (
    Experience,
    ExperienceStore,
    InvalidArgument,
    Lamar,
    LamarError,
    Policy,
    Scope,
    Signal,
    StoreError,
    UnknownEpisode,
)
from lamar.recall import Recall
from lamar.store import MemoryStore

# A float cannot hold 10**400: math.isfinite raises OverflowError on it rather than answer.
BAD: list[Any] = [-1, -0.5, None, "x", "", math.nan, math.inf, -math.inf, [], [1], object(), True, {}, b"x", 10**400]


def _engine() -> tuple[Lamar, str, Recall]:
    lam = Lamar(":memory:", k=2, seed=1)
    exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    return lam, exp_id, lam.recall({"project": "x"})


CALLS: dict[str, Callable[[Lamar, str, Recall, Any], object]] = {
    "Lamar(store)": lambda lam, e, r, v: Lamar(v),
    "Lamar(k)": lambda lam, e, r, v: Lamar(":memory:", k=v),
    "Lamar(seed)": lambda lam, e, r, v: Lamar(":memory:", seed=v),
    "Lamar(explore)": lambda lam, e, r, v: Lamar(":memory:", explore=v),
    "Lamar(holdout)": lambda lam, e, r, v: Lamar(":memory:", holdout=v),
    "Lamar(warmup)": lambda lam, e, r, v: Lamar(":memory:", warmup=v),
    "Lamar(pending_after)": lambda lam, e, r, v: Lamar(":memory:", pending_after=v),
    "add": lambda lam, e, r, v: lam.add(v),
    "get": lambda lam, e, r, v: lam.get(v),
    "experiences(status)": lambda lam, e, r, v: lam.experiences(v),
    "experiences(verdict)": lambda lam, e, r, v: lam.experiences(verdict=v),
    "experiences(scope)": lambda lam, e, r, v: lam.experiences(scope=v),
    "evidence": lambda lam, e, r, v: lam.evidence(v),
    "history": lambda lam, e, r, v: lam.history(v),
    "retire(reason)": lambda lam, e, r, v: lam.retire(e, v),
    "revive(reason)": lambda lam, e, r, v: lam.revive(e, v),
    "erase(contexts)": lambda lam, e, r, v: lam.erase(e, contexts=v),
    "recall(context)": lambda lam, e, r, v: lam.recall(v),
    "recall(k)": lambda lam, e, r, v: lam.recall({"project": "x"}, k=v),
    "recall(candidates)": lambda lam, e, r, v: lam.recall({"project": "x"}, candidates=v),
    "report(episode)": lambda lam, e, r, v: lam.report(v, Signal.SHIPPED),
    "report(signal)": lambda lam, e, r, v: lam.report(r.episode_id, v),
    "pending(older_than)": lambda lam, e, r, v: lam.pending(v),
    "pending(now)": lambda lam, e, r, v: lam.pending(now=v),
    "pending(only)": lambda lam, e, r, v: lam.pending(only=v),
    "settle_pending(now)": lambda lam, e, r, v: lam.settle_pending(now=v),
    "expire(reason)": lambda lam, e, r, v: lam.expire(r.episode_id, v),
    "episode": lambda lam, e, r, v: lam.episode(v),
    "sleep(traces)": lambda lam, e, r, v: lam.sleep(traces=v),
    "sleep(trace time)": lambda lam, e, r, v: lam.sleep(
        traces=[{"id": "t", "context": {}, "time": v, "input": "a", "output": "b"}]),
    "sleep(model)": lambda lam, e, r, v: lam.sleep(model=v),
    "sleep(similarity)": lambda lam, e, r, v: lam.sleep(similarity=v),
    "sleep(older_than)": lambda lam, e, r, v: lam.sleep(older_than=v),
    "sleep(model_timeout)": lambda lam, e, r, v: lam.sleep(model_timeout=v),
    "apply(report)": lambda lam, e, r, v: lam.apply(v),
    "apply(only)": lambda lam, e, r, v: lam.apply(lam.sleep(), only=v),
    "whatif(since)": lambda lam, e, r, v: lam.whatif(since=v),
    "whatif(scope)": lambda lam, e, r, v: lam.whatif(scope=v),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_bad_argument_is_a_lamar_error_and_stores_nothing(call: str) -> None:
    refused = 0
    for value in BAD:
        lam, exp_id, rec = _engine()
        before = lam.store.read()
        try:
            CALLS[call](lam, exp_id, rec, value)
        except LamarError as exc:
            assert str(exc), f"{call} with {value!r}: an error with no message"
            assert lam.store.read() == before, f"{call} with {value!r} stored something before refusing"
            refused += 1
        # Anything else (ValueError, TypeError, OverflowError) propagates and fails the test.
    assert refused  # each call has bad values; a sweep that refused none would test nothing


def test_a_negative_age_names_the_argument_and_what_it_takes() -> None:
    lam, _, _ = _engine()
    for value in (-1, -0.5, 10**400):
        with pytest.raises(InvalidArgument, match=r"older_than is an age in seconds, a finite number >= 0"):
            lam.pending(older_than=value)
    assert [p.episode_id for p in lam.pending(older_than=0)] == [p.episode_id for p in lam.pending()]


def test_a_number_too_large_for_a_float_is_refused_like_an_infinity() -> None:
    with pytest.raises(InvalidArgument, match="explore must be a finite number"):
        Lamar(":memory:", explore=10**400)
    lam, _, _ = _engine()
    with pytest.raises(InvalidArgument, match="now is a number of seconds"):
        lam.settle_pending(now=10**400)
    with pytest.raises(InvalidArgument, match=r"similarity must be a number in \(0, 1\]"):
        lam.sleep(similarity=10**400)


def test_a_store_object_is_whatever_satisfies_the_store_protocol() -> None:
    class NoLocation:  # append, read and close, but nowhere to name in errors and stats
        def __init__(self) -> None:
            self._inner = MemoryStore()

        def append(self, events: Any) -> Any:
            return self._inner.append(events)

        def read(self, after: int = 0) -> Any:
            return self._inner.read(after)

        def close(self) -> None:
            pass

    with pytest.raises(StoreError, match=r"a store object with location, append, read and close \(lamar.store.Store\)"):
        Lamar(NoLocation())  # type: ignore[arg-type]
    located = NoLocation()
    located.location = "in-a-list"  # type: ignore[attr-defined]
    assert Lamar(located).stats()["store"] == "in-a-list"  # type: ignore[arg-type]


@pytest.mark.parametrize("field, value", [("holdout", 1.0), ("holdout", "0.1"), ("alpha_helps", 0.0),
                                          ("discount", 10**400), ("explore", math.nan), ("warmup", 0),
                                          ("pending_after", -1.0)])
def test_a_policy_built_by_hand_refuses_a_bad_knob_with_a_lamar_error(field: str, value: Any) -> None:
    # InvalidArgument is also a ValueError and a TypeError, so code that caught those still does.
    with pytest.raises(InvalidArgument, match=field):
        Policy(**{field: value})


@pytest.mark.parametrize("location, option, taken", [
    (":memory:", "bogus", "it takes none"),  # a memory store ignored any keyword
    ("lessons.json", "durable", "its options are ['timeout']"),  # a bare TypeError
    ("lessons.db", "timeut", "its options are ['timeout']"),
])
def test_a_store_option_the_backend_lacks_is_named_with_those_it_takes(
        tmp_path: Path, location: str, option: str, taken: str) -> None:
    with pytest.raises(InvalidArgument, match=re.escape(f"has no option {option!r}; {taken}")):
        ExperienceStore(str(tmp_path / location) if location != ":memory:" else location, **{option: 1})
    assert not any(tmp_path.iterdir())  # refused before a file was made


@pytest.mark.parametrize("location, option, whose, url", [
    ("postgresql://postgres@127.0.0.1:1/test", "namespace", "the PostgreSQL store",
     " or in a PostgreSQL URL (?lamar_namespace=...)"),
    ("lessons.db", "namespace", "the PostgreSQL store", " or in a PostgreSQL URL (?lamar_namespace=...)"),
    ("lessons.db", "pool_size", "the PostgreSQL store", ""),
    ("lessons.db", "timeout", "the store", ""),
])
def test_a_store_option_given_to_the_engine_says_where_it_goes(tmp_path: Path, location: str, option: str,
                                                                 whose: str, url: str) -> None:
    # ExperienceStore(url, namespace="team-a") is how docs/postgres.md opens a namespace: Lamar(url, namespace=...)
    # is the first thing a reader tries, and was told only the engine's tuning keywords. An option only
    # PostgreSQL takes is named as such: given to ExperienceStore("lessons.db", ...) it is refused again.
    where = location if "://" in location else str(tmp_path / location)  # port 1: refused before connecting
    said = f"{option!r} is an option of {whose}, not a tuning keyword of the engine: give it as " \
           f"Lamar(ExperienceStore(location, {option}=...)){url}"
    with pytest.raises(InvalidArgument, match=re.escape(said)):
        Lamar(where, **{option: "team-a" if option == "namespace" else 5})
    assert not any(tmp_path.iterdir())  # and before a file was made


@pytest.mark.parametrize("name", ["lessons.db", "lessons.json"])
@pytest.mark.parametrize("timeout", [None, -1.0, math.inf, 10**400, "30"])
def test_a_file_store_timeout_is_a_finite_number_of_seconds(tmp_path: Path, timeout: Any, name: str) -> None:
    with pytest.raises(InvalidArgument, match="timeout is the seconds to wait"):
        ExperienceStore(str(tmp_path / name), timeout=timeout)
    assert not any(tmp_path.iterdir())  # refused before a file was made
    assert ExperienceStore(str(tmp_path / name), timeout=0).location.endswith(name)


@pytest.mark.parametrize("option, value", [("pool_size", 0), ("pool_size", "4"), ("timeout", None),
                                           ("timeout", math.inf), ("settle_timeout", -1.0)])
def test_a_postgres_option_out_of_range_is_refused_before_connecting(postgres_url: str, option: str,
                                                                     value: Any) -> None:
    # (a bare TypeError, ValueError or OverflowError from psycopg's pool, or accepted and failing later)
    with pytest.raises(InvalidArgument, match=option):
        ExperienceStore(postgres_url, **{option: value})


@pytest.mark.parametrize("given", [":memory:", MemoryStore(), None, object()])
def test_an_integration_piece_given_no_engine_names_itself_and_what_it_takes(given: Any) -> None:
    from lamar.integration import engine

    with pytest.raises(InvalidArgument,
                       match=r"^LamarRetriever takes a Lamar engine first \(Lamar\(\"lessons.db\"\)\); got "):
        engine(given, "LamarRetriever")
    lam = Lamar(":memory:")
    assert engine(lam, "LamarRetriever") is lam


@pytest.mark.parametrize("bad", ["great", 1.5, math.nan, True])
def test_an_outcome_kept_for_later_is_refused_under_its_own_name(bad: Any) -> None:
    from lamar import InvalidReward
    from lamar.integration import outcome

    with pytest.raises(InvalidReward, match=r"^silent_outcome: "):
        outcome(bad, "silent_outcome")
    assert [outcome(good, "silent_outcome") for good in (None, Signal.SHIPPED, "accepted", -0.5)] == [
        None, Signal.SHIPPED, "accepted", -0.5]


_LONG = "ep_" + "x" * 99_990 + "_end"


@pytest.mark.parametrize("call", [
    lambda lam: lam.report(_LONG, Signal.SHIPPED),
    lambda lam: lam.evidence(_LONG),
    lambda lam: lam.get(_LONG),
    lambda lam: lam.edit(_LONG, action="do z", reason="r"),
    lambda lam: lam.erase(_LONG, reason="r"),
    lambda lam: lam.recall({_LONG: 3}),
    lambda lam: lam.recall({"task": [_LONG]}),
    lambda lam: lam.recall({_LONG: "a\x00b"}),
    lambda lam: lam.recall({}, candidates=[_LONG.encode()]),
])
def test_a_long_value_is_echoed_by_its_start_its_end_and_its_length(call):  # type: ignore[no-untyped-def]
    with pytest.raises(LamarError) as raised:
        call(Lamar())
    said = str(raised.value)
    assert len(said) < 1_000
    assert "ep_xxx" in said and "x_end" in said and " characters" in said


def test_a_value_of_normal_length_is_echoed_whole() -> None:
    with pytest.raises(UnknownEpisode) as raised:
        Lamar().report("ep_" + "9" * 120, Signal.SHIPPED)
    assert str(raised.value).startswith(f"no episode {'ep_' + '9' * 120!r} in store :memory:: report")


def test_who_erases_is_held_to_a_reasons_length() -> None:
    lam = Lamar()
    exp_id = lam.add(Experience(precondition="the build fails", action="rebuild"))
    with pytest.raises(InvalidArgument, match="by is 6,001 characters long, at most 6,000"):
        lam.erase(exp_id, by="x" * 6_001)
    assert lam.get(exp_id).action == "rebuild"  # refused before the erase
    assert lam.erase(exp_id, by="x" * 6_000).by == "x" * 6_000


def test_who_erases_is_scrubbed_as_a_reason_is() -> None:
    # A reason was scrubbed, `by` was not: a token pasted as the name stayed in the audit trail,
    # printed by `lamar show` and the UI.
    token = "ghp_" + "a1B2c3D4e5" * 4
    lam = Lamar()
    exp_id = lam.add(Experience(precondition="the build fails", action="rebuild"))
    erased = lam.erase(exp_id, by=f"the DPO {token}", reason=f"a name {token}")
    assert erased.by == "the DPO [REDACTED:github-token]" and erased.reason == "a name [REDACTED:github-token]"
    assert token not in repr([e.data for e in lam.store.read(0)])


@pytest.mark.parametrize("call", [
    lambda lam, i: lam.erase(i, reason="x" * 6_001),
    lambda lam, i: lam.retire(i, "x" * 6_001),
    lambda lam, i: lam.edit(i, action="rebuild twice", reason="x" * 6_001),
    lambda lam, i: lam.expire(lam.recall({"task": "build"}).episode_id, "x" * 6_001),
])
def test_a_reason_is_held_to_a_lessons_length_through_the_api(call: Callable[[Lamar, str], Any]) -> None:
    # The CLI held --reason to 6,000 characters; the API, the UI's form and MCP's erase did not.
    lam = Lamar()
    exp_id = lam.add(Experience(precondition="the build fails", action="rebuild"))
    events = lam.stats()["events"]
    with pytest.raises(InvalidArgument, match="the reason is 6,001 characters long, at most 6,000: say why"):
        call(lam, exp_id)
    assert lam.get(exp_id).action == "rebuild" and lam.get(exp_id).status.value == "active"
    assert lam.stats()["events"] - events <= 1  # expire's own recall at most
    lam.retire(exp_id, "x" * 6_000)


@pytest.mark.parametrize("call", [
    lambda k: Lamar(k=k), lambda k: Lamar().recall({"task": "build"}, k=k),
    lambda k: Lamar().preview({"task": "build"}, k=k),
])
@pytest.mark.parametrize("k", [1_001, 10**12, 10**400, 10**5_000], ids=["1001", "1e12", "1e400", "1e5000"])
def test_k_is_held_to_the_most_slots_with_what_to_pass(call: Callable[[Any], Any], k: int) -> None:
    # A k of 10**5000 raised the ValueError of writing a 5,001-digit int out in the refusal.
    with pytest.raises(InvalidArgument, match=r"at most 1,000 \(more than a prompt holds: pass 1,000"):
        call(k)
    assert Lamar(k=1_000).k == 1_000


def test_an_int_too_long_to_write_out_is_echoed_by_its_size() -> None:
    from lamar._errors import echoed

    assert echoed(-10**5_000) == "a whole number of 16,610 bits"
    with pytest.raises(InvalidArgument, match="draws is a whole number from 1 to 100000; got a whole number of"):
        Lamar().preview({"task": "build"}, draws=10**5_000)
