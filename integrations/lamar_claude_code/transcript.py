"""A Claude Code session transcript (JSON Lines at `transcript_path`) as sleep traces, one per prompt."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lamar import InvalidTrace
from lamar.sleep.traces import Trace, TraceWriter
from lamar_claude_code.outcomes import prompt_key
from lamar_claude_code.state import writable

_CALL_CHARS = 300  # of a tool call's input kept in `attempted`
_TEXT_CHARS = 4000  # of a prompt, an error or an answer
# A long session's transcript holds tens of megabytes; past these caps the read stops (the whole
# file) or skips (one line), so a runaway file costs bounded time and memory, never a stalled hook.
MAX_TRANSCRIPT = 256 * 1024 * 1024  # bytes read from one transcript; later turns are not traced
MAX_LINE = 16 * 1024 * 1024  # bytes of one entry; a longer one is skipped like a torn line


def read_turns(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The prompts of a transcript with what followed each: prompt, attempted, tool_errors, output, time.

    Lines that do not parse or are longer than MAX_LINE, meta lines, side chains (subagents), a
    compaction's summary and entries written again (same uuid) are skipped; only the first
    MAX_TRANSCRIPT bytes are read.

    Raises:
        OSError: the file cannot be opened.
        ValueError: the path is not a regular file (a FIFO, a device, a folder).
    """
    turns: list[dict[str, Any]] = []
    seen: set[str] = set()
    for entry in _entries(Path(path).expanduser()):
        # A compaction's summary is the model's words in a user entry, not a prompt.
        if entry.get("isMeta") or entry.get("isSidechain") or entry.get("isCompactSummary"):
            continue
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue  # a later compaction appends earlier entries again, each under its own uuid
            seen.add(uuid)
        message = entry.get("message")
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        kind = entry.get("type")
        if kind == "user":
            prompt = _user_text(content)
            if prompt is not None:
                turns.append({"prompt": prompt, "attempted": [], "tool_errors": [], "output": "",
                              "time": entry.get("timestamp")})
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
    return turns


def _entries(path: Path) -> Iterator[Mapping[str, Any]]:
    # Opened without blocking, then checked: a FIFO with no writer would wait forever, and a
    # device such as /dev/zero never ends; only a regular file is a transcript.
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ValueError(f"{path} is not a regular file")
        handle = os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    with handle:
        for raw in _lines(handle):
            try:
                entry = json.loads(raw)
            except (ValueError, RecursionError):
                continue  # a torn last line while Claude Code is still writing, or one nested past reason
            if isinstance(entry, Mapping):
                # Text cut between the halves of an emoji is a lone surrogate, which no trace file holds.
                yield writable(entry)


def _lines(handle: Any) -> Iterator[bytes]:
    """The lines of the first MAX_TRANSCRIPT bytes, each at most MAX_LINE (a longer one is skipped)."""
    left = MAX_TRANSCRIPT
    while left > 0:
        raw = handle.readline(min(left, MAX_LINE + 1))
        if not raw:
            return
        left -= len(raw)
        if len(raw) > MAX_LINE:
            while left > 0 and raw and not raw.endswith(b"\n"):  # the rest of the long line, dropped
                raw = handle.readline(min(left, MAX_LINE))
                left -= len(raw)
            continue
        yield raw


def _user_text(content: Any) -> str | None:
    """The typed prompt of a user entry; None for tool results."""
    if isinstance(content, str):
        return content[:_TEXT_CHARS]
    if not isinstance(content, list):
        return None
    if any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content):
        return None
    texts = [b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    return "\n".join(texts)[:_TEXT_CHARS] if texts else None


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
    return f"{name}: {detail}"[:_CALL_CHARS] if detail else name


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
    mine = sorted(((eid, r) for eid, r in (episodes or {}).items() if r.get("session") == session),
                  key=lambda item: float(item[1].get("time", 0)))
    traces = []
    for number, turn in enumerate(turns, start=1):
        key = prompt_key(turn["prompt"])
        match = next(((eid, r) for eid, r in mine if r.get("prompt_key") == key), None)
        if match is not None:
            mine.remove(match)
        record = match[1] if match else {}
        try:
            trace = _trace(f"cc-{session}-{number}", turn, record, match[0] if match else None, session)
        except InvalidTrace as exc:
            if refused is None:
                raise
            refused.append(f"cc-{session}-{number}: {exc}")
            continue
        traces.append(trace)
    return traces


def _trace(trace_id: str, turn: Mapping[str, Any], record: Mapping[str, Any], episode: str | None,
           session: str) -> Trace:
    signal = record.get("signal")
    return Trace(
        id=trace_id,
        context=dict(record.get("context") or {}),
        time=float(record.get("time") or 0.0) or _seconds(turn.get("time")),
        input=turn["prompt"],
        attempted=turn["attempted"],
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


def write_session_traces(turns: list[dict[str, Any]], session: str, episodes: Mapping[str, Mapping[str, Any]],
                         out: Path) -> tuple[int, list[str]]:
    """Append the session's traces (of its turns, from `read_turns`) that `out` does not hold yet.

    Keyed by trace id, read back from `out` itself: a SessionEnd stopped after appending and
    before its bookkeeping was saved writes nothing twice when the session ends again. A trace
    the format refuses is skipped: one bad turn costs its own trace, not the session's.

    Returns:
        How many of the session's traces `out` holds in all, and why each skipped one was refused.

    Raises:
        StoreError: `out` cannot be written.
    """
    refused: list[str] = []
    traces = traces_of(turns, session, episodes, refused)
    held = _written_ids(out, f"cc-{session}-")
    fresh = [t for t in traces if t.id not in held]
    written = 0
    if fresh:
        os.close(os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))  # prompts: the user's eyes only
        writer = TraceWriter(out)
        for trace in fresh:
            try:
                writer.write(trace)
            except InvalidTrace as exc:
                refused.append(f"{trace.id}: {exc}")
                continue
            written += 1
    return len(held) + written, refused


def _written_ids(out: Path, prefix: str) -> set[str]:
    """Ids starting with `prefix` among the traces in `out` (a line that does not parse is skipped)."""
    found: set[str] = set()
    marker = f'"{prefix}'.encode()
    try:
        with out.open("rb") as handle:
            for line in handle:
                if marker not in line:
                    continue  # another session's trace: not parsed
                try:
                    record = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict) and str(record.get("id", "")).startswith(prefix):
                    found.add(str(record["id"]))
    except FileNotFoundError:
        pass
    return found
