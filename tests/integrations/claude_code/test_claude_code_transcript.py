"""A session transcript becomes sleep traces (scrubbed, tied to the hook's episodes) that sleep mines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lamar import Lamar
from lamar.models import ScriptedModel
from lamar.sleep.traces import load_traces
from lamar_claude_code import transcript as transcript_module
from lamar_claude_code.transcript import read_turns

from .conftest import Hook, payload

FIXTURE = Path(__file__).parent / "fixtures" / "transcript.jsonl"
FIRST = "the tests fail with ModuleNotFoundError for shop.pricing"
SECOND = "no, that's wrong, undo that import"


def _transcript(tmp_path: Path, session: str) -> Path:
    text = FIXTURE.read_text().replace("SESSION", session).replace("PROMPT1", FIRST).replace("PROMPT2", SECOND)
    path = tmp_path / f"{session}.jsonl"
    path.write_text(text)
    return path


def test_turns_are_read_from_the_transcript(tmp_path: Path) -> None:
    turns = read_turns(_transcript(tmp_path, "s1"))
    assert [t["prompt"] for t in turns] == [FIRST, SECOND]  # the side chain and the torn line are skipped
    assert turns[0]["attempted"] == ["Bash: pytest -x", "Edit: /home/dev/shop/app.py"]
    assert turns[0]["tool_errors"][0].startswith("ModuleNotFoundError")
    assert turns[0]["output"] == "I added the missing package import; the tests pass."


def test_sessions_become_traces_that_sleep_mines(hook: Hook, repo: Path, tmp_path: Path) -> None:
    for session in ("sess-a", "sess-b"):
        transcript = _transcript(tmp_path, session)
        for event in (payload("UserPromptSubmit", session, repo, prompt=FIRST),
                      payload("UserPromptSubmit", session, repo, prompt=SECOND),
                      payload("Stop", session, repo, stop_hook_active=False),  # the turn finished
                      payload("SessionEnd", session, repo, reason="other")):
            event["transcript_path"] = str(transcript)
            assert hook(event).returncode == 0
    again = payload("SessionEnd", "sess-a", repo, reason="other")  # a second end writes nothing twice
    again["transcript_path"] = str(tmp_path / "sess-a.jsonl")
    hook(again)

    traces_file = hook.store.with_name(hook.store.name + ".claude-code.traces.jsonl")
    traces = load_traces(traces_file)
    assert [t.id for t in traces] == ["cc-sess-a-1", "cc-sess-a-2", "cc-sess-b-1", "cc-sess-b-2"]
    first = traces[0]
    state = hook.state()
    assert first.episode_id in state["episodes"]
    assert first.outcome == "corrected" and traces[1].outcome == "accepted"  # ended without a correction
    assert first.context == {"project": "shop", "language": "python", "task": "tests_fail",
                             "error_class": "ModuleNotFoundError"}
    assert "ghp_" not in traces_file.read_text() and "[REDACTED:github-token]" in first.tool_errors[0]
    assert first.attempted == ("Bash: pytest -x", "Edit: /home/dev/shop/app.py")

    lesson = {"precondition": "tests fail with ModuleNotFoundError for a package of the project",
              "action": "check the package's __init__.py exists before adding imports",
              "rationale": "both sessions added an import the developer undid",
              "scope": {"project": "shop", "task": "tests_fail"}, "trace_ids": ["cc-sess-a-1", "cc-sess-b-1"]}
    model = ScriptedModel(lambda prompt: json.dumps([lesson]))
    lam = Lamar(str(hook.store))
    report = lam.sleep(traces=traces_file, model=model)
    (candidate,) = [p for p in report.proposals if p.kind == "candidate"]
    assert "FIRST" not in model.prompts[0] and FIRST in model.prompts[0]
    lam.apply(report, only=[candidate.id])
    mined = [e for e in lam.experiences(status="candidate") if e.provenance.get("source") == "mined"]
    assert [e.action for e in mined] == [lesson["action"]]
    assert mined[0].provenance["traces"] == ["cc-sess-a-1", "cc-sess-b-1"]
    lam.close()


def test_only_a_regular_file_is_read_and_only_so_much_of_it(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # no writer: opening it to read would block
    for path in (fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(ValueError, match="not a regular file"):
            read_turns(path)
    transcript = _transcript(tmp_path, "s1")
    lines = transcript.read_bytes().splitlines(keepends=True)
    monkeypatch.setattr(transcript_module, "MAX_LINE", max(len(line) for line in lines) + 10)
    long = b'{"type": "user", "message": {"content": "' + b"x" * transcript_module.MAX_LINE + b'"}}\n'
    transcript.write_bytes(lines[0] + long + b"".join(lines[1:]))
    assert [t["prompt"] for t in read_turns(transcript)] == [FIRST, SECOND]  # the long line alone is skipped
    second = next(i for i, line in enumerate(lines) if b'"type": "user"' in line and SECOND.encode() in line)
    monkeypatch.setattr(transcript_module, "MAX_TRANSCRIPT", len(long) + sum(len(line) for line in lines[:second]))
    assert [t["prompt"] for t in read_turns(transcript)] == [FIRST]  # the turns past the cap are not read


def test_text_cut_inside_an_emoji_costs_no_trace(hook: Hook, repo: Path, tmp_path: Path) -> None:
    # JSON.stringify writes a lone surrogate for text cut between an emoji's halves.
    transcript = _transcript(tmp_path, "cut")
    text = transcript.read_text().replace("the tests pass.", "the tests pass \\ud83d")
    assert "\\ud83d" in text
    transcript.write_text(text)
    for event in (payload("UserPromptSubmit", "cut", repo, prompt=FIRST),
                  payload("UserPromptSubmit", "cut", repo, prompt=SECOND),
                  payload("Stop", "cut", repo, stop_hook_active=False),
                  payload("SessionEnd", "cut", repo, reason="other")):
        event["transcript_path"] = str(transcript)
        assert hook(event).returncode == 0
    traces = load_traces(hook.store.with_name(hook.store.name + ".claude-code.traces.jsonl"))
    assert [t.id for t in traces] == ["cc-cut-1", "cc-cut-2"]
    assert traces[0].output.endswith("the tests pass \ufffd")


def test_a_trace_the_format_refuses_costs_only_itself(tmp_path: Path) -> None:
    from lamar_claude_code.outcomes import prompt_key
    from lamar_claude_code.transcript import trace_turns

    progress = {"path": str(_transcript(tmp_path, "s1")), "offset": 0, "turns": 0, "mark": None}
    episodes = {"ep_1": {"session": "s1", "time": 1.0, "prompt_key": prompt_key(FIRST), "context": {"task": 5}},
                "ep_2": {"session": "s1", "time": 2.0, "prompt_key": prompt_key(SECOND), "context": {"task": "x"}}}
    out = tmp_path / "traces.jsonl"
    complete, refused = trace_turns(progress, "s1", episodes, out, set(), final=True, more=lambda: True)
    assert complete and progress["turns"] == 2 and [t.id for t in load_traces(out)] == ["cc-s1-2"]
    assert len(refused) == 1 and refused[0].startswith("cc-s1-1: ") and "'context'" in refused[0]


@pytest.mark.parametrize("cut", [9, 21, 33])
def test_a_credential_cut_by_a_trace_clip_leaves_none_of_it_in_the_file(tmp_path: Path, cut: int) -> None:
    from lamar_claude_code.transcript import trace_turns

    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    prompt = "x" * (4000 - 7 - cut) + " token " + key + " tail"
    command = "curl " + "y" * (300 - 6 - 5 - 7 - cut) + " token " + key + " tail"
    answer = "z" * (4000 - 7 - cut) + " token " + key + " tail"
    path = _transcript(tmp_path, "s1")
    path.write_text(path.read_text().replace(FIRST, prompt).replace("pytest -x", command)
                    .replace("I added the missing package import; the tests pass.", answer))
    out = tmp_path / "traces.jsonl"
    progress = {"path": str(path), "offset": 0, "turns": 0, "mark": None}
    assert trace_turns(progress, "s1", {}, out, set(), final=True, more=lambda: True)[0]
    first = load_traces(out)[0]
    assert first.input.startswith("xxx") and first.attempted[0].startswith("Bash: curl yyy")
    assert first.output.startswith("zzz") and len(first.attempted[0]) <= 300
    assert key[:8] not in out.read_text()


def test_a_compacted_session_traces_each_prompt_once_and_not_the_summary(tmp_path: Path) -> None:
    lines = _transcript(tmp_path, "s1").read_text().splitlines()
    entries = [json.loads(line) for line in lines if line.startswith("{") and line.endswith("}")]
    # As Claude Code writes a compaction: a boundary, the summary in a user entry, and (on a second
    # /compact in one process) every earlier entry appended again under its own uuid.
    compacted = [*entries,
                 {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                  "compactMetadata": {"trigger": "manual", "preTokens": 91000}, "uuid": "c1", "sessionId": "s1"},
                 {"type": "user", "isCompactSummary": True, "isVisibleInTranscriptOnly": True, "uuid": "c2",
                  "message": {"role": "user", "content": "This session is being continued from a previous "
                              "conversation that ran out of context. Summary: the user asked to fix the tests."},
                  "sessionId": "s1"},
                 *entries,
                 {"type": "user", "uuid": "u9", "message": {"role": "user", "content": "now update the changelog"}}]
    path = tmp_path / "compacted.jsonl"
    path.write_text("".join(json.dumps(entry) + "\n" for entry in compacted))
    turns = read_turns(path)
    assert [t["prompt"] for t in turns] == [FIRST, SECOND, "now update the changelog"]
    assert turns[0]["attempted"] == ["Bash: pytest -x", "Edit: /home/dev/shop/app.py"]  # not doubled


def test_entries_that_share_a_millisecond_are_all_read(tmp_path: Path) -> None:
    """Claude Code stamps entries to the millisecond, and entries written at once share one (its two
    attachments before a prompt do): a tool call, or a failing tool's result, stamped as the entry read
    just before it was taken for a compaction's copy and left out of the trace `lamar sleep` mines."""
    def entry(uuid: str, kind: str, content: object) -> dict[str, object]:
        return {"type": kind, "uuid": uuid, "timestamp": "2026-12-06T10:00:01.000Z", "sessionId": "s1",
                "message": {"role": kind, "content": content}}

    calls = [entry("a1", "assistant", [{"type": "tool_use", "id": "t1", "name": "Read",
                                        "input": {"file_path": "/home/dev/shop/cart.py"}}]),
             entry("a2", "assistant", [{"type": "tool_use", "id": "t2", "name": "Bash",
                                        "input": {"command": "pytest -x"}}]),
             entry("r1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "def total(): ..."}]),
             entry("r2", "user", [{"type": "tool_result", "tool_use_id": "t2", "is_error": True,
                                   "content": "FAILED test_cart.py::test_total"}])]
    path = tmp_path / "parallel.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [entry("u1", "user", FIRST), *calls, *calls]))
    (turn,) = read_turns(path)  # the calls written twice (a compaction's copy, same uuids) count once
    assert turn["attempted"] == ["Read: /home/dev/shop/cart.py", "Bash: pytest -x"]
    assert turn["tool_errors"] == ["FAILED test_cart.py::test_total"]
