"""`guarded`: an engine call whose refusals become tool errors that tell the model what to do next
(call another tool, or tell the user), where the engine's own message addresses a person at a prompt."""

from __future__ import annotations

import errno
import json
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.exceptions import ToolError

from lamar import CorruptStore, DuplicateReport, LamarError, StoreError, UnknownEpisode, UnknownExperience
from lamar.listing import named

if TYPE_CHECKING:
    from lamar import Lamar

# The errors a file system gives a write to a read-only file, folder or mount.
_READ_ONLY_CODES = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
# whatif's advice (lamar.whatif.log.ADVICE) names commands and a `since` the tool does not take: a model
# would call it with `since` and be refused again. Each is said in the tool's terms, with what widening adds.
_WHATIF_STEPS = {"report": "(report once the human's reaction to a recalled task is known)",
                 "recall": "(recall for each task, then report once the human's reaction is known)",
                 "add": "(propose_lesson; recall with dry_run shows which are eligible)",
                 "eligible": "the episodes scope selects: widen it to episodes where it was, or leave it out",
                 "coin": "and ask again once episodes with a coin are logged"}
_WIDEN = ", or widen scope or leave it out"


def guarded(call: Any, store: object) -> Any:
    """Run `call`, an engine call on `store`; its refusals become tool errors a model can act on."""
    try:
        return call()
    except DuplicateReport as exc:
        said = str(exc)
        if not exc.advice:  # final (compacted): nobody can replace it, so nothing is offered
            raise ToolError(said) from exc
        # The engine's advice (replace=True) is not offered here: a model would use it to change its mind.
        raise ToolError(f"{said.removesuffix(exc.advice)}; an episode is reported once and the first report "
                        "stands (a person can replace it with `lamar report EPISODE SIGNAL --replace`)") from exc
    except UnknownEpisode as exc:
        # The engine's advice names the Python API's options: the message before it (the id, the store,
        # and its note that the id is a lesson's) stays whole.
        said = str(exc).removesuffix(exc.advice)
        raise ToolError(f"{said}: pass the episode_id that recall() returned for this task (an episode that sleep "
                        "has since compacted is gone, and then there is nothing left to report)") from exc
    except UnknownExperience as exc:
        raise ToolError(_no_lesson(exc)) from exc
    except StoreError as exc:
        raise ToolError(_store_failure(exc, store)) from exc
    except LamarError as exc:
        from lamar.whatif.ask import unknown_lesson

        said = str(exc)
        if (cause := unknown_lesson(exc)) is not None:
            said = said.removesuffix(exc.advice).removesuffix(cause.note) + _no_lesson(cause, "")
        elif (step := _whatif_step(exc.advice)) is not None:
            said = said.removesuffix(exc.advice) + step
        raise ToolError(said) from exc


def _whatif_step(advice: str) -> str | None:
    """whatif's `advice` said in the tool's terms, found by its value (None for other advice)."""
    from lamar.whatif.log import ADVICE, WIDEN

    for step, said in ADVICE.items():
        if advice and advice == said:
            return _WHATIF_STEPS[step]
        if advice and step in WIDEN and advice == said + WIDEN[step]:
            return _WHATIF_STEPS[step] + _WIDEN
    return None


def _no_lesson(exc: UnknownExperience, head: str | None = None) -> str:
    """The engine's refusal of a lesson id in the tools' words: its advice and note go (the id is shown whole,
    whatever it holds), a lesson is called one, and lessons() lists them; `head`: what comes before the note."""
    if head is None:
        # Built from the refusal's parts; one with none (a Recall passed) is kept whole.
        head = f"no lesson {exc.shown} in store {exc.location}" if exc.shown else str(exc).removesuffix(exc.advice)
    if exc.held_as == "episode":
        head += " (that is an episode id, as recall's episode_id, not a lesson id)"
    return f"{head}; call lessons() to list the lesson ids"


def lesson_named(lamar: Lamar, given: str) -> str:
    """The lesson id `given` names: itself, or the one id it is the start of, as on the command line (an unknown
    one is left for the tool's own read to refuse). Raises InvalidArgument for a start several ids share."""
    try:
        lamar.get(given)  # an exact id, the usual case, without listing every lesson
        return given
    except UnknownExperience:
        return named((e.id for e in lamar.experiences()), given) or given


def _store_failure(exc: StoreError, store: object) -> str:
    """What a model does when the store itself failed: it cannot fix the store, the user can."""
    from lamar.store import base

    said = str(exc)
    if _read_only(exc, store):
        # The store's advice (open a writable copy, erase again) is no use to a model until the store can be
        # written: found by its values, the one inside the message, the other its `advice`.
        said = said.replace(f"; {base.WRITABLE_COPY}", "").removesuffix(exc.advice).removesuffix("; ")
        return (f"{said}; nothing was stored. "
                "Tell the user that their Lamar store "
                f"cannot be written here; recall with dry_run=true, lessons, evidence and whatif still read it. "
                "Once the store can be written, restarting this MCP server (reopening the client) records "
                "episodes and lessons again; `lamar mcp --read-only` serves it with the reading tools alone")
    if exc.advice and exc.advice in (base.WRITER_AGAIN, base.ERASE_AGAIN, base.ERASE_AFTER):
        return said  # advice the model can follow itself (a lock, a race): call the tool again
    reopen = "open the store again" in said or isinstance(exc, CorruptStore)
    return (f"{said}. The store failed, not this call: tell the user what this says"
            + ("; once it is fixed, restarting this MCP server (reopening the client) opens the store again"
               if reopen else ""))


def _read_only(exc: StoreError, store: object) -> bool:
    """A store that cannot be written here: opened read-only, or a write the file system or SQLite refused."""
    import sqlite3

    from lamar.store.sqlite import SqliteStore

    if isinstance(exc, CorruptStore):  # a read that failed on a damaged file, which a writable one would too
        return False
    if isinstance(store, SqliteStore) and store.read_only:
        return True
    cause = exc.__cause__
    if isinstance(cause, OSError) and cause.errno in _READ_ONLY_CODES:
        return True
    return (isinstance(cause, sqlite3.OperationalError)
            and getattr(cause, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_READONLY)


def shown(value: Any) -> str:
    """A bad argument as a refusal quotes it: JSON (a string in quotes), cut to 60 characters."""
    text = json.dumps(value, default=repr) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["guarded", "shown"]
