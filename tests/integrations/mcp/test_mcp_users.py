"""`lamar mcp --transport http` run by an ordinary (not root) user, each side a real process under its own uid:
its own user's MCP client reads and writes, root's too. Without a token another user's gets a 403 that says what
to do and changes nothing; with one, the token decides (a proxy on this machine runs as its own user)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar
from lamar_mcp.launch import http_server
from tests.integrations.mcp.conftest import events
from tests.users import OWNER, STRANGER, as_user, need_root, user_env

SECRET = "s3cret-token-for-this-test-only-0123456789"

# The SDK's own client: its streamable HTTP transport, one session that lists the lessons and proposes one.
# Prints what it got, or the messages of whatever it raised, as JSON.
_CLIENT = r"""
import json, sys
import anyio
from lamar_mcp.launch import http_session
url, token, situation = sys.argv[1], sys.argv[2] or None, sys.argv[3]

def said(exc):
    if isinstance(exc, BaseExceptionGroup):
        return [line for inner in exc.exceptions for line in said(inner)]
    return [f"{type(exc).__name__}: {exc}"]

async def main():
    try:
        async with http_session(url, token) as session:
            listed = await session.call_tool("lessons", {})
            added = await session.call_tool("propose_lesson", {"precondition": situation,
                                                               "action": "run them in parallel"})
            return {"count": listed.structured_content["count"], "added": not added.is_error}
    except BaseException as exc:
        return {"refused": said(exc)}

print(json.dumps(anyio.run(main)))
"""

# Bare HTTP, as any program may send it: an initialize POST (with the token, and with an X-Forwarded-For naming
# another machine), and a GET. Prints each answer's status, content type and text as JSON.
_PROBE = r"""
import http.client, json, sys
from urllib.parse import urlsplit
url, token = urlsplit(sys.argv[1]), sys.argv[2]
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                   "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}})
sent = {"Host": url.netloc, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
if token:
    sent["Authorization"] = "Bearer " + token
answers = []
for method, more in (("POST", {}), ("POST", {"X-Forwarded-For": "203.0.113.7"}), ("GET", {})):
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request(method, url.path, body=body if method == "POST" else None, headers={**sent, **more})
    answer = conn.getresponse()
    answers.append([answer.status, answer.getheader("content-type") or "", answer.read().decode()])
print(json.dumps(answers))
"""


@pytest.fixture(scope="module", params=[None, SECRET], ids=["no-token", "token"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, str | None, Path]]:
    """(url, token, store) of `lamar mcp --transport http` started by OWNER on a store of OWNER's."""
    need_root()
    token: str | None = request.param
    folder = Path(tempfile.mkdtemp(prefix="lamar-mcp-users-"))  # not pytest's: root's alone (0700)
    try:
        store = folder / "lessons.db"
        with Lamar(str(store), seed=1) as lam:
            lam.add(Experience("the build fails", "clear DerivedData"))
        for path in (folder, *folder.iterdir()):
            os.chown(path, OWNER, OWNER)
        env = {**user_env(folder), **({"LAMAR_MCP_TOKEN": token} if token else {})}
        with http_server(store, env=env, prefix=as_user(OWNER)) as url:
            yield url, token, store
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run(script: str, url: str, token: str | None, prefix: list[str], home: Path, *more: str) -> Any:
    done = subprocess.run([*prefix, sys.executable, "-c", script, url, token or "", *more], capture_output=True,
                          text=True, env=user_env(home), cwd=home, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_its_own_users_client_reads_and_writes(served: tuple[str, str | None, Path]) -> None:
    url, token, store = served
    got = _run(_CLIENT, url, token, as_user(OWNER), store.parent, "the unit tests are slow")
    assert got["added"] is True and got["count"] >= 1, got


def test_roots_client_is_let_in(served: tuple[str, str | None, Path]) -> None:
    url, token, store = served  # root can read the server's memory and the store anyway
    got = _run(_CLIENT, url, token, [], store.parent, "the integration tests hang")
    assert got["added"] is True and got["count"] >= 1, got


@pytest.mark.parametrize("served", [None], indirect=True, ids=["no-token"])
def test_another_users_client_is_refused_with_a_message_that_says_what_to_do(
        served: tuple[str, str | None, Path]) -> None:
    url, token, store = served
    before = events(store)
    got = _run(_CLIENT, url, token, as_user(STRANGER), store.parent, "the migration is slow")
    said = " ".join(got.get("refused", []))
    assert "MCPError: this lamar mcp answers only the user of this machine who started it" in said, got
    assert "run `lamar mcp` as the user who runs your MCP client" in said and "LAMAR_MCP_TOKEN" in said
    # nothing that helps a stranger: no store, no lesson, no name of the user who started it
    assert str(store) not in said and "build" not in said and str(OWNER) not in said
    assert events(store) == before


@pytest.mark.parametrize("served", [None], indirect=True, ids=["no-token"])
def test_another_users_bare_requests_get_403_whatever_they_carry(served: tuple[str, str | None, Path]) -> None:
    url, token, store = served
    before = events(store)
    answers = _run(_PROBE, url, token, as_user(STRANGER), store.parent)
    for status, kind, text in answers:  # naming another address too
        assert status == 403 and kind == "application/json", (status, text)
        error = json.loads(text)["error"]
        assert error["code"] == -32600 and "another user" in error["message"]
    assert events(store) == before
    assert _run(_PROBE, url, token, as_user(OWNER), store.parent)[0][0] == 200  # the same requests, its own user


@pytest.mark.parametrize("served", [SECRET], indirect=True, ids=["token"])
def test_with_a_token_another_user_needs_the_token(served: tuple[str, str | None, Path]) -> None:
    """A server with a token lets in whoever holds it (a TLS proxy run as www-data, say) and no one else."""
    url, token, store = served
    before = events(store)
    bare = _run(_PROBE, url, "", as_user(STRANGER), store.parent)
    assert [status for status, _, _ in bare] and all(status == 401 for status, _, _ in bare), bare
    assert events(store) == before
    got = _run(_CLIENT, url, token, as_user(STRANGER), store.parent, "the proxy forwards the call")
    assert got.get("added") is True, got
