"""Stored text cannot drive the terminal of the person who runs a `lamar` command.

Lesson text is cleaned when stored, but scope values, provenance (an MCP client's name among
them), audit reasons, proposal ids and reasons keep what was sent. Each was printed raw: an
ESC sequence could clear the screen (CSI 2J) or set the clipboard (OSC 52), a bidi override
could reverse the rest of a line. Every command's output passes one neutraliser
(`lamar.safety.terminal_safe`); the real command runs in a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

HOSTILE = {"project": "t\x1b[2J", "note": "s\u202er"}
CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: set the clipboard
CLEAR = "\x1b[2J"
C1_CSI = "\x9b2J"  # CSI as one C1 byte
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def _lamar(store: Path, *args: str, stdin: str = "", check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", "--store", str(store), *args], input=stdin,
                          capture_output=True, text=True, timeout=60, check=check)


def _clean(*outputs: subprocess.CompletedProcess[str]) -> str:
    text = "".join(o.stdout + o.stderr for o in outputs)
    assert not [c for c in RAW if c in text], text
    return text


def test_control_and_bidi_characters_in_a_scope_are_printed_as_escapes(tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    lam = Lamar(str(store))
    exp_id = lam.add(Experience("the build fails", "clear DerivedData", scope=Scope(HOSTILE)))
    assert dict(lam.get(exp_id).scope) == HOSTILE  # stored as sent: nothing is lost
    lam.close()
    for out in (_lamar(store, "ls").stdout, _lamar(store, "show", exp_id).stdout):
        assert "\x1b" not in out and "\u202e" not in out
        assert "project=t\\x1b[2J" in out and "note=s\\u202er" in out


def test_provenance_and_audit_reasons_print_no_escape_sequence(tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    lam = Lamar(str(store))
    exp_id = lam.add(Experience("the build fails", "clear DerivedData",
                                provenance={"source": f"agent{CLEAR}", "client": CLIPBOARD, "via": C1_CSI}))
    lam.retire(exp_id, reason=f"stale {CLIPBOARD}{CLEAR}\u202eesrever")
    lam.close()
    text = _clean(_lamar(store, "show", exp_id), _lamar(store, "ls", "--status", "retired"))
    assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in text and "\\x1b[2J" in text
    shown = _lamar(store, "show", exp_id, "--json")
    _clean(shown)
    data = json.loads(shown.stdout)  # still valid JSON, and it reads back as what was stored
    assert data["provenance"]["client"] == CLIPBOARD and data["provenance"]["via"] == C1_CSI


def test_a_proposal_id_and_reason_in_a_report_print_no_escape_sequence(tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    lam = Lamar(str(store))
    exp_id = lam.add(Experience("the build fails", "clear DerivedData"))
    lam.close()
    hostile_id = f"retire_{CLIPBOARD}{CLEAR}"
    report = {"format": "lamar-sleep-report", "made_at": 0, "dropped": [], "events_seen": 0, "summary": {},
              "proposals": [{"id": hostile_id, "kind": "retire", "experience_ids": [exp_id],
                             "reason": f"harms {CLEAR}{C1_CSI}", "evidence": {}, "payload": {}, "expect": {}}]}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    review = _lamar(store, "review", str(path), stdin="n\n")
    path.write_text(json.dumps(report))
    applied = _lamar(store, "apply", str(path), check=False)
    as_json = _lamar(store, "apply", str(path), "--json", check=False)
    text = _clean(review, applied, as_json)
    assert "retire_\\x1b]52;c;" in text
    assert json.loads(as_json.stdout)["skipped"][0]["id"] == hostile_id


def test_an_mcp_clients_name_reaches_lamar_show_as_visible_escapes(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.types import Implementation

    from lamar_mcp.launch import child_env, lamar_command

    store = tmp_path / "lessons.db"
    Lamar(str(store)).close()
    command = lamar_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp", "--store", str(store)],
                                   env=child_env())

    async def propose() -> str:
        async with stdio_client(params) as (read, write), ClientSession(
                read, write, client_info=Implementation(name=f"evil{CLIPBOARD}{CLEAR}", version="1")) as session:
            await session.initialize()
            done = await session.call_tool("propose_lesson", {
                "precondition": "SwiftPM resolution hangs", "action": "delete Package.resolved and resolve again",
                "rationale": "", "scope": {}})
            assert not done.is_error, done.content
            return str(done.structured_content["lesson_id"])

    lesson_id = anyio.run(propose)
    with Lamar(str(store)) as lam:
        kept_raw = CLIPBOARD in str(lam.get(lesson_id).provenance.get("client"))
    text = _clean(_lamar(store, "show", lesson_id), _lamar(store, "ls", "--status", "candidate"))
    # The server may clean the name itself when it stores it; whatever it kept is printed visibly.
    assert "evil" in text and (not kept_raw or "evil\\x1b]52;c;" in text)
