"""Lessons: `Experience` (when X, do Y, because Z), the `Scope` it applies in, its `Status`."""

from __future__ import annotations

import dataclasses
import enum
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lamar._errors import InvalidContext, InvalidExperience, a_or_an, echoed
from lamar.storable import storable_copy, storable_problem, text_problem, time_problem

Context = Mapping[str, str]


MAX_CONTEXT_CHARS = 4_000
"""Most characters a context's keys and values may hold together, as many as a lesson's scope: a
context names a few short features (project, language, task, error class), and every episode keeps it."""


def check_context(context: object, *, capped: bool = True) -> dict[str, str]:
    """Return `context` as a plain dict, or raise InvalidContext saying what is wrong.

    `capped=False` checks only its form: a scope (held to its own limit) and a context read back
    from a log that a version without the limit wrote.

    >>> check_context({"project": "trace"})
    {'project': 'trace'}
    """
    if not isinstance(context, Mapping):
        raise InvalidContext(
            f"a context must be a mapping of strings, like {{'project': 'trace'}}; "
            f"got {type(context).__name__}"
        )
    out: dict[str, str] = {}
    for key, value in context.items():
        if not isinstance(key, str) or not key:
            raise InvalidContext(f"context keys must be non-empty strings; got {echoed(key)}")
        if value is None:  # str() would make it the label "None", which no lesson's scope means
            raise InvalidContext(f"context value for {echoed(key)} is None (null): leave the key out when it "
                                 "has no value")
        if not isinstance(value, str):
            # A number is a label once written out; str() of a list or a mapping is no label a scope holds.
            scalar = isinstance(value, (int, float))
            raise InvalidContext(
                f"context value for {echoed(key)} must be a string; got {type(value).__name__} "
                f"{echoed(value)} ({'convert it with str() first' if scalar else 'give one short label, a key each'})"
            )
        problem = text_problem(key) or text_problem(value)
        if problem:
            raise InvalidContext(f"context entry {echoed(key)} {problem}")
        out[key] = value
    size = sum(len(k) + len(v) for k, v in out.items()) if capped else 0
    if size > MAX_CONTEXT_CHARS:
        longest = max(out, key=lambda k: len(k) + len(out[k]))
        raise InvalidContext(
            f"the context is {size:,} characters long (keys and values together; {len(out):,} keys, the longest "
            f"entry {echoed(longest)}), at most {MAX_CONTEXT_CHARS:,}: a context names a few short features "
            "(project, language, task, error class); pass a label derived from a long text, not the text itself"
        )
    return out


def context_within(holder: object, key: str) -> Mapping[str, Any] | None:
    """The context an application object carries: its `key` entry or attribute if it has one,
    else the whole of it (a mapping, a dataclass or a pydantic model); None when absent.

    A framework's runtime context (LangChain's, LangGraph's) reaches Lamar through this; the
    caller checks it. Read whole, it must hold strings only, or InvalidContext names `key`.

    >>> context_within({"lamar_context": {"project": "x"}, "user": "u"}, "lamar_context")
    {'project': 'x'}
    """
    if holder is None:
        return None
    inner = holder.get(key) if isinstance(holder, Mapping) else getattr(holder, key, None)
    if inner is not None:
        return inner  # type: ignore[no-any-return]
    whole: Mapping[str, Any] | None = None
    if isinstance(holder, Mapping):
        whole = holder
    elif dataclasses.is_dataclass(holder) and not isinstance(holder, type):
        # Its own fields, never `asdict`: that deep-copies what an application keeps in its
        # runtime context (a database connection, a client, a lock), or fails on it.
        whole = {field.name: getattr(holder, field.name) for field in dataclasses.fields(holder)}
    elif callable(dump := getattr(holder, "model_dump", None)):  # a pydantic model
        whole = dump()
    for name, value in (whole or {}).items():
        if value is None:  # str() would make it the label "None", which no lesson's scope means
            raise InvalidContext(f"context value for {echoed(key)} is None (null): leave the key out when it "
                                 "has no value")
        if not isinstance(value, str):
            raise InvalidContext(
                f"the runtime context ({type(holder).__name__}) is read whole as Lamar's context, and its "
                f"{name!r} holds {a_or_an(type(value).__name__)}, not a string: give it a {key!r} field holding a "
                "mapping of strings (then only that is read), or pass Lamar a context of its own")
    return _fitted(dict(whole), key) if whole is not None else None


def _fitted(whole: dict[str, str], key: str) -> dict[str, str]:
    """A context read whole, fitted: a long text there (a user's message, a pasted log) is no
    feature, and it must not fail the turn that an application, not Lamar, filled it in."""
    return fit_context(whole, where="the runtime context, read whole as Lamar's context,",
                       advice=f"give it a {key!r} field holding the few short features to recall by "
                       "(then only that is read)")


_LABEL_ADVICE = ("a context names a few short features (project, language, task, error class): pass a label "
                 "derived from a long text, not the text itself")


def fit_context(context: object, *, where: str, advice: str = _LABEL_ADVICE,
                warn: Callable[[str], object] | None = None) -> dict[str, str]:
    """`context` checked as `check_context` does, its longest entries left out until it fits in
    MAX_CONTEXT_CHARS, with one warning naming them: for a context that reaches Lamar inside an
    agent's loop, where a long value on some turn must not fail the turn (`Lamar.recall` refuses it).

    Args:
        context: a mapping of strings.
        where: what the warning calls the context ("the context function's result").
        advice: what the warning tells the application to do instead.
        warn: called with the warning's text instead of `warnings.warn` (a hook writes it to its log).

    Returns:
        A plain dict of at most MAX_CONTEXT_CHARS characters.

    Raises:
        InvalidContext: `context` is not a mapping of non-empty string keys to string values.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     fit_context({"task": "build", "log": "x" * 5_000}, where="the state's context")
    {'task': 'build'}
    >>> print(seen[0].message)  # doctest: +ELLIPSIS
    the state's context is over a context's 4,000 characters: left out 'log' (5,000 characters) ...
    """
    fitted = check_context(context, capped=False)
    size = sum(len(k) + len(v) for k, v in fitted.items())
    if size <= MAX_CONTEXT_CHARS:
        return fitted
    left_out: list[str] = []
    for name in sorted(fitted, key=lambda k: len(k) + len(fitted[k]), reverse=True):
        if size <= MAX_CONTEXT_CHARS:
            break
        size -= len(name) + len(fitted[name])
        left_out.append(f"{echoed(name)} ({len(fitted.pop(name)):,} characters)")
    message = (f"{where} is over a context's {MAX_CONTEXT_CHARS:,} characters: left out {', '.join(left_out)} "
               f"and kept the rest; {advice}")
    if warn is not None:
        warn(message)
    else:
        import warnings

        warnings.warn(message, UserWarning, stacklevel=2)
    return fitted


class Scope(Mapping[str, str]):
    """Where a lesson applies: every field must equal the context's value; absent fields match anything.

    >>> s = Scope(project="trace", language="swift")
    >>> s.matches({"project": "trace", "language": "swift", "task": "build"})
    True
    >>> s.matches({"project": "trace"})
    False
    >>> Scope().matches({"anything": "at all"})
    True
    """

    __slots__ = ("_items",)
    _items: tuple[tuple[str, str], ...]

    def __init__(self, fields: Mapping[str, str] | None = None, /, **kwargs: str) -> None:
        if fields is not None and not isinstance(fields, Mapping):
            raise InvalidContext(f"Scope takes a mapping of strings, like Scope(project='trace'); "
                                 f"got {type(fields).__name__}")
        merged = {**(fields or {}), **kwargs}
        try:
            # Lessons are held to their scope limit where they come in; a scope folded from the log is not.
            checked = check_context(merged, capped=False)
        except InvalidContext as exc:
            raise InvalidContext(f"invalid scope: {exc}") from None
        object.__setattr__(self, "_items", tuple(sorted(checked.items())))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Scope is immutable")

    def matches(self, context: Mapping[str, str]) -> bool:
        """True when every field of this scope equals the context's value."""
        return all(context.get(key) == value for key, value in self._items)

    @property
    def items_key(self) -> tuple[tuple[str, str], ...]:
        """The sorted (key, value) pairs: a hashable identity of the scope."""
        return self._items

    def __getitem__(self, key: str) -> str:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Scope):
            return self._items == other._items
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._items)
        return f"Scope({inner})"


class Status(str, enum.Enum):
    """Life of a lesson: mined candidates and hand-added lessons are both tried; retired ones never.

    >>> from lamar import Experience, Lamar, Status
    >>> lam = Lamar()
    >>> eid = lam.add(Experience("the build fails", "clear the cache"))
    >>> lam.retire(eid, "the cache is gone")
    >>> lam.get(eid).status is Status.RETIRED, [e.id for e in lam.experiences(status="retired")] == [eid]
    (True, True)
    >>> str(Status.ACTIVE), Status("candidate")
    ('active', <Status.CANDIDATE: 'candidate'>)
    """

    CANDIDATE = "candidate"
    ACTIVE = "active"
    RETIRED = "retired"

    def __str__(self) -> str:
        return self.value


def new_id(prefix: str) -> str:
    """A globally unique id; it comes from os.urandom, so seeded runs never collide across processes."""
    # os.urandom rather than uuid4: the same 64 random bits, without importing uuid (and
    # platform) on every cold start of a hook.
    return f"{prefix}_{os.urandom(8).hex()}"


@dataclasses.dataclass(frozen=True)
class Experience:
    """A lesson: when `precondition`, do `action`, because `rationale`; eligible within `scope`.

    >>> e = Experience(precondition="the build fails after a bump", action="clear DerivedData")
    >>> e.status, e.scope
    (<Status.ACTIVE: 'active'>, Scope())

    Frozen and hashable: lessons from several recalls go in a set or a dict's keys. `add` stores
    a copy of the provenance, so changing the caller's afterwards changes nothing stored; and
    `get`, `experiences`, `recall`, `preview` and `edit` return copies, so changing a returned
    lesson's provenance leaves the engine's lesson as it was.

    >>> len({e, Experience("the build fails after a bump", "clear DerivedData")})
    1
    """

    precondition: str
    action: str
    rationale: str = ""
    scope: Scope = dataclasses.field(default_factory=Scope)
    status: Status = Status.ACTIVE
    id: str = ""
    provenance: Mapping[str, Any] = dataclasses.field(default_factory=lambda: {"source": "manual"})
    created_at: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or text_problem(self.id) or self.id != self.id.strip():
            raise InvalidExperience(
                f"Experience.id must be a string without surrounding spaces (or \"\" for a new id); got {self.id!r}")
        for name in ("precondition", "action", "rationale"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise InvalidExperience(f"Experience.{name} must be a string; got {type(value).__name__}")
        if not self.precondition.strip():
            raise InvalidExperience("Experience.precondition is empty: say when the lesson applies")
        if not self.action.strip():
            raise InvalidExperience("Experience.action is empty: say what to do")
        if not isinstance(self.scope, Scope):
            if isinstance(self.scope, Mapping):
                object.__setattr__(self, "scope", Scope(self.scope))
            else:
                raise InvalidExperience(f"Experience.scope must be a Scope; got {type(self.scope).__name__}")
        try:
            object.__setattr__(self, "status", Status(self.status))
        except ValueError:
            raise InvalidExperience(
                f"Experience.status must be one of {[s.value for s in Status]}; got {self.status!r}"
            ) from None
        if not isinstance(self.provenance, Mapping):
            raise InvalidExperience("Experience.provenance must be a mapping")
        problem = storable_problem(self.provenance)
        if problem:
            raise InvalidExperience(f"Experience.provenance {problem}")
        problem = time_problem(self.created_at)
        if problem:
            raise InvalidExperience(f"Experience.created_at {problem} (0 means: now)")

    def __hash__(self) -> int:
        # Frozen, so a value; the provenance (a dict) is left out of the hash, as equal lessons
        # have equal provenances anyway.
        return hash((self.id, self.precondition, self.action, self.rationale, self.scope, self.status,
                     self.created_at))

    def with_identity(self) -> Experience:
        """This experience with an id and a creation time, as the store keeps it."""
        return dataclasses.replace(
            self,
            id=self.id or new_id("exp"),
            created_at=self.created_at or time.time(),
        )

    def copy(self) -> Experience:
        """This lesson with a provenance of its own: what the engine returns, so that changing it
        (a dict inside) leaves the lesson the engine holds as it is."""
        twin = object.__new__(type(self))  # no __post_init__: the fields were checked once
        twin.__dict__.update(self.__dict__, provenance=storable_copy(self.provenance))
        return twin

    @property
    def version(self) -> int:
        """1 for a lesson as added, then one more per edit (`Lamar.edit`), kept in its provenance."""
        return int(self.provenance.get("version", 1))

    def render(self) -> str:
        """'When X, do Y, because Z.' in one line; a part written as its own sentence ("The build
        fails", "Run ruff!") reads on in lower case and without its end mark, as `lamar.sentence` says,
        and a precondition or rationale that opens with its own "When" or "because" says it once.
        Only what is shown changes: ids and duplicates go by the stored texts."""
        from lamar.sentence import sentence

        return sentence(self.precondition, self.action, self.rationale)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "precondition": self.precondition,
            "action": self.action,
            "rationale": self.rationale,
            "scope": dict(self.scope),
            "status": self.status.value,
            "provenance": storable_copy(self.provenance),  # what is stored shares nothing with the caller's
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Experience:
        """The experience `to_dict` wrote; InvalidExperience says what is missing or mistyped."""
        if not isinstance(data, Mapping):
            raise InvalidExperience(f"an experience is a mapping of its fields; got {type(data).__name__}")
        for name in ("precondition", "action"):
            if name not in data:
                raise InvalidExperience(f"the experience has no {name!r}: say when it applies and what to do")
        scope = data.get("scope") or {}
        if not isinstance(scope, Mapping):
            raise InvalidExperience(f"Experience.scope must be a mapping of strings; got {type(scope).__name__}")
        provenance = data.get("provenance") or {"source": "manual"}
        if not isinstance(provenance, Mapping):
            raise InvalidExperience(f"Experience.provenance must be a mapping; got {type(provenance).__name__}")
        return cls(
            precondition=data["precondition"],
            action=data["action"],
            rationale=data.get("rationale", ""),
            scope=Scope(scope),
            status=data.get("status", "active"),
            id=data.get("id", ""),
            provenance=dict(provenance),
            created_at=data.get("created_at", 0.0),
        )
