"""The one exception tree of Lamar: `LamarError`, and below it one class per kind of failure that also
subclasses the builtin it refines (docs/api.md, "Errors", draws the tree)."""

from __future__ import annotations

from typing import TypeVar


class LamarError(Exception):
    """Root of every error Lamar raises on purpose.

    >>> from lamar import Lamar, LamarError, Signal
    >>> try: Lamar().report("ep_unknown", Signal.SHIPPED)
    ... except LamarError as exc: print(type(exc).__name__)
    UnknownEpisode
    """

    # The next step the message ends with, for a caller that words its own (the MCP server cuts it
    # by this value, never by its words); empty where the message names none, or where it is final.
    advice: str = ""

    def __str__(self) -> str:
        # KeyError quotes its message; the subclasses below want plain sentences.
        return str(self.args[0]) if self.args else ""


Advised = TypeVar("Advised", bound=LamarError)


def advised(kind: type[Advised], said: str, advice: str) -> Advised:
    """The refusal `kind` of `said` followed by `advice`, which it carries as its `advice`."""
    refusal = kind(said + advice)
    refusal.advice = advice
    return refusal


def echoed(value: object) -> str:
    """`value` as an error message shows it: its repr, or, past a few lines' worth, the start and
    the end of it and its length, so that a message stays readable however much was passed.

    >>> echoed("ep_1")
    "'ep_1'"
    >>> echoed("ep_" + "x" * 99_993 + "_end")
    "'ep_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…xxxxxxxxxxxxxxx_end' (100000 characters)"
    """
    # A message is printed and logged: a credential passed where an id or a string belonged (a
    # token as a context value, bytes, a pasted key) is shown redacted. Only the ends of a long
    # value are shown, so only they are scrubbed, each with the reach a credential needs.
    from lamar.safety.secrets import REACH, scrub

    try:
        text = repr(value)
    except ValueError:  # an int of more digits than Python writes out as text
        bits = value.bit_length() if isinstance(value, int) else 0
        if bits:
            return f"a whole number of {bits:,} bits"
        return f"{a_or_an(type(value).__name__)} that cannot be written out"
    if len(text) <= _ECHOED_WHOLE:
        return scrub(text)[0]
    size = f"{len(value)} characters" if isinstance(value, str) else f"{len(text)} characters written out"
    head, tail = scrub(text[:60 + REACH])[0], scrub(text[-20 - REACH:])[0]
    return f"{_cut(head, 60, head.find('[REDACTED:'))}…{_cut(tail, -20, tail.rfind('[REDACTED:'))} ({size})"


def a_or_an(word: str) -> str:
    """`word` after the article it is read with, for a message that names a type or a field.

    >>> a_or_an("int"), a_or_an("object"), a_or_an("str"), a_or_an("UUID")
    ('an int', 'an object', 'a str', 'a UUID')
    """
    # By the first letter (a private class's underscore is not read), but for the words whose vowel
    # is read as "you" or "wun".
    lower = word.lower().lstrip("_")
    vowel = lower[:1] in ("a", "e", "i", "o", "u") and not lower.startswith(_READ_AS_A)
    return f"{'an' if vowel else 'a'} {word}"


_READ_AS_A = ("uni", "uint", "use", "usu", "uu", "eu", "one")


def warn_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn at the first frame outside the lamar package: the user's call, however deep in Lamar
    the warning is found."""
    import os
    import sys
    import warnings

    # A fixed stacklevel names a line of Lamar when the warning is raised a few calls in, and which
    # call that is varies with the path taken. Python 3.11 has no skip_file_prefixes: the frames are
    # counted here. stacklevel 2 is the caller of this function.
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 2
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def _cut(text: str, at: int, mark: int) -> str:
    """`text[:at]` (or `text[at:]`), but whole through a redaction mark at `mark` that the cut would split."""
    cut = at if at >= 0 else len(text) + at
    close = text.find("]", mark) + 1 if mark >= 0 else 0
    if mark < cut < close:
        cut = close if at >= 0 else mark
    return text[:cut] if at >= 0 else text[cut:]


# Longer than any id Lamar makes or a person types, short enough to read in one message.
_ECHOED_WHOLE = 200


class InvalidContext(LamarError, TypeError):
    """A context must be a mapping of non-empty string keys to string values, 4,000 characters at most.

    >>> from lamar import InvalidContext, Lamar
    >>> try: Lamar().recall({"task": 3})
    ... except InvalidContext as exc: print(exc)
    context value for 'task' must be a string; got int 3 (convert it with str() first)
    """


class InvalidExperience(LamarError, ValueError):
    """An experience needs a non-empty precondition and action.

    >>> from lamar import Experience, InvalidExperience
    >>> try: Experience("", "clear the cache")
    ... except InvalidExperience as exc: print(exc)
    Experience.precondition is empty: say when the lesson applies
    """


class InvalidReward(LamarError, ValueError):
    """A reward is a Signal, its name, or a finite number in [-1, 1] (text such as "-0.5" too).

    >>> from lamar import InvalidReward, Lamar
    >>> lam = Lamar()
    >>> try: lam.report(lam.recall({}).episode_id, 2.0)
    ... except InvalidReward as exc: print(exc)
    reward 2.0 is outside [-1, 1]; scale it or use a Signal
    """


class UnknownEpisode(LamarError, KeyError):
    """No recall in this store produced that episode id.

    >>> from lamar import Lamar, Signal, UnknownEpisode
    >>> try: Lamar().report("ep_unknown", Signal.SHIPPED)
    ... except UnknownEpisode as exc: print(exc)  # doctest: +ELLIPSIS
    no episode 'ep_unknown' in store :memory:: report the episode_id that recall() returned, ...
    """

    # The message's parts, for a caller that words its own advice (the MCP server): the id as it
    # shows it (`shown`) and the store's `location`, then the note naming the kind of id the store
    # holds it as (`held_as`, "lesson": one id passed for the other), then `advice`. Empty where it has none.
    shown: str = ""
    location: str = ""
    note: str = ""
    held_as: str | None = None


class DuplicateReport(LamarError, ValueError):
    """The episode already has an outcome; pass replace=True to replace it.

    >>> from lamar import DuplicateReport, Lamar, Signal
    >>> lam = Lamar()
    >>> episode = lam.recall({}).episode_id
    >>> lam.report(episode, Signal.SHIPPED)
    >>> try: lam.report(episode, Signal.REVERTED)
    ... except DuplicateReport as exc: print(exc)  # doctest: +ELLIPSIS
    episode ep_... was already reported (shipped); pass replace=True to replace that outcome
    >>> lam.report(episode, Signal.REVERTED, replace=True)
    """


class UnknownExperience(LamarError, KeyError):
    """No experience in this store has that id.

    >>> from lamar import Lamar, UnknownExperience
    >>> try: Lamar().get("exp_unknown")
    ... except UnknownExperience as exc: print(exc)
    no experience 'exp_unknown' in store :memory:; Lamar.experiences() lists the lesson ids
    """

    # As UnknownEpisode's; `held_as` is "episode" for an episode's id passed as a lesson's.
    shown: str = ""
    location: str = ""
    note: str = ""
    held_as: str | None = None


class StoreError(LamarError, OSError):
    """The store could not be opened, read or written.

    >>> from lamar import Lamar, StoreError
    >>> try: Lamar(42)
    ... except StoreError as exc: print(exc)  # doctest: +ELLIPSIS
    Lamar(store) takes a location (':memory:', a .json or .db path, a postgresql:// URL) or a store object ...
    """


class CorruptStore(StoreError):
    """The store's file does not parse; it was left untouched.

    >>> import pathlib, tempfile
    >>> from lamar import CorruptStore, Lamar
    >>> path = pathlib.Path(tempfile.mkdtemp(), "experience.json")
    >>> _ = path.write_text("{not json")
    >>> try: Lamar(path)
    ... except CorruptStore as exc: print(exc)  # doctest: +ELLIPSIS
    /.../experience.json is not valid JSON (...); it was left untouched. Restore it from a backup ...
    >>> path.read_text()
    '{not json'
    """


class EventConflict(LamarError, ValueError):
    """An appended event's unique key is already in the store; nothing was written.

    >>> from lamar import EventConflict
    >>> from lamar.store import Event, MemoryStore
    >>> store = MemoryStore()
    >>> _ = store.append([Event("status", {"id": "exp_1", "status": "retired", "reason": "r"}, key="k")])
    >>> try: store.append([Event("status", {"id": "exp_1", "status": "active", "reason": "r"}, key="k")])
    ... except EventConflict as exc: print(exc)
    event key 'k' is already in the store
    """


class UnknownProposal(LamarError, KeyError):
    """A proposal id that the sleep report does not contain.

    >>> from lamar import Lamar, UnknownProposal
    >>> lam = Lamar()
    >>> try: lam.apply(lam.sleep(), only=["merge_unknown"])
    ... except UnknownProposal as exc: print(exc)
    the report has no proposal 'merge_unknown'; its ids are []
    """


class StaleProposal(LamarError, RuntimeError):
    """The lessons a proposal touches changed after the report was made.

    `Lamar.apply` does not raise it: it skips a stale proposal and gives the reason in
    `ApplyResult.skipped`, so that the rest of a report still applies. It stays in the tree so
    that code which catches it keeps running.

    >>> from lamar import Experience, Lamar
    >>> lam = Lamar(seed=0)
    >>> kept = lam.add(Experience("the build fails after a bump", "clear DerivedData"))
    >>> twin = lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    >>> report = lam.sleep()  # proposes to merge the two
    >>> lam.retire(twin)
    >>> [why for _, why in lam.apply(report).skipped] == [f"lesson {twin} was retired after the report was made"]
    True
    """


class InvalidTrace(LamarError, ValueError):
    """A trace record is not valid JSON or breaks the trace format; the message names its line.

    >>> from lamar import InvalidTrace, Lamar
    >>> from lamar.models import ScriptedModel
    >>> try: Lamar().sleep(traces=[{"id": "t1"}], model=ScriptedModel([]))
    ... except InvalidTrace as exc: print(exc)
    item 1: missing required keys ['context']
    """


class InvalidArgument(LamarError, ValueError, TypeError):
    """An option or argument has the wrong type or is out of range; the message names the valid ones.

    >>> from lamar import InvalidArgument, Lamar
    >>> try: Lamar().pending(older_than=-1)
    ... except InvalidArgument as exc: print(exc)
    older_than is an age in seconds, a finite number >= 0 (or None); got -1
    """


class InvalidEvent(LamarError, ValueError):
    """An event (from a file being imported) that the API would have refused; nothing was written.

    >>> from lamar import InvalidEvent
    >>> from lamar.store import Event, MemoryStore
    >>> from lamar.store.transfer import transfer
    >>> source, target = MemoryStore(), MemoryStore()
    >>> _ = source.append([Event("outcome", {"episode": "ep_1", "reward": 5.0}, key="outcome:ep_1")])
    >>> try: transfer(source, target)
    ... except InvalidEvent as exc: print(exc)  # doctest: +ELLIPSIS
    :memory:: event #1 ('outcome') is refused: 'reward' must be a number in [-1, 1]; got 5.0; nothing was copied...
    >>> target.read()
    []
    """


class InvalidReport(LamarError, ValueError):
    """A sleep report, or one of its proposals, is malformed (a hand edit, a truncated file).

    >>> from lamar import InvalidReport, SleepReport
    >>> try: SleepReport.from_dict({"format": "lamar-sleep-report", "proposals": [{"id": "merge_1"}]})
    ... except InvalidReport as exc: print(exc)
    proposal 'merge_1': 'kind' must be a string; got None
    """


class ModelError(LamarError, RuntimeError):
    """A model call failed or returned nothing usable.

    Sleep does not raise it: a failed mining call is in `SleepReport.mining_error`.

    >>> from lamar import Lamar
    >>> from lamar.models import ScriptedModel
    >>> trace = {"id": "t1", "context": {}, "input": "fix the build", "output": "cleared the cache"}
    >>> print(Lamar().sleep(traces=[trace], model=ScriptedModel([RuntimeError("offline")])).mining_error)
    model 'scripted' failed (RuntimeError: offline); nothing was changed: check the model's setup and run sleep again
    """
