"""`LamarMemoryBlock`: lessons chosen by outcome as a block of LlamaIndex `Memory`, one episode
per user turn however often the agent reads its memory in that turn."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from itertools import islice
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock

from lamar import (
    DuplicateReport,
    InvalidArgument,
    InvalidReward,
    Recall,
    Signal,
    StoreError,
    UnknownEpisode,
)
from lamar.experience import check_context, fit_context
from lamar.integration import outcome as checked_outcome
from lamar.integration import settled_as_failed
from lamar_llamaindex.nodes import engine, slots
from lamar_llamaindex.outcomes import record_episode

Outcome = Signal | float | str
ContextSource = Mapping[str, str] | Callable[[list[ChatMessage]], Mapping[str, str]] | None
_SESSIONS_KEPT = 4096
# The code a CodeActAgent runs, as its prompt asks for it and its parser finds it: the message after one is the
# code's result, whatever words the agent puts before it.
_CODE = re.compile(r"<execute>(.*?)</execute>", re.DOTALL)
_CODE_RESULT = "Result of executing the code given:"  # its words: all a fresh process has for a flushed answer
log = logging.getLogger(__name__)


class _Turn:
    __slots__ = ("before", "length", "marker", "previous", "recall", "reported", "run", "users", "waiting")

    def __init__(self, marker: str, recall: Recall | None, length: int, users: int, run: str | None = None,
                 before: _Turn | None = None, waiting: bool = False) -> None:
        self.marker = marker
        self.recall = recall  # None: the turn went on without lessons (its recall failed), nothing to report
        self.reported = recall is None
        self.length = length  # messages the session has held (flushed ones too) at the turn's last read
        self.users = users  # user turns the session had held then, this one included
        self.run = run  # the workflow run the turn began in (None outside one)
        # Begun before its user message was in the history (a workflow's search first): the next read that
        # finds a new user message takes it as this turn's, and reports `before` with it.
        self.waiting = waiting
        self.before = before
        self.previous: _Turn | None = None  # the session's turn before it: what a new user message reacts to


class LamarMemoryBlock(BaseMemoryBlock[str]):
    """A `Memory` block whose content is the lessons Lamar recalls for the current turn.

    ``Memory.from_defaults(session_id=..., memory_blocks=[LamarMemoryBlock(lamar=lam, context=...)])``
    and pass the memory to an agent (``agent.run(msg, memory=memory)``). An agent reads its
    memory at every step of a turn; the block recalls once per user turn (a turn starts when
    a new user message arrives) and returns the same lessons until the next one, so a turn is
    one episode. Turns are told apart per `Memory` session. Lamar's search tool (`create_lamar_tools`)
    in the same agent joins the turn: whichever recalls first, the turn stays one episode. A workflow
    run is a new input: a read or search in another run than the turn's, before the run's user message
    is in memory, begins its turn, and the read that shows that message joins it.

    Report a turn with `report` (or `lam.report(block.episode_id(session), ...)`). When its
    outcome shows only in the next user message, pass `outcome`: a function of that message
    returning a Signal (or None); the previous turn is reported before the new one recalls.
    `silent_outcome` is what the previous turn gets when that function finds nothing (None
    leaves it pending, listed by `lam.pending()`). Wrap a run in
    ``track_episodes(lamar=lam)`` to have a failed run's episode expired. A store that cannot
    be written, or a `context` or `outcome` function that raises, costs the turn its lessons or
    that outcome, never the turn (one warning is logged; a failed recall is not tried again in
    the same turn).

    Args:
        lamar: the `Lamar` engine.
        context: a mapping of strings, or a function of the chat messages returning one.
        k: lesson slots per turn (default: the engine's `k`).
        outcome: reads the previous turn's outcome from the new user message.
        silent_outcome: the previous turn's outcome when `outcome` finds none.

    Raises:
        InvalidArgument: `lamar` is not a Lamar engine, `k` is not a whole number >= 0, or
            `outcome` is not a function.
        InvalidReward: `silent_outcome` is not an outcome.
    """

    name: str = Field(default="lamar_lessons", description="The block's name in the memory template.")
    lamar: Any = Field(description="The Lamar engine (typed Any: it is not a pydantic model).")
    context: Any = None
    k: int | None = None
    outcome: Any = None
    silent_outcome: Any = None

    _turns: OrderedDict[str, _Turn] = PrivateAttr(default_factory=OrderedDict)
    # User turns `Memory` has moved out of a session's chat history (a token limit): a turn is
    # counted over the whole session, or a flush would look like a new turn to the next read. The last
    # one's words too, as their digest (a session's long paste is not kept): a CodeActAgent's code result
    # can open the history its turn's message has left.
    # Whether the last message moved out ran code, too: the code result after it then opens the history.
    _flushed: OrderedDict[str, tuple[int, int, str, bool]] = PrivateAttr(default_factory=OrderedDict)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    # Held from the look for the turn's episode to its recall: two reads of one turn at once
    # would otherwise both find none and log two episodes, one of them never reported.
    _turning: Any = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, lamar: Any = None, /, **data: Any) -> None:
        if lamar is not None:  # the engine may come first, like every Lamar integration
            data["lamar"] = lamar
        engine(data.get("lamar"), "LamarMemoryBlock")
        slots(data.get("k"))
        if data.get("outcome") is not None and not callable(data["outcome"]):
            raise InvalidArgument(f"outcome must be a function of the new user message, or None; "
                                  f"got {type(data['outcome']).__name__}")
        if data.get("silent_outcome") is not None:
            checked_outcome(data["silent_outcome"], "silent_outcome")  # refused now, not in a later turn of the agent
        if data.get("context") is not None and not callable(data["context"]):
            data["context"] = check_context(data["context"])
        super().__init__(**data)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        return await asyncio.to_thread(self.recall_turn, messages or [], block_kwargs.get("session_id"))

    async def aput(self, messages: list[ChatMessage], from_short_term_memory: bool = False,
                   session_id: str | None = None) -> None:
        if from_short_term_memory:  # counted even when the block declines short-term messages
            key = session_id or ""
            with self._lock:
                turns, length, last, code = self._flushed.get(key, (0, 0, _NOTHING, False))
                users = _user_turns(messages, code)
                self._flushed[key] = (turns + len(users), length + _length(messages),
                                      _digest(users[-1]) if users else last,
                                      _runs_code(messages[-1]) if messages else code)
                self._flushed.move_to_end(key)
                while len(self._flushed) > _SESSIONS_KEPT:
                    self._flushed.popitem(last=False)
        await super().aput(messages, from_short_term_memory=from_short_term_memory, session_id=session_id)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        return None  # lessons come from outcomes, not from the chat that flows past

    def recall_turn(self, messages: list[ChatMessage], session_id: str | None = None) -> str:
        """The lessons block for the turn these messages are in (recalling once per turn)."""
        rec = self.turn_recall(messages, session_id)
        return rec.as_prompt() if rec is not None else ""

    def turn_recall(self, messages: list[ChatMessage], session_id: str | None = None,
                    recall: Callable[[], Recall | None] | None = None) -> Recall | None:
        """The `Recall` of the turn these messages are in (None when it has none): the first read of
        a turn recalls, with `recall` in place of the block's own when given (Lamar's search tool
        passes its own), and every later one, block or tool, gets that episode."""
        with self._turning:
            return self._recall_turn(messages, session_id, recall)

    def session_recall(self, session_id: str | None, recall: Callable[[], Recall | None]) -> Recall | None:
        """The `Recall` of the session's latest turn, for a reader that cannot see the chat history (Lamar's
        sync search when the chat store answers only on the agent's event loop); `recall` when the session
        has had no turn, or its turn has none yet."""
        with self._turning:
            run = _workflow_run()
            with self._lock:
                turn = self._turns.get(session_id or "")
            if turn is None or _other_run(turn, run):
                # The turn's first reader: the block's next read, which sees the history, takes it as its turn.
                rec = recall()
                self._begin(session_id or "", _Turn(turn.marker, rec, turn.length, turn.users, run, turn, True)
                            if turn is not None else _Turn("", rec, 0, 0, run, None, True))
                return rec
            if turn is not None and turn.recall is not None:
                return turn.recall
            rec = recall()
            if turn is not None:
                with self._lock:
                    turn.recall, turn.reported = rec, rec is None
            return rec

    def _recall_turn(self, messages: list[ChatMessage], session_id: str | None,
                     recall: Callable[[], Recall | None] | None) -> Recall | None:
        key = session_id or ""
        run = _workflow_run()
        with self._lock:
            flushed_turns, flushed_length, flushed_last, code = self._flushed.get(key, (0, 0, _NOTHING, False))
            users = _user_turns(messages, code)
            count = flushed_turns + len(users)
            marker = f"{count}:{_digest(users[-1]) if users else flushed_last}"
            length = flushed_length + _length(messages)
            turn = self._turns.get(key)
            # A history shorter than at the turn's last read was reset (`Memory.reset()`, a chat
            # engine's `reset()`): a conversation opening as the last one did is a new turn. So is
            # another workflow run with no new user message in view: its message is not in memory yet.
            same = turn is not None and turn.marker == marker and length >= turn.length
            if same and not _other_run(turn, run) or turn is not None and turn.waiting and turn.marker != marker:
                current = turn
            else:
                current = None
        if current is not None:
            if current.waiting and current.marker != marker:
                self._arrived(current, users, marker, length, count)
            current.length = length
            if current.recall is not None or recall is None:
                return current.recall
            # The block could not recall in this turn: a search that can is the turn's episode.
            rec = recall()
            with self._lock:
                current.recall, current.reported = rec, rec is None
            return rec
        waiting = same or count == 0  # begun before its user message is in view
        # The new message answers this turn only when it comes next. Turns in between were read by
        # another process (a restart, another web worker holding the session): its words are about
        # a later answer, so the old turn stays pending. A reset history starts over: it comes next.
        if turn is not None and not waiting and not turn.reported and users and (
                count <= turn.users + 1 or length < turn.length):
            self._settle_previous(turn, users[-1])
        rec = recall() if recall is not None else self._recall(messages)
        # Kept when the recall failed too: the agent reads its memory at every step of the
        # turn, and each try again could wait out the same lock, or start the episode midway.
        self._begin(key, _Turn(marker, rec, length, count, run, turn if waiting else None, waiting))
        return rec

    def _begin(self, key: str, turn: _Turn) -> None:
        with self._lock:
            last = self._turns.get(key)
            if last is not None:
                # One turn back is all a report asks for: a longer chain would keep every turn of the session.
                turn.previous, last.previous = last, None
            self._turns[key] = turn
            self._turns.move_to_end(key)
            while len(self._turns) > _SESSIONS_KEPT:
                self._turns.popitem(last=False)

    def _arrived(self, turn: _Turn, users: list[ChatMessage], marker: str, length: int, count: int) -> None:
        """A waiting turn's user message is in view: the turn takes its marker, and the turn before it
        is reported with that message as any previous turn is (see `_recall_turn`)."""
        before, turn.before, turn.waiting = turn.before, None, False
        turn.marker, turn.users = marker, count
        if before is not None and not before.reported and users and (
                count <= before.users + 1 or length < before.length):
            self._settle_previous(before, users[-1])

    def _recall(self, messages: list[ChatMessage]) -> Recall | None:
        """The turn's recall; None, with a warning, when it fails: the agent's turn goes on without lessons."""
        try:
            ctx = self._context(messages)
        except Exception as exc:  # noqa: BLE001 - the user's function, inside the agent's turn: fail open
            log.warning("Lamar's context function raised %s: %s (the turn goes on without lessons)",
                        type(exc).__name__, exc)
            return None
        try:
            rec = self.lamar.recall(ctx, k=self.k)
        except StoreError as exc:
            log.warning("Lamar could not recall (the turn goes on without lessons): %s", exc)
            return None
        record_episode(rec.episode_id, ctx, rec.experiences)
        return rec

    def _settle_previous(self, turn: _Turn, message: ChatMessage) -> None:
        if turn.recall is None:  # the turn went on without lessons: it has no episode to report
            return
        try:
            value = self.outcome(message) if callable(self.outcome) else None
        except Exception as exc:  # noqa: BLE001 - the user's function, inside the agent's turn: fail open
            log.warning("Lamar's outcome function raised %s: %s (episode %s stays pending)",
                        type(exc).__name__, exc, turn.recall.episode_id)
            return
        if value is None:
            if self.silent_outcome is None or settled_as_failed(self.lamar, turn.recall.episode_id):
                return  # silence after a failed run (expired by track_episodes) is no acceptance
            value = self.silent_outcome
        try:
            checked_outcome(value, "the outcome function's result")
        except InvalidReward as exc:  # the turn goes on; raising would fail every later turn of the session
            log.warning("Lamar ignored the outcome of episode %s, which stays pending: %s", turn.recall.episode_id, exc)
            return
        try:
            self.lamar.report(turn.recall.episode_id, value)
        except DuplicateReport:
            pass  # the app reported it already
        except UnknownEpisode:
            log.info("Lamar's episode %s is gone (sleep compacted it): nothing to report", turn.recall.episode_id)
        except StoreError as exc:  # fail open: the episode stays pending
            log.warning("Lamar could not report episode %s: %s", turn.recall.episode_id, exc)
            return
        turn.reported = True

    def _context(self, messages: list[ChatMessage]) -> dict[str, str]:
        if callable(self.context):
            return fit_context(self.context(messages), where="the context function's result")
        return dict(self.context or {})

    def episode_id(self, session_id: str | None = None) -> str | None:
        """The episode of the session's current turn (None before its first turn, and for a turn
        whose recall failed)."""
        with self._lock:
            turn = self._turns.get(session_id or "")
        return turn.recall.episode_id if turn is not None and turn.recall is not None else None

    def previous_episode_id(self, session_id: str | None = None) -> str | None:
        """The episode of the session's turn before the current one, the answer a new user message reacts to
        (None when that turn had no lessons: its recall failed).

        Raises:
            InvalidArgument: the session has had no turn before the current one in this process.
        """
        with self._lock:
            turn = self._turns.get(session_id or "")
            previous = turn.previous if turn is not None else None
        if previous is None:
            raise InvalidArgument(f"no earlier answer to report in session {session_id!r}: a user reacts to an answer "
                                  "of a turn before this one, and this process has seen none (after a restart, "
                                  "report that answer's episode_id)")
        return previous.recall.episode_id if previous.recall is not None else None

    def report(self, signal: Outcome, session_id: str | None = None, *, replace: bool = False) -> str | None:
        """Report the outcome of the session's current turn; returns its episode id, or None when
        the turn has none (its recall failed, with a warning then): there is nothing to report.

        Raises:
            InvalidArgument: (a ValueError) the session has had no turn yet.
        """
        with self._lock:
            turn = self._turns.get(session_id or "")
            # Only a refusal names sessions: a report reads its own alone, however many the block holds.
            recent = list(islice(reversed(self._turns), 5))[::-1] if turn is None else []
            # Every other report takes (id, signal): report("ticket-7", "shipped") is the likely slip.
            swapped = turn is None and isinstance(signal, str) and signal in self._turns
        if turn is None:
            raise InvalidArgument(
                f"no turn yet in session {session_id!r}: the agent has not read this memory in it; "
                + (f"the signal comes first: block.report(signal, {signal!r})" if swapped else
                   f"the latest sessions with a turn are {recent}" if recent else "no session has had a turn yet")
                # Memory.from_defaults() without session_id= draws a random one, which the app never typed.
                + ("; pass the Memory's own: block.report(signal, memory.session_id)"
                   if session_id is None and recent else ""))
        if turn.recall is None:
            return None
        self.lamar.report(turn.recall.episode_id, signal, replace=replace)
        turn.reported = True
        return turn.recall.episode_id

    async def areport(self, signal: Outcome, session_id: str | None = None, *,
                      replace: bool = False) -> str | None:
        """`report` without blocking the event loop."""
        return await asyncio.to_thread(self.report, signal, session_id, replace=replace)


def _workflow_run() -> str | None:
    """The id of the workflow run this read happens in (LlamaIndex tags each run's steps), else None."""
    try:
        from llama_index.core.instrumentation.dispatcher import active_instrument_tags

        run = active_instrument_tags.get().get("llamaindex.run_id")
    except Exception:  # noqa: BLE001 - an instrumentation without run tags: turns are told by messages alone
        return None
    return run if isinstance(run, str) else None


def _other_run(turn: _Turn, run: str | None) -> bool:
    """Whether this read is in a workflow run other than the one the turn began in: a run is a new
    input (a later `run()`, even on the same Context), so the turn it reads in is its own."""
    return run is not None and turn.run is not None and run != turn.run


def _length(messages: list[ChatMessage]) -> int:
    """How many messages the history holds, the pending user message appended twice counted once."""
    return sum(1 for i in range(len(messages)) if not _input_again(messages, i))


def _digest(message: ChatMessage) -> str:
    """What tells a user message's words from another's in a turn's marker."""
    return hashlib.sha256(str(message.content or "").encode()).hexdigest()[:16]


_NOTHING = hashlib.sha256(b"").hexdigest()[:16]  # no user message in view nor flushed


def _user_turns(messages: list[ChatMessage], after_code: bool = False) -> list[ChatMessage]:
    """The user messages that start turns: `Memory.aget(input=...)` appends the pending user
    message to a history that may already hold it, and that copy is not a new turn. Nor is a
    message with no block at all: the bare `ChatMessage()` (role user) that an agent stores as
    its answer when the model streamed nothing; nor the result of a `CodeActAgent`'s code, which it
    stores with the user's role (`after_code`: the message before the first one ran code)."""
    return [m for i, m in enumerate(messages)
            if m.role == MessageRole.USER and m.blocks
            and not _input_again(messages, i) and not _code_result(messages, i, after_code)]


def _code_result(messages: list[ChatMessage], i: int, after_code: bool) -> bool:
    """Whether message i is what a `CodeActAgent` writes after running the code of the answer before it.
    First in view, its answer may be gone: `Memory` under a token limit moves old messages out until
    the history opens with a user-role message, and a code result is one (`after_code` then says; in a
    process that did not see the move, only the agent's words can)."""
    if i > 0:
        return _runs_code(messages[i - 1])
    return after_code or str(messages[0].content or "").startswith(_CODE_RESULT)


def _runs_code(message: ChatMessage) -> bool:
    """Whether a `CodeActAgent` runs code from this message: an answer holding code in its tags."""
    found = _CODE.findall(str(message.content or "")) if message.role == MessageRole.ASSISTANT else []
    return any(code.strip() for code in found)


def _input_again(messages: list[ChatMessage], i: int) -> bool:
    """Whether message i is the turn's own user message appended again by `Memory.aget(input=...)`.

    An agent re-reads its memory with its input after tool calls, and AgentWorkflow's handoff has
    written the calls into the history by then: only tool calls and results may stand between the
    copy and its original, or a re-read in the middle of a handoff would look like a new turn.
    """
    if messages[i].role != MessageRole.USER:
        return False
    for previous in (messages[j] for j in range(i - 1, -1, -1)):  # no copy: each scan stops at a user message
        if previous.role == MessageRole.USER:
            return previous.content == messages[i].content
        if not _tool_step(previous):
            return False  # an answer stands between: the same words again are a new turn
    return False


def _tool_step(message: ChatMessage) -> bool:
    if message.role in (MessageRole.TOOL, MessageRole.FUNCTION):
        return True
    return message.role == MessageRole.ASSISTANT and bool(
        message.additional_kwargs.get("tool_calls")
        or any(getattr(block, "block_type", None) == "tool_call" for block in message.blocks))


__all__ = ["LamarMemoryBlock"]
