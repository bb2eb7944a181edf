"""Lines on `lamar mcp`'s stdin that are no JSON-RPC message, written as raw bytes to a real process: each is
answered with the JSON-RPC 2.0 error it calls for, said in one line on stderr, and the server serves on; over HTTP
the SDK answers such a body itself."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio

from lamar_mcp.launch import child_env, http_server, lamar_command

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "0"}}}
DIGITS = b"9" * 5000  # valid JSON, and a number no JSON reader of this SDK takes
PARSE, INVALID = -32700, -32600

# (what is written, the (id, code) it is answered with; None: no answer)
LINES: list[tuple[bytes, tuple[Any, int] | None]] = [
    (b"password hunter2", (None, PARSE)),
    (b"\xff\xfe{", (None, PARSE)),  # not UTF-8, and no JSON once read as U+FFFD
    (b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"n": ' + DIGITS + b"}}", (3, INVALID)),
    (b'{"jsonrpc": "2.0", "id": ' + DIGITS + b', "method": "ping"}', (None, INVALID)),  # an id it cannot read
    (b'{"jsonrpc": "2.0", "id": 7, "method": 3}', (7, INVALID)),
    (b'[{"jsonrpc": "2.0", "id": 8, "method": "ping"}]', (None, INVALID)),  # a batch: MCP takes none
    (b'{"jsonrpc": "2.0", "id": 9, "result": "ok"}', (None, INVALID)),  # a reply, whose id names no request of ours
    (b'{"jsonrpc": "2.0", "id": "ten", "method": "tools/call", "params": [1]}', ("ten", INVALID)),
    (b'{"id": 11, "method": "ping"}', (11, INVALID)),
    (b'{"jsonrpc": "2.0", "id": 12, "method": 3, "params": {"t": "\\ud83d"}}', (12, INVALID)),  # half an emoji too
    (b'{"jsonrpc": "2.0", "id": 13, "method": "ping", "params": {"a": ' + b"[" * 300 + b"]" * 300 + b"}}",
     (13, INVALID)),  # deeper than the SDK's parser goes
    # MCP's request id is a string or an integer: a request with any other id is no notification to stay silent on
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', (None, INVALID)),
    (b'{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', (None, INVALID)),
    (b'{"jsonrpc": "2.0", "id": {"n": 14}, "method": "ping"}', (None, INVALID)),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', (None, INVALID)),
    (b"   ", None),  # blank: no message, so nothing to answer
]


async def _serve(store: Path) -> tuple[list[dict[str, Any]], str, int]:
    """Write INITIALIZE, every line of LINES and a ping as raw bytes; return what came back until the ping's
    answer, then stderr and the exit status once stdin is closed."""
    process = await anyio.open_process([*lamar_command(), "mcp", "--store", str(store)], env=child_env(),
                                       stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    answers: list[dict[str, Any]] = []
    with anyio.fail_after(120):  # a bound on a hang: a line left unanswered would leave this waiting
        buffered = b""
        lines = [json.dumps(INITIALIZE).encode(), b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
                 *(line for line, _ in LINES), b'{"jsonrpc": "2.0", "id": 99, "method": "ping"}']
        await process.stdin.send(b"".join(line + b"\n" for line in lines))
        while not answers or answers[-1].get("id") != 99:
            chunk = await process.stdout.receive()
            *complete, buffered = (buffered + chunk).split(b"\n")
            answers.extend(json.loads(line) for line in complete)
        await process.stdin.aclose()
        status = await process.wait()
        errors = b""
        async for chunk in process.stderr:
            errors += chunk
    return answers, errors.decode(), status


async def test_each_line_that_is_no_message_is_answered_as_json_rpc_says_and_logged(store: Path) -> None:
    answers, stderr, status = await _serve(store)
    assert answers[0]["id"] == 0 and "result" in answers[0], answers[0]
    expected = [answer for _, answer in LINES if answer is not None]
    assert [(a["id"], a["error"]["code"]) for a in answers[1:-1]] == expected, answers
    assert answers[-1] == {"jsonrpc": "2.0", "id": 99, "result": {}}  # the server serves on
    for answer in answers[1:-1]:
        assert answer["jsonrpc"] == "2.0" and answer["error"]["message"], answer
    assert "5000 digits" in answers[3]["error"]["message"]
    assert "batch" in answers[6]["error"]["message"]
    assert "method: Input should be a valid string" in answers[10]["error"]["message"], answers[10]
    assert "recursion limit" in answers[11]["error"]["message"], answers[11]
    dropped = [line for line in stderr.splitlines() if line.startswith("lamar mcp: ")]
    assert len(dropped) == len(expected), stderr
    assert [str(code) in line for line, (_, code) in zip(dropped, expected)] == [True] * len(expected), stderr
    assert "hunter2" not in stderr  # what a line held stays off the log: it may be a secret
    assert status == 0, stderr


def _post(url: str, body: bytes, session: str | None = None) -> tuple[int, dict[str, str], Any]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               **({"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"} if session else {})}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers), timeout=30) as served:
            return served.status, dict(served.headers), json.loads(served.read() or b"null")
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers), json.loads(refused.read())


def test_over_http_a_body_that_is_no_message_gets_a_400_with_the_error_stdio_gives(store: Path) -> None:
    with http_server(store) as url:
        status, headers, answer = _post(url, json.dumps(INITIALIZE).encode())
        assert status == 200 and answer["id"] == 0, answer
        session = {key.lower(): value for key, value in headers.items()}["mcp-session-id"]
        assert _post(url, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', session)[0] == 202
        for line, expected in LINES:
            if expected is None or any(part in line for part in (b"\xff", DIGITS, b"[" * 300, b"\\ud83d")):
                continue  # no UTF-8, more than the SDK's JSON reader takes, or half an emoji: no JSON over HTTP
            status, _, answer = _post(url, line, session)
            assert status == 400 and (answer["id"], answer["error"]["code"]) == expected, (line, answer)
            assert "validation error" not in answer["error"]["message"], answer  # stdio's words, not pydantic's dump
            assert "hunter2" not in answer["error"]["message"]
        status, _, answer = _post(url, b'{"jsonrpc": "2.0", "id": "s", "method": "ping"}', session)
        assert status == 200 and answer == {"jsonrpc": "2.0", "id": "s", "result": {}}  # and it serves on


def test_a_script_that_closes_stdin_after_its_last_line_gets_an_answer_to_every_request(store: Path) -> None:
    # As `printf '...' | lamar mcp` does: stdin ends right after the last request, before any is answered.
    calls = [{"jsonrpc": "2.0", "id": "a string id", "method": "ping"},
             {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "propose_lesson", "arguments": {
                 "precondition": "a script pipes requests", "action": "answer each before exiting"}}},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "recall", "arguments": {"context": {"project": "trace"}}}}]
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *calls]
    done = subprocess.run([*lamar_command(), "mcp", "--store", str(store)], env=child_env(), capture_output=True,
                          check=False, input=b"".join(json.dumps(line).encode() + b"\n" for line in lines), timeout=120)
    answers = {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers, key=str) == [0, 1, 2, "a string id"], done.stdout
    assert answers["a string id"] == {"jsonrpc": "2.0", "id": "a string id", "result": {}}
    for request in (1, 2):
        assert "error" not in answers[request] and not answers[request]["result"]["isError"], answers[request]
    assert answers[2]["result"]["structuredContent"]["episode_id"], answers[2]
    assert done.returncode == 0, done.stderr
