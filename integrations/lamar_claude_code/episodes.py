"""One hook event applied to the engine and the bookkeeping: recall on a prompt, note edits, settle."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamar.safety import scrub_context
from lamar.storable import without_lone_surrogates
from lamar_claude_code.config import HookConfig, load_config
from lamar_claude_code.context import MAX_PATH, derive_context, find_repo, git_dir, own_command, rules_folder
from lamar_claude_code.dropped import read_outcome
from lamar_claude_code.fitting import fit_prompt, fitting
from lamar_claude_code.outcomes import note_edit, prompt_key, prompt_words, read_followup, unchanged
from lamar_claude_code.started_over import let_go
from lamar_claude_code.state import (
    locked_state,
    log_line,
    note_episode,
    read_note,
    recall_note,
    write_atomically,
)

if TYPE_CHECKING:
    from lamar import Lamar

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read"})
EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"})
GIT_SIGNALS = ("shipped", "reverted")
_TRACING = frozenset({"SessionStart", "Stop", "SessionEnd"})  # not a prompt or a tool call: the agent waits on those
_SESSION_TTL = 30 * 86400.0
_SETTLE_AT_ONCE = 20  # episodes git looks at per event (the most recent)
_RECALL_WINDOW = 60.0  # seconds: Claude Code's longest default hook timeout; no hook process outlives it


@dataclasses.dataclass
class Paths:
    """Where the hooks keep their state, log and traces for one store."""

    state: Path
    log: Path
    traces: Path


class Budget:
    """A deadline; `expired` says whether the hook may still recall. `committed` is set once the
    prompt's episode is stored: from then on it is recorded and delivered, whatever the clock says.
    `commit` and `abandon` decide, one or the other, whether a late recall is delivered or given up."""

    def __init__(self, seconds: float, start: float | None = None) -> None:
        self.start = time.monotonic() if start is None else start
        self.seconds = seconds
        self.committed = threading.Event()
        self._abandoned = False
        self._deciding = threading.Lock()

    @property
    def expired(self) -> bool:
        return time.monotonic() - self.start > self.seconds

    def commit(self) -> bool:
        """The episode is stored; False when the caller has given up waiting (it delivers nothing)."""
        with self._deciding:
            if not self._abandoned:
                self.committed.set()
            return not self._abandoned

    def abandon(self) -> bool:
        """The caller stops waiting; False when the episode is stored already (wait for it instead)."""
        with self._deciding:
            self._abandoned = not self.committed.is_set()
            return self._abandoned


def handle_event(payload: Mapping[str, Any], engine: Callable[[], Lamar], paths: Paths, *,
                 config: HookConfig | None = None, budget: Budget | None = None, now: float | None = None) -> str:
    """Apply one hook event; returns the text to inject ("" for none).

    Shared by the `lamar claude-code hook` process and the Agent SDK callbacks; its module imports
    only the standard library and `lamar`, and it opens the engine only when it needs it.

    Args:
        payload: the event as Claude Code documents it (session_id, cwd, hook_event_name, ...).
        engine: opens (or returns) the engine; called only when the event needs it.
        paths: the state, log and traces files.
        config: the hooks' config (default: read from the user's and the project's files).
        budget: past it nothing is injected (the episode is then never reported).
        now: the event's time (default: the clock).

    Raises:
        ValueError: the payload lacks a documented field or has a wrong type (the caller logs it).
    """
    event = payload.get("hook_event_name")
    if event not in EVENTS:
        return ""
    payload = without_lone_surrogates(payload)  # before anything is stored: store and state both hold it, or neither
    session = _text(payload, "session_id")
    cwd = _text(payload, "cwd")
    if len(cwd) > MAX_PATH:  # never resolved: see MAX_PATH
        raise ValueError(f"the {event} payload's cwd is {len(cwd)} characters, longer than any path ({MAX_PATH})")
    now = time.time() if now is None else now
    repo_path = find_repo(cwd)
    config = config or load_config(repo_path)
    if not config.enabled:
        return ""
    repo = str(repo_path) if repo_path else None
    out = ""
    wait = None if budget is None else budget.seconds - (time.monotonic() - budget.start)  # what is left of it
    with locked_state(paths.state, paths.log, wait=wait) as state:
        lam = functools.cache(engine)  # opened once, and only when an outcome needs it

        _expire_orphan(state, lam, paths, now)
        let_go(event, state, lam, paths.log, now)
        if repo:
            _settle_git(state, repo, lam, paths, now)
        if event == "UserPromptSubmit" and not own_command(str(payload.get("prompt", ""))):
            out = _on_prompt(state, payload, session, cwd, repo, config, lam, paths, budget, now)
        elif event == "PostToolUse":
            _on_edit(state, payload, session, repo)
        elif event == "Stop":
            _on_stop(state, session)
        elif event == "SessionEnd":
            _on_end(state, session, lam, paths, now)
        if event in _TRACING:
            _trace_sessions(state, payload, session, event, paths, budget, now)
        state["last"] = {"time": now, "event": event, "session": session, "cwd": cwd,
                         "episode": state["sessions"].get(session, {}).get("episode"), "injected": len(out)}
        _prune(state, now, config)
    return out


def _text(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"the {payload.get('hook_event_name')} payload has no string {key!r}")
    return value


def _on_prompt(state: dict[str, Any], payload: Mapping[str, Any], session: str, cwd: str, repo: str | None,
               config: HookConfig, lam: Callable[[], Lamar], paths: Paths, budget: Budget | None, now: float) -> str:
    prompt = _text(payload, "prompt")
    previous = state["sessions"].get(session)
    if previous and previous.get("episode") in state["episodes"]:
        record = state["episodes"][previous["episode"]]
        # A session that ended and is resumed: its next prompt still speaks for the last episode, whose
        # ACCEPTED came only from the silence at the end; a turn its own commit shipped may still be corrected.
        tentative = record.get("signal") == "accepted" and record.get("by_end")
        shipped = record.get("signal") == "shipped" and isinstance(record.get("commit"), str)
        if record.get("signal") is None or tentative or shipped:
            signal, why = read_followup(previous.get("words", []), prompt, config.corrected, config.reasked_overlap)
            if signal == "corrected" if shipped else not (tentative and signal == "accepted"):
                record.pop("by_end", None)
                why += f", after its commit {record['commit'][:12]}" if shipped else ""
                _report(state, previous["episode"], signal, why, lam, paths, now)
    # The file the session last edited in this repository says which folder it works in.
    edited = previous.get("edited") if previous and repo and previous.get("repo") == repo else None
    ruled: set[str] = set()
    context = derive_context(cwd, prompt, config, state["repos"], warn=lambda said: log_line(paths.log, said, now=now),
                             worked=os.path.join(repo, edited) if repo and edited else None, ruled=ruled)
    engine = lam()  # opened first: a cold open (a long fold) must not end in an episode nobody sees
    if budget is not None and budget.expired:
        # Too late to deliver: store no episode at all rather than one nobody will report.
        log_line(paths.log, f"budget: the prompt waited over {budget.seconds}s before recall; no episode stored")
        return ""
    # Written down before the store keeps the episode (a hook killed in between, SIGKILL at Claude Code's timeout,
    # would leave it pending for good), with the context as the store logs it: the next hook finds and expires it.
    state["recalling"] = {"time": time.time(), "context": scrub_context(context)[0]}
    # A note beside the state rather than the state rewritten: with no fsync a prompt does not wait on
    # the disk for it, and a power cut can take the note at worst, never the state.
    write_atomically(recall_note(paths.state), json.dumps(state["recalling"]).encode("utf-8"), durable=False)
    # No more lessons than fit in max_chars however short: a lesson recalled is a lesson shown.
    rec = engine.recall(context, k=fitting(config.max_chars, config.k))
    # Named, the episode is the one the next hook expires should this one die before tracking it:
    # another recall of the same context (another process on the store) is never taken for it.
    state["recalling"]["episode"] = rec.episode_id
    note_episode(paths.state, rec.episode_id)
    if budget is not None and not budget.commit():
        # The caller gave up (the warm hook serves on, its worker still blocked in the store): Claude
        # never sees these lessons, so the episode teaches nothing and waits for no report.
        engine.expire(rec.episode_id, "the hook gave up on the prompt before its recall returned")
        del state["recalling"]
        log_line(paths.log, f"expired {rec.episode_id}: its recall returned after the hook gave up", now=now)
        return ""
    del state["recalling"]  # kept when the recall failed: it may have stored its episode all the same
    text = fit_prompt(rec.experiences, config.max_chars)
    shown = bool(text) or not rec.ids
    if not shown:
        # Claude never saw them: reported, the episode would count for lessons that were not injected.
        log_line(paths.log, f"{rec.episode_id}: its lessons do not fit in hook.max_chars ({config.max_chars}); "
                 "nothing injected, the episode is never reported", now=now)
    state["episodes"][rec.episode_id] = {
        "session": session, "repo": repo, "time": now, "files": [], "signal": None, "commit": None,
        "audit": [], "context": context, "injected": rec.ids if shown else [], "delivered": shown,
        "prompt_key": prompt_key(prompt), "turn": "open", "task_rule": "config" if ruled else "built-in",
    }
    count = int(previous.get("count", 0)) + 1 if previous else 1
    # No prompt text is kept (a prompt may hold a pasted secret): hashed words tell a re-ask,
    # a hash of the prompt's start finds it again in the transcript.
    state["sessions"][session] = {"episode": rec.episode_id, "words": prompt_words(prompt), "repo": repo,
                                  "time": now, "count": count,
                                  # a session resumed after its end traces its own turns again
                                  **({"transcript": {k: v for k, v in previous["transcript"].items() if k != "left"}}
                                     if previous and isinstance(previous.get("transcript"), dict) else {}),
                                  **({"edited": edited} if edited else {})}
    return text


def _expire_orphan(state: dict[str, Any], lam: Callable[[], Lamar], paths: Paths, now: float) -> None:
    """Expire the episode a hook stored and never tracked (it died between its recall and its state write).

    Once its recall returned, the note names that episode. A hook that died inside its recall named
    none: its episode, if stored, is an untracked pending one of the note's context within
    _RECALL_WINDOW, and is expired only when it is the one such episode (another may be a live recall).
    """
    intent = state.get("recalling")
    if intent is None:
        try:
            intent = read_note(paths.state)
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            intent = {}  # unreadable: names no episode, and is removed with the state's next write
        state["recalling"] = intent
    try:
        orphan = intent.get("episode") if isinstance(intent, dict) else None
        if orphan is None:
            since, context = float(intent["time"]), dict(intent["context"])
            found = [p.episode_id for p in lam().pending() if since <= p.time <= since + _RECALL_WINDOW
                     and dict(p.context) == context and p.episode_id not in state["episodes"]]
            if len(found) > 1:
                log_line(paths.log, f"left {len(found)} pending episodes of a context recalled by a hook stopped "
                         "inside its recall: which one was its own is unknown", now=now)
            orphan = found[0] if len(found) == 1 else None
        elif not isinstance(orphan, str):
            raise TypeError("the note's episode is not an id")
        if orphan is not None and orphan not in state["episodes"] and lam().expire(
                orphan, "its hook was stopped before it could track the episode; nothing was injected"):
            log_line(paths.log, f"expired {orphan}: its hook was stopped before it could track it", now=now)
    except (LookupError, TypeError, ValueError):
        pass  # an intent of the wrong shape (a hand edit) names no episode; the store lost the one it names
    del state["recalling"]


def _on_edit(state: dict[str, Any], payload: Mapping[str, Any], session: str, repo: str | None) -> None:
    tool = payload.get("tool_name")
    if tool not in EDIT_TOOLS | READ_TOOLS or repo is None:
        return
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, Mapping):
        raise TypeError("the PostToolUse payload has no tool_input object")
    target = tool_input.get("file_path") or tool_input.get("notebook_path")
    current = state["sessions"].get(session, {}).get("episode")
    record = state["episodes"].get(current)
    if not isinstance(target, str) or len(target) > MAX_PATH or record is None or record.get("repo") != repo:
        return
    path = Path(target if os.path.isabs(target) else os.path.join(str(payload.get("cwd")), target))
    try:
        relative = Path(os.path.realpath(path)).relative_to(os.path.realpath(repo)).as_posix()
    except ValueError:
        return  # a file outside the repository: git cannot settle it
    if tool in READ_TOOLS or unchanged(payload.get("tool_response")):  # a Write of the same bytes edits nothing
        # Claude Code loads a sub-folder's rules when Claude reads a file there, and a read
        # elsewhere unloads none: only a read inside such a folder moves the folder of the work.
        if rules_folder(Path(repo), path):
            state["sessions"][session]["edited"] = relative
        return
    note_edit(state["episodes"].values(), record, relative)
    state["sessions"][session]["edited"] = relative
    if "base" not in record:
        from lamar_claude_code.outcomes import head_commit

        record["base"] = head_commit(repo)  # None: no commit yet, every commit is later


def _on_stop(state: dict[str, Any], session: str) -> None:
    record = state["episodes"].get(state["sessions"].get(session, {}).get("episode"))
    # "cut": an SDK session ended for idling while its turn ran; the turn finished after all.
    if record is not None and record.get("turn") in ("open", "cut"):
        record["turn"] = "done"  # Claude answered: the session's end may read its silence as acceptance


def _on_end(state: dict[str, Any], session: str, lam: Callable[[], Lamar], paths: Paths, now: float) -> None:
    info = state["sessions"].get(session)
    if not info:
        return
    episode = info.get("episode")
    record = state["episodes"].get(episode)
    if record is None or record.get("signal") is not None:
        return
    if record.get("turn") == "open":
        # No Stop came: the run was killed (SIGTERM, Ctrl+C) or its turn failed, and Claude Code ends such a
        # session with the same SessionEnd as any other. An unfinished answer was not accepted: it teaches
        # nothing, and a resumed session's next prompt or git may still settle it.
        _expire(state, episode, "the session ended before its turn finished (no Stop came)", lam, paths, now)
        record["turn"] = "cut"
    elif record.get("turn") != "cut":
        _report(state, episode, "accepted", "the session ended without a correction", lam, paths, now)
        record["by_end"] = True


def _expire(state: dict[str, Any], episode_id: str, why: str, lam: Callable[[], Lamar], paths: Paths,
            now: float) -> None:
    """Record that an episode gets no outcome for now (a later report still replaces it) and audit why."""
    from lamar import UnknownEpisode

    record = state["episodes"][episode_id]
    if not record.get("delivered", True):
        return
    try:
        expired = lam().expire(episode_id, why)
    except UnknownEpisode:
        _forget(state, episode_id, paths, now)
        return
    if expired:
        record.setdefault("audit", []).append([now, "expired", why])
        log_line(paths.log, f"expired {episode_id}: {why}", now=now)


def _forget(state: dict[str, Any], episode_id: str, paths: Paths, now: float) -> None:
    """Drop an episode the store no longer holds (a sleep compacted it, say): no report can reach it now."""
    state["episodes"].pop(episode_id, None)
    log_line(paths.log, f"forgot {episode_id}: the store no longer holds it", now=now)


def _trace_sessions(state: dict[str, Any], payload: Mapping[str, Any], session: str, event: str, paths: Paths,
                    budget: Budget | None, now: float) -> None:
    """Trace the turns the session's transcript closed since its last event, then what ended sessions left.

    Each event does a bounded share (`transcript.trace_turns`), so a long session's traces are
    written a turn at a time as it goes and a SessionEnd has its last turn to do.
    """
    from lamar import StoreError
    from lamar_claude_code.transcript import TRACES_AT_ONCE, held_ids, trace_turns, traced_to

    info = state["sessions"].get(session)
    path = payload.get("transcript_path")
    work: list[str] = []
    if info is not None and event != "SessionStart" and isinstance(path, str) and path:
        progress = info.get("transcript")
        if not _progress_ok(progress) or progress["path"] != path:
            known = progress if _progress_ok(progress) else {}
            info["transcript"] = {"path": path, "offset": 0, "turns": known.get("turns", 0), "mark": known.get("mark")}
        work.append(session)
    # Sessions whose end left turns untraced, oldest first: any later event goes on with them.
    work += sorted((s for s, r in state["sessions"].items() if s != session and _progress_ok(r.get("transcript"))
                    and r["transcript"].get("left")), key=lambda s: float(state["sessions"][s].get("time", 0)))
    if not work:
        return
    held, size = held_ids(paths.traces, state.get("traces_end"), state.get("held"))
    written = [0]

    def spent() -> bool:  # half the budget at most: the state is still to be saved
        late = budget is not None and time.monotonic() - budget.start > budget.seconds / 2
        return late or written[0] >= TRACES_AT_ONCE

    def more() -> bool:
        if spent():
            return False
        written[0] += 1
        return True

    for sid in work[:3]:  # bounded reads: each is at most READ_AT_ONCE
        progress = state["sessions"][sid]["transcript"]
        final = sid != session or event == "SessionEnd"
        try:
            complete, refused = trace_turns(progress, sid, state["episodes"], paths.traces, held, final=final,
                                            more=more)
        except StoreError as exc:  # a trace file that cannot be written costs only the traces
            log_line(paths.log, f"no traces for session {sid}: {type(exc).__name__}: {exc}", now=now)
            break
        except (OSError, ValueError, RecursionError) as exc:  # so does a transcript gone or unreadable
            if final:
                log_line(paths.log, f"no traces from {progress['path']}: {type(exc).__name__}: {exc}", now=now)
            progress.pop("left", None)
            continue
        for why in refused:
            log_line(paths.log, f"trace skipped: {why}", now=now)
        if final and not complete:
            progress["left"] = True
        else:
            progress.pop("left", None)
        if spent():
            break
    state["traces_end"], state["held"] = traced_to(paths.traces, size, held, state["sessions"])


def _progress_ok(progress: Any) -> bool:
    """Whether a session's tracing progress has the shape this module writes (a hand edit may not)."""
    return (isinstance(progress, dict) and isinstance(progress.get("path"), str)
            and all(type(progress.get(k)) is int and progress[k] >= 0 for k in ("offset", "turns"))
            and isinstance(progress.get("mark"), (str, type(None))))


def _settle_git(state: dict[str, Any], repo: str, lam: Callable[[], Lamar], paths: Paths, now: float, *,
                force: bool = False) -> None:
    watched = [(eid, r) for eid, r in state["episodes"].items()
               if r.get("repo") == repo and r.get("files") and r.get("signal") != "reverted"
               and r.get("delivered", True)]
    if not watched:
        return
    watched = sorted(watched, key=lambda item: -float(item[1].get("time", 0)))[:_SETTLE_AT_ONCE]
    files = sorted({f for _, r in watched for f in r["files"]})
    key = f"git:{repo}"
    if not force and state["repos"].get(key) == _fingerprint(repo, files):
        return  # nothing git or the watched files show has changed since the last look: no git call
    for eid, record in watched:
        found = read_outcome(repo, record)
        if found is None:
            continue
        signal, why, commit = found
        if record.get("signal") == signal:
            continue
        if commit:
            record["commit"] = commit
        _report(state, eid, signal, why, lam, paths, now)
    state["repos"][key] = _fingerprint(repo, files)  # after git ran: its own index refresh counts


def _fingerprint(repo: str, files: list[str]) -> list[Any]:
    """Sizes and times of what a commit, a revert, a checkout or a discarded edit must touch."""
    folder = git_dir(repo)  # a worktree's ".git" file names the real folder
    out: list[Any] = []
    for path in (os.path.join(folder, "index"), os.path.join(folder, "logs", "HEAD"),
                 os.path.join(folder, "packed-refs"), *(os.path.join(repo, f) for f in files)):
        try:
            info = os.stat(path)
            out.append([info.st_mtime_ns, info.st_size])
        except OSError:
            out.append(None)
    return out


def _report(state: dict[str, Any], episode_id: str, signal: str, why: str, lam: Callable[[], Lamar],
            paths: Paths, now: float) -> None:
    """Report (or upgrade) an episode's outcome and audit why; an episode the store lost is forgotten."""
    from lamar import DuplicateReport, UnknownEpisode

    record = state["episodes"][episode_id]
    if not record.get("delivered", True):
        return
    previous = record.get("signal")
    try:
        lam().report(episode_id, signal, replace=previous is not None)
    except UnknownEpisode:
        _forget(state, episode_id, paths, now)
        return
    except DuplicateReport as exc:
        # A hook killed after its report and before its state write, or another reporter: keep the
        # store's outcome, so git's later reading replaces it and the session's trace carries it.
        held = lam().episode(episode_id).signal
        record["signal"] = record.get("signal") or held or "reported-elsewhere"
        if held and not previous:
            record.setdefault("audit", []).append([now, held, "reported before this hook's bookkeeping could note it"])
        log_line(paths.log, f"{episode_id}: {exc}", now=now)
        return
    record["signal"] = signal
    record.setdefault("audit", []).append([now, signal, why])
    change = f"{previous} -> {signal}" if previous else signal
    log_line(paths.log, f"settled {episode_id}: {change} ({why})", now=now)


def _prune(state: dict[str, Any], now: float, config: HookConfig) -> None:
    """Forget episodes git can no longer settle and sessions long gone: the file stays small."""
    window = config.git_window_days * 86400.0
    live = {s.get("episode") for s in state["sessions"].values()}
    for eid in [e for e, r in state["episodes"].items()
                if now - float(r.get("time", 0)) > window and e not in live]:
        del state["episodes"][eid]
    for sid in [s for s, r in state["sessions"].items() if now - float(r.get("time", 0)) > _SESSION_TTL]:
        del state["sessions"][sid]


def settle_all(engine: Callable[[], Lamar], paths: Paths, *, now: float | None = None) -> list[str]:
    """Let git settle every watched episode of every repository (`lamar claude-code settle`).

    Returns:
        One line per outcome reported or upgraded: `episode: signal (why)`.
    """
    now = time.time() if now is None else now
    lines: list[str] = []
    with locked_state(paths.state, paths.log) as state:
        lam = functools.cache(engine)  # opened once, and only when an outcome needs it

        before = {eid: len(r.get("audit", [])) for eid, r in state["episodes"].items()}
        for repo in sorted({str(r["repo"]) for r in state["episodes"].values() if r.get("repo")}):
            if os.path.isdir(repo):
                _settle_git(state, repo, lam, paths, now, force=True)  # cron looks even if nothing moved
        for eid, record in state["episodes"].items():
            for _, signal, why in record.get("audit", [])[before.get(eid, 0):]:
                lines.append(f"{eid}: {signal} ({why})")
    return lines
