"""A Claude Code session transcript (JSON Lines at `transcript_path`) as sleep traces, one per prompt."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lamar import InvalidTrace, StoreError
from lamar.safety.secrets import REACH
from lamar.sleep.trace_limits import MAX_FIELD_CHARS, clip_text
from lamar.sleep.traces import Trace, TraceWriter
from lamar.storable import without_lone_surrogates
from lamar_claude_code.outcomes import prompt_key

_CALL_CHARS = 300  # of a tool call's input kept in `attempted`
TRACE_WAIT = 0.5  # seconds a hook waits for another process's lock on the traces file
# Read past each cut by twice REACH, so a credential that the cut falls in is whole when scrubbed:
# `TraceWriter` cuts a prompt, an error or an answer to MAX_FIELD_CHARS, `_trace` a call.
_TEXT_CHARS = MAX_FIELD_CHARS + 2 * REACH
_CALL_READ = _CALL_CHARS + 2 * REACH
# Claude Code's note, in a user entry of its own, that a turn was stopped (Ctrl+C, Esc): no prompt typed.
_INTERRUPTED = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")
# A slash command is written as tags ("<command-message>fix</command-message>\n<command-name>/fix</command-name>
# \n<command-args>the cart</command-args>"); its hook's prompt was "/fix the cart", as typed.
_COMMAND = re.compile(r"<command-name>\s*(/[^<\s]+)\s*</command-name>")
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_LOCAL_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>")  # what a built-in command printed
# A long session's transcript holds tens of megabytes; past these caps the read stops (the whole
# file) or skips (one line), so a runaway file costs bounded time and memory, never a stalled hook.
MAX_TRANSCRIPT = 256 * 1024 * 1024  # bytes read from one transcript; later turns are not traced
MAX_LINE = 16 * 1024 * 1024  # bytes of one entry; a longer one is skipped like a torn line
# One hook event's share: scrubbing a trace of secrets is its costliest step, and Claude Code kills a
# hook at its timeout; what one event leaves, the next goes on with.
READ_AT_ONCE = 4 * 1024 * 1024  # bytes of a transcript one event reads
TRACES_AT_ONCE = 20  # traces one event writes


def read_turns(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The prompts of a transcript with what followed each: prompt, attempted, tool_errors, output, time.

    Lines that do not parse or are longer than MAX_LINE, meta lines, side chains (subagents), a
    compaction's summary and entries written again (same uuid) are skipped; only the first
    MAX_TRANSCRIPT bytes are read.

    Raises:
        OSError: the file cannot be opened.
        ValueError: the path is not a regular file (a FIFO, a device, a folder).
    """
    return read_span(path, 0, MAX_TRANSCRIPT).turns


@dataclasses.dataclass
class Span:
    """The turns read from one part of a transcript; each turn's `start` is the byte offset of its
    prompt's line and `mark` the latest entry time before it. `end` is where reading stopped (never
    inside a line), `mark` the latest time read, `eof` whether the file's end was reached."""

    turns: list[dict[str, Any]]
    end: int
    mark: str | None
    eof: bool


def read_span(path: str | os.PathLike[str], start: int, limit: int, mark: str | None = None) -> Span:
    """`read_turns` of the lines from byte `start` on, until `limit` bytes are read (the line that
    crosses it is read whole). An entry with a uuid and a time no later than `mark` is one read
    before `start`, written again by a compaction, and is skipped.

    Raises:
        OSError: the file cannot be opened.
        ValueError: the path is not a regular file (a FIFO, a device, a folder).
    """
    turns: list[dict[str, Any]] = []
    seen: set[str] = set()
    read_before = mark  # entries this read meets twice share a uuid; only those of earlier reads go by time
    position, eof = start, False
    with _open_regular(Path(path).expanduser()) as handle:
        handle.seek(start)
        while position - start < limit:
            raw = handle.readline(MAX_LINE + 1)
            if len(raw) > MAX_LINE:  # skipped like a torn line, reading no further than the limit
                position += len(raw)
                while not raw.endswith(b"\n") and raw and position - start < limit:
                    raw = handle.readline(MAX_LINE)
                    position += len(raw)
                continue
            entry = _entry(raw)
            if not raw.endswith(b"\n"):
                eof = True  # the end, or a line Claude Code is still writing: that one is read again
                if entry is None:
                    break
            position += len(raw)
            if entry is None:
                continue
            # A compaction's summary is the model's words in a user entry, not a prompt.
            if entry.get("isMeta") or entry.get("isSidechain") or entry.get("isCompactSummary"):
                continue
            uuid, stamp = entry.get("uuid"), entry.get("timestamp")
            if isinstance(uuid, str):
                # A later compaction appends earlier entries again, each under its own uuid. The
                # line at `start` is the prompt an earlier read stopped at, never a copy. Entries of
                # this read may share a millisecond (parallel tool calls, their results): not copies.
                again = (read_before is not None and isinstance(stamp, str) and stamp <= read_before
                         and position - len(raw) > start)
                if uuid in seen or again:
                    continue
                seen.add(uuid)
            before = mark
            if isinstance(uuid, str) and isinstance(stamp, str) and (mark is None or stamp > mark):
                mark = stamp
            _add(turns, entry, position - len(raw), before)
    return Span(turns, position, mark, eof)


def _add(turns: list[dict[str, Any]], entry: Mapping[str, Any], offset: int, mark: str | None) -> None:
    message = entry.get("message")
    if not isinstance(message, Mapping):
        return
    content = message.get("content")
    kind = entry.get("type")
    if kind == "user":
        prompt = _user_text(content)
        if prompt is not None:
            turns.append({"prompt": prompt, "attempted": [], "tool_errors": [], "output": "",
                          "time": entry.get("timestamp"), "start": offset, "mark": mark})
        elif turns:
            turns[-1]["tool_errors"] += _tool_errors(content)
    elif kind == "assistant" and turns and isinstance(content, list):
        for block in content:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_use":
                turns[-1]["attempted"].append(_call(block))
            elif block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                turns[-1]["output"] = block["text"][:_TEXT_CHARS]


def _open_regular(path: Path) -> Any:
    # Opened without blocking, then checked: a FIFO with no writer would wait forever, and a
    # device such as /dev/zero never ends; only a regular file is a transcript.
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ValueError(f"{path} is not a regular file")
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _entry(raw: bytes) -> Mapping[str, Any] | None:
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return None  # a torn line, or one nested past reason
    # Text cut between the halves of an emoji is a lone surrogate, which no trace file holds.
    return without_lone_surrogates(entry) if isinstance(entry, Mapping) else None


def _user_text(content: Any) -> str | None:
    """The typed prompt of a user entry; None for tool results and Claude Code's note of an interruption."""
    if isinstance(content, str):
        if content.strip() in _INTERRUPTED or content.lstrip().startswith(_LOCAL_OUTPUT):
            return None
        if content.lstrip().startswith("<command-"):
            return _typed_command(content)
        return content[:_TEXT_CHARS]
    if not isinstance(content, list):
        return None
    if any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content):
        return None
    texts = [b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    if not texts or "\n".join(texts).strip() in _INTERRUPTED:
        return None
    return "\n".join(texts)[:_TEXT_CHARS]


def _typed_command(content: str) -> str | None:
    """A slash command's entry as the user typed it (None when it names none)."""
    name = _COMMAND.search(content)
    if name is None:
        return None
    found = _COMMAND_ARGS.search(content)
    arguments = found.group(1).strip() if found else ""
    return f"{name.group(1)} {arguments}"[:_TEXT_CHARS] if arguments else name.group(1)


def _tool_errors(content: Any) -> list[str]:
    out: list[str] = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, Mapping) and block.get("type") == "tool_result" and block.get("is_error"):
            body = block.get("content")
            if isinstance(body, list):
                body = "\n".join(b.get("text", "") for b in body if isinstance(b, Mapping))
            out.append(str(body or "")[:_TEXT_CHARS])
    return out


def _call(block: Mapping[str, Any]) -> str:
    name = str(block.get("name", "tool"))
    args = block.get("input")
    if isinstance(args, Mapping):
        main = args.get("command") or args.get("file_path") or args.get("notebook_path") or args.get("pattern")
        detail = str(main) if main else json.dumps(args, ensure_ascii=False, sort_keys=True)
    else:
        detail = ""
    return f"{name}: {detail}"[:_CALL_READ] if detail else name


def session_traces(path: str | os.PathLike[str], session: str,
                   episodes: Mapping[str, Mapping[str, Any]] | None = None) -> list[Trace]:
    """The transcript's prompts as traces, each tied to the hook's episode for that prompt when known.

    Each user prompt opens a trace; the assistant's tool calls become `attempted`, failed tool
    results `tool_errors`, its last text `output`. The episode that the hook recalled for the
    prompt gives the context and the outcome. Secrets are scrubbed by `TraceWriter` on the way out.

    Args:
        path: the transcript (`transcript_path` of any hook event).
        session: the session id (trace ids are `cc-<session>-<n>`).
        episodes: the hook state's episodes, to find each prompt's episode, context and outcome.
    """
    return traces_of(read_turns(path), session, episodes)


def traces_of(turns: list[dict[str, Any]], session: str, episodes: Mapping[str, Mapping[str, Any]] | None = None,
              refused: list[str] | None = None) -> list[Trace]:
    """`session_traces` of turns already read (`read_turns`).

    With `refused`, a turn whose trace the format refuses is left out and why is appended there
    (one bad turn costs its own trace only); without it, InvalidTrace is raised.
    """
    taken: set[str] = set()
    traces = []
    for number, turn in enumerate(turns, start=1):
        try:
            trace = _turn_trace(f"cc-{session}-{number}", turn, session, episodes or {}, taken)
        except InvalidTrace as exc:
            if refused is None:
                raise
            refused.append(f"cc-{session}-{number}: {exc}")
            continue
        if trace is not None:
            traces.append(trace)
    return traces


def _turn_trace(trace_id: str, turn: Mapping[str, Any], session: str, episodes: Mapping[str, Mapping[str, Any]],
                taken: set[str]) -> Trace | None:
    """The turn's trace, tied to the session's earliest episode of its prompt not yet traced (added to `taken`);
    None for a built-in command's turn (`/compact`, `/context`): no prompt reached the model, no tool ran."""
    key = prompt_key(turn["prompt"])
    mine = [(float(r.get("time", 0)), eid) for eid, r in episodes.items()
            if r.get("session") == session and r.get("prompt_key") == key and "trace" not in r and eid not in taken]
    episode = min(mine)[1] if mine else None
    if episode is None and turn["prompt"].startswith("/") and not turn["attempted"] and not turn["tool_errors"]:
        return None
    if episode is not None:
        taken.add(episode)
    return _trace(trace_id, turn, episodes[episode] if episode else {}, episode, session)


def _trace(trace_id: str, turn: Mapping[str, Any], record: Mapping[str, Any], episode: str | None,
           session: str) -> Trace:
    signal = record.get("signal")
    return Trace(
        id=trace_id,
        context=dict(record.get("context") or {}),
        time=float(record.get("time") or 0.0) or _seconds(turn.get("time")),
        input=turn["prompt"],
        attempted=[clip_text(call, _CALL_CHARS) for call in turn["attempted"]],
        tool_errors=turn["tool_errors"],
        output=turn["output"],
        outcome=signal if signal in ("shipped", "accepted", "reasked", "corrected", "reverted") else None,
        episode_id=episode,
        metadata={"source": "claude-code", "session": session},
    )


def _seconds(stamp: Any) -> float:
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(stamp)).timestamp()
    except ValueError:
        return 0.0


def trace_turns(progress: dict[str, Any], session: str, episodes: dict[str, dict[str, Any]], out: Path,
                held: set[str], *, final: bool, more: Callable[[], bool]) -> tuple[bool, list[str]]:
    """Append the traces of the turns the session's transcript holds past `progress`, and move it on.

    `progress` ({"path", "offset", "turns", "mark"}) says where the last event stopped; it is
    updated in place. A turn is traced once the next prompt closes it, or with `final` (the
    session ended) at the transcript's end. One call reads at most READ_AT_ONCE bytes and asks
    `more()` before each trace, so an event does bounded work and the next one goes on; a turn
    longer than READ_AT_ONCE is traced from its first READ_AT_ONCE bytes. An id in `held` (written
    by an event stopped before its bookkeeping was saved) is not written again. A traced episode
    gets the trace's id under `trace`.

    Returns:
        Whether the transcript is traced to its end (only with `final`), and why each trace the
        format refused was skipped.

    Raises:
        OSError: the transcript cannot be opened.
        ValueError: the transcript is not a regular file.
        StoreError: `out` cannot be written.
    """
    offset = progress["offset"]
    if offset >= MAX_TRANSCRIPT:
        return True, []  # the turns past the cap are not traced
    span = read_span(progress["path"], offset, min(READ_AT_ONCE, MAX_TRANSCRIPT - offset), progress.get("mark"))
    turns = span.turns
    whole = span.eof or span.end >= MAX_TRANSCRIPT
    if final and whole:
        closed = len(turns)
    elif not whole and len(turns) == 1 and turns[0]["start"] == offset:
        closed = 1  # a turn longer than one read: what was read of it
    else:
        closed = max(0, len(turns) - 1)
    refused: list[str] = []
    writer = None
    done = 0
    for turn in turns[:closed]:
        if not more():
            break
        number = progress["turns"] + 1
        trace_id = f"cc-{session}-{number}"
        try:
            trace = _turn_trace(trace_id, turn, session, episodes, set())
            if trace is not None and trace_id not in held:
                if writer is None:
                    writer = _writer(out)
                writer.write(trace)
            if trace is not None and trace.episode_id:
                episodes[trace.episode_id]["trace"] = trace_id
        except InvalidTrace as exc:
            refused.append(f"{trace_id}: {exc}")
        progress["turns"] = number
        done += 1
    if done == len(turns):  # every turn read is traced: what follows the last one is read next time
        progress["offset"], progress["mark"] = span.end, span.mark
    else:
        progress["offset"], progress["mark"] = turns[done]["start"], turns[done]["mark"]
    return final and whole and done == len(turns), refused


def _writer(out: Path) -> TraceWriter:
    # Never through a link: beside a store in a folder others may write, one planted at this foreseeable name
    # would have the prompts appended into another file. Checked before the writer is made (which follows a
    # link named to it) and after (it never opens one later).
    linked = StoreError(f"cannot write traces to {out}: it is a symbolic link, which the hooks never write "
                        "through; remove it")
    if out.is_symlink():
        raise linked
    # Hooks write traces under the state's lock, so another holder of this file's is no hook: a
    # stopped or stuck process, which must cost the traces, not the turn.
    writer = TraceWriter(out, timeout=TRACE_WAIT)
    try:  # prompts: the user's eyes only
        os.close(os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600))
    except OSError as exc:
        raise (linked if out.is_symlink() else StoreError(f"cannot write traces to {out}: {exc.strerror or exc}")) \
            from exc
    return writer


def held_ids(out: Path, since: Any, kept: Any = None) -> tuple[set[str], int]:
    """The trace ids `out` holds from byte `since` on (all of them when `since` is not an offset
    inside it) with those in `kept` (the ids `traced_to` kept at an earlier event), and its size:
    a line that does not parse is skipped."""
    found = {item for item in kept if isinstance(item, str)} if isinstance(kept, list) else set()
    try:
        with out.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if isinstance(since, int) and not isinstance(since, bool) and 0 <= since <= size:
                handle.seek(since)
            for line in handle:
                if b'"cc-' not in line:
                    continue
                try:
                    record = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict) and isinstance(record.get("id"), str):
                    found.add(record["id"])
    except FileNotFoundError:
        return found, 0
    return found, size


def traced_to(out: Path, size: int, held: set[str], sessions: Mapping[str, Any]) -> tuple[int, list[str]]:
    """The state's offset into `out` after an event (its size then, else `size`) and the ids in
    `held` that the tracing of a session still in `sessions` has not passed yet.

    The offset moves to the file's end; an event that stopped tracing before it reached the turns
    held must keep their ids in the state, or the next event writes them again.
    """
    try:
        size = out.stat().st_size
    except OSError:
        pass
    kept = []
    for trace_id in sorted(held):
        head, _, number = trace_id.rpartition("-")
        record = sessions.get(head.removeprefix("cc-"))
        if not isinstance(record, Mapping) or not number.isdigit():
            continue  # a session pruned is never traced again
        progress = record.get("transcript")
        turns = progress.get("turns") if isinstance(progress, Mapping) else None
        if not isinstance(turns, int) or turns < int(number):
            kept.append(trace_id)
    return size, kept
