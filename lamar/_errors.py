"""The one exception tree of Lamar.

    LamarError
    ├── InvalidContext(LamarError, TypeError)      a context that is not a mapping of strings
    ├── InvalidExperience(LamarError, ValueError)  an experience missing its precondition or action
    ├── InvalidReward(LamarError, ValueError)      a reward outside [-1, 1], NaN, or not a Signal
    ├── UnknownEpisode(LamarError, KeyError)       report() on an episode this store never saw
    ├── DuplicateReport(LamarError, ValueError)    a second report of one episode without replace=True
    ├── UnknownExperience(LamarError, KeyError)    an experience id this store does not hold
    ├── StoreError(LamarError, OSError)            a store that cannot be opened, read or written
    │   └── CorruptStore(StoreError)               a store file that does not parse; never overwritten
    ├── EventConflict(LamarError, ValueError)      an event whose unique key the store already holds
    ├── UnknownProposal(LamarError, KeyError)      apply(only=[...]) naming a proposal the report lacks
    ├── StaleProposal(LamarError, RuntimeError)    a sleep proposal whose lessons changed since the report
    ├── InvalidTrace(LamarError, ValueError)       a sleep trace record that breaks the trace format
    ├── InvalidArgument(LamarError, ValueError, TypeError)  an option or argument of the wrong type or range
    ├── InvalidEvent(LamarError, ValueError)       an imported event the API would never have written
    ├── InvalidReport(LamarError, ValueError)      a sleep report (or one of its proposals) that is malformed
    └── ModelError(LamarError, RuntimeError)       a model call that failed or returned nothing usable
"""

from __future__ import annotations


class LamarError(Exception):
    """Root of every error Lamar raises on purpose."""

    def __str__(self) -> str:
        # KeyError quotes its message; the subclasses below want plain sentences.
        return str(self.args[0]) if self.args else ""


class InvalidContext(LamarError, TypeError):
    """A context must be a mapping of non-empty string keys to string values."""


class InvalidExperience(LamarError, ValueError):
    """An experience needs a non-empty precondition and action."""


class InvalidReward(LamarError, ValueError):
    """A reward is a Signal or a finite float in [-1, 1]."""


class UnknownEpisode(LamarError, KeyError):
    """No recall in this store produced that episode id."""


class DuplicateReport(LamarError, ValueError):
    """The episode already has an outcome; pass replace=True to replace it."""


class UnknownExperience(LamarError, KeyError):
    """No experience in this store has that id."""


class StoreError(LamarError, OSError):
    """The store could not be opened, read or written."""


class CorruptStore(StoreError):
    """The store's file does not parse; it was left untouched."""


class EventConflict(LamarError, ValueError):
    """An appended event's unique key is already in the store; nothing was written."""


class UnknownProposal(LamarError, KeyError):
    """A proposal id that the sleep report does not contain."""


class StaleProposal(LamarError, RuntimeError):
    """The lessons a proposal touches changed after the report was made."""


class InvalidTrace(LamarError, ValueError):
    """A trace record is not valid JSON or breaks the trace format; the message names its line."""


class InvalidArgument(LamarError, ValueError, TypeError):
    """An option or argument has the wrong type or is out of range; the message names the valid ones."""


class InvalidEvent(LamarError, ValueError):
    """An event (from a file being imported) that the API would have refused; nothing was written."""


class InvalidReport(LamarError, ValueError):
    """A sleep report, or one of its proposals, is malformed (a hand edit, a truncated file)."""


class ModelError(LamarError, RuntimeError):
    """A model call failed or returned nothing usable."""
