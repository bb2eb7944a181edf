"""`lamar mcp --transport http` off loopback: refused without a token, the SDK's bearer check with one;
DNS-rebinding protection on every loopback address, 127.0.0.2 included."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from lamar_mcp.launch import child_env, http_server, http_session, lamar_command

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "probe", "version": "0"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SECRET = "s3cret-token-for-this-test-only-0123456789"


def test_a_non_loopback_bind_refuses_without_a_token(store: Path) -> None:
    env = {k: v for k, v in child_env().items() if k != "LAMAR_MCP_TOKEN"}
    done = subprocess.run([*lamar_command(), "mcp", "--transport", "http", "--host", "0.0.0.0", "--port", "0",
                           "--store", str(store)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "LAMAR_MCP_TOKEN" in done.stderr and "--host 0.0.0.0" in done.stderr and "Traceback" not in done.stderr


async def test_with_a_token_every_request_must_carry_it(store: Path) -> None:
    with http_server(store, "--host", "0.0.0.0", env={"LAMAR_MCP_TOKEN": SECRET}) as url:
        local = url.replace("0.0.0.0", "127.0.0.1")
        async with http_session(local, token=SECRET) as session:
            listed = await session.call_tool("lessons", {})
            assert listed.structured_content["count"] == 3
        async with httpx2.AsyncClient() as client:
            bare = await client.post(local, json=INITIALIZE, headers=ACCEPT)
            wrong = await client.post(local, json=INITIALIZE, headers={**ACCEPT, "Authorization": "Bearer guess"})
        assert bare.status_code == 401 and wrong.status_code == 401
        with pytest.raises((MCPError, httpx2.HTTPError, ExceptionGroup)):
            async with http_session(local, token="guess") as session:
                await session.list_tools()


@pytest.mark.parametrize("around", [" ", "\r", "\r\n", "\t"])
async def test_a_token_read_with_blank_space_around_it_lets_its_client_in(store: Path, around: str) -> None:
    # HTTP drops the blank space around a header's value, so a token kept with it (a line's end from a file written
    # on Windows, a space in an .env file) let no client in: the server served a store no request could reach.
    with http_server(store, env={"LAMAR_MCP_TOKEN": f"{around}{SECRET}{around}"}) as url:
        async with http_session(url, token=SECRET) as session:
            listed = await session.call_tool("lessons", {})
            assert listed.structured_content["count"] == 3
        async with httpx2.AsyncClient() as client:
            wrong = await client.post(url, json=INITIALIZE, headers={**ACCEPT, "Authorization": "Bearer guess"})
        assert wrong.status_code == 401


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS routes only 127.0.0.1 without an alias")
async def test_any_loopback_address_keeps_dns_rebinding_protection(store: Path) -> None:
    with http_server(store, "--host", "127.0.0.2") as url:
        assert url.startswith("http://127.0.0.2:")
        async with httpx2.AsyncClient() as client:
            rebound = await client.post(url, json=INITIALIZE, headers={**ACCEPT, "Host": "attacker.example"})
            ours = await client.post(url, json=INITIALIZE, headers=ACCEPT)
        assert rebound.status_code in (403, 421), rebound.status_code  # the SDK refuses a foreign Host
        assert ours.status_code == 200, ours.text


@pytest.mark.parametrize(("host", "token", "said"), [("127.0.0.1", "hunter2", "holds 7 characters,"),
                                                      ("0.0.0.0", "hunter2", "holds 7 characters,"),
                                                      ("0.0.0.0", " " * 20, "holds 0 characters besides blank space")])
def test_a_token_short_enough_to_guess_is_refused_before_serving(store: Path, host: str, token: str, said: str) -> None:
    done = subprocess.run([*lamar_command(), "mcp", "--transport", "http", "--host", host, "--port", "0",
                           "--store", str(store)], env={**child_env(), "LAMAR_MCP_TOKEN": token},
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, done.stderr
    assert f"LAMAR_MCP_TOKEN {said}" in done.stderr and "secrets.token_urlsafe" in done.stderr
    assert "serving" not in done.stderr and "Traceback" not in done.stderr


def test_a_server_built_in_python_refuses_a_token_short_enough_to_guess(store: Path) -> None:
    from lamar import InvalidArgument, Lamar
    from lamar_mcp import build_server

    with Lamar(str(store)) as lam:
        for token in ("hunter2", " " * 20, "short token here"):
            with pytest.raises(InvalidArgument, match="few enough to be found by trying"):
                build_server(lam, token=token)
        assert build_server(lam, token="x" * 16) is not None


async def test_the_default_bind_refuses_a_foreign_host_or_origin(store: Path) -> None:
    with http_server(store) as url:
        assert url.startswith("http://127.0.0.1:")
        async with httpx2.AsyncClient() as client:
            sends = (("host", {"Host": "evil.example"}), ("origin", {"Origin": "http://evil.example"}),
                     ("null", {"Origin": "null"}), ("ours", {"Origin": url.rsplit("/", 1)[0]}))
            answers = {name: (await client.post(url, json=INITIALIZE, headers={**ACCEPT, **sent})).status_code
                       for name, sent in sends}
            plain = await client.post(url, content=b"{}", headers={"Content-Type": "text/plain"})  # a form's kind
            preflight = await client.options(url, headers={"Origin": "http://evil.example",
                                                           "Access-Control-Request-Method": "POST"})
    assert answers == {"host": 421, "origin": 403, "null": 403, "ours": 200}, answers
    assert plain.status_code == 400  # what a page may post cross-site without asking is refused
    assert "access-control-allow-origin" not in preflight.headers  # and it may not ask


@pytest.mark.skipif(not socket.has_dualstack_ipv6(), reason="this system serves IPv4 and IPv6 on separate sockets")
async def test_the_ipv6_any_address_serves_ipv4_clients_too(store: Path) -> None:
    # uvicorn binds "::" through asyncio, IPv6 alone: 127.0.0.1 was refused though "::" reads as every address.
    with http_server(store, "--host", "::", env={"LAMAR_MCP_TOKEN": SECRET}) as url:
        assert url.startswith("http://[::]:")
        for local in (url.replace("[::]", "127.0.0.1"), url.replace("[::]", "[::1]")):
            async with http_session(local, token=SECRET) as session:
                assert (await session.call_tool("lessons", {})).structured_content["count"] == 3, local
