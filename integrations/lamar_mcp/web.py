"""`serve_http`: the server over streamable HTTP, with the SDK's DNS-rebinding protection on any loopback address,
and its bearer-token check when a token is set (see `lamar mcp`), else answering its own user alone (`SameUserOnly`)."""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket
import sys
from typing import Any

from anyio import to_thread
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, JSONRPCError, jsonrpc_message_adapter
from pydantic import AnyHttpUrl, ValidationError
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lamar.loopback import is_loopback, other_user
from lamar_mcp.lines import bad_id
from lamar_mcp.wire import refused

TOKEN_ENV = "LAMAR_MCP_TOKEN"
TOKEN_LEAST = 16  # characters: a random secret this long is past guessing; a shorter one is a password
# What another user's request is told: what happened and what to do, and no more (not who started it, nor
# which store it serves). Its own user meets it with a client, or a proxy in between, run as someone else.
REFUSAL = ("this lamar mcp answers only the user of this machine who started it, and this request comes from "
           "a program of another user: run `lamar mcp` as the user who runs your MCP client, or start it with "
           "LAMAR_MCP_TOKEN set and give that token to the client (a proxy in between then may run as any user)")


class SameUserOnly:
    """The ASGI app around the SDK's that answers 403 to a request from another user's process on this
    machine (`lamar.loopback.other_user`; Linux), before the SDK reads it.

    Loopback is open to every user of the machine, and without a token the lessons would be theirs
    to read and write. The body is a JSON-RPC error, which the SDK's client raises with its message.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # http alone: the SDK's app serves no websocket, and lifespan events carry no connection. In a worker
        # thread: where netlink is refused the check reads the kernel's whole socket table, which would hold
        # every other request of the event loop meanwhile.
        if scope["type"] == "http" and await to_thread.run_sync(other_user, scope.get("client"), scope.get("server")):
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": REFUSAL}}
            await Response(json.dumps(error), status_code=403, media_type="application/json")(scope, receive, send)
            return
        await self.app(scope, receive, send)


class SameAnswers:
    """The ASGI app around the SDK's that answers a POST body the SDK takes for no request, or for a notification,
    as stdio does: -32600 with the request's id where it can be read (`wire.refused`, `lines.bad_id`).

    The SDK's HTTP transport answers JSON that is no message -32602 (invalid params) with pydantic's dump of
    the union it tried, and a request whose id is no string or integer 202, as a notification, so a client
    waits for an answer that never comes (its issue #2057). Only those two answers are replaced, after the
    SDK read the body: a request its auth, host or session checks refuse keeps their answer.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body: list[bytes] = []
        held: list[Message] = []

        async def reading() -> Message:
            message = await receive()
            body.append(message.get("body", b""))
            return message

        async def answering(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in (400, 202):
                held.append(message)  # the SDK's own answer, until its body shows whether to replace it
                return
            if held and message["type"] == "http.response.body":
                refusal = _refusal(b"".join(body), held[0]["status"], message.get("body", b""))
                if refusal is not None:
                    await Response(refusal.model_dump_json(by_alias=True, exclude_unset=True), status_code=400,
                                   media_type="application/json")(scope, receive, send)
                    held.clear()
                    return
                await send(held.pop())
            await send(message)

        await self.app(scope, reading, answering)


def _refusal(body: bytes, status: int, answer: bytes) -> JSONRPCError | None:
    """stdio's answer to `body` where the SDK answered it `status` (`answer`): 202 to a request with an id that is
    no string or integer, 400 with -32602 to JSON that is no message; else None, and the SDK's answer stands."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if status == 202:
        return bad_id(text)
    try:
        if json.loads(answer)["error"]["code"] != INVALID_PARAMS:
            return None
        jsonrpc_message_adapter.validate_json(body, by_name=False)
    except ValidationError as exc:
        return refused(exc)
    except (ValueError, KeyError, TypeError):
        pass
    return None


class BearerToken:
    """The SDK's `TokenVerifier` for one shared secret: a request carrying it is let in, any other is refused."""

    def __init__(self, token: str) -> None:
        # HTTP drops the blank space around a header's value: a token kept with it (a line's end from a file
        # written on Windows, a space in an .env file) would let no client in.
        self._token = token.strip().encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token):  # constant time: no guessing by timing
            return AccessToken(token="", client_id="lamar-token", scopes=[])
        return None


def token_problem(token: str) -> str:
    """What makes `token` unfit to guard the server, said after its name ("" when it is fit): the SDK lets a
    client try tokens as fast as it likes, so a short one is found by trying; blank space counts for nothing."""
    kept = len("".join(token.split()))
    if kept >= TOKEN_LEAST:
        return ""
    held = f"{kept} characters" + (" besides blank space" if kept < len(token) else "")
    return (f"holds {held}, few enough to be found by trying: set it to a random secret of {TOKEN_LEAST} "
            "characters or more, such as the output of "
            "`python -c \"import secrets; print(secrets.token_urlsafe(32))\"`")


def bearer_auth(token: str) -> dict[str, Any]:
    """MCPServer keyword arguments that make every HTTP request show `Authorization: Bearer <token>`.

    Raises:
        InvalidArgument: the token is short enough to guess (`token_problem`).
    """
    problem = token_problem(token)
    if problem:
        from lamar import InvalidArgument

        raise InvalidArgument(f"the token {problem}")
    # Lamar issues no OAuth tokens: the issuer is a placeholder the SDK needs, and no metadata
    # routes are published (resource_server_url is None).
    return {"token_verifier": BearerToken(token),
            "auth": AuthSettings(issuer_url=AnyHttpUrl("http://127.0.0.1"), resource_server_url=None)}


def rebinding_guard(host: str) -> TransportSecuritySettings | None:
    """Host and Origin checks for a loopback bind (any 127.x address, not only the SDK's three names)."""
    if not is_loopback(host):
        return None  # reachable by name from elsewhere: the bearer token is the guard there
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    hosts = sorted({f"{shown}:*", "127.0.0.1:*", "localhost:*", "[::1]:*"})
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=[f"http://{h}" for h in hosts])


async def serve_http(server: Any, *, host: str = "127.0.0.1", port: int = 8765, path: str = "/mcp") -> None:
    """Serve streamable HTTP at http://host:port/mcp until interrupted.

    The URL is printed on stderr once the socket listens (with the real port when `port` is
    0), so a script can start the server and wait for that line.
    """
    import anyio
    import uvicorn

    # Plain JSON answers, not an SSE stream per call: no tool here streams progress or asks the
    # client anything mid-call, and under concurrent clients this halves the CPU an episode costs.
    app = server.streamable_http_app(streamable_http_path=path, host=host, json_response=True,
                                     transport_security=rebinding_guard(host))
    # With a token, holding it is what lets a request in, whoever sends it: a TLS proxy on this machine runs as
    # its own user. Without one, nothing but the kernel's word on the connecting socket keeps other users out.
    tokened = getattr(getattr(server, "settings", None), "auth", None) is not None
    # proxy_headers off: uvicorn would take X-Forwarded-For from any loopback client as its address, and
    # `other_user` would find no socket of that address and let another user in
    app = SameAnswers(app)
    config = uvicorn.Config(app if tokened else SameUserOnly(app), host=host, port=port, log_level="warning",
                            lifespan="on", proxy_headers=False)
    web = uvicorn.Server(config)
    # uvicorn binds "::" through asyncio, which makes every IPv6 socket IPv6-only and so refuses 127.0.0.1;
    # "::" asks for every address (a Linux socket's own default), so it is given one socket for both.
    sockets = [socket.create_server(("::", port), family=socket.AF_INET6, dualstack_ipv6=True)] \
        if _every_address(host) else None

    async def announce() -> None:
        while not web.started:
            await anyio.sleep(0.01)
        bound = web.servers[0].sockets[0].getsockname()[1] if web.servers else port
        shown = f"[{host}]" if ":" in host else host
        print(f"lamar mcp: serving http://{shown}:{bound}{path}", file=sys.stderr, flush=True)

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(announce)
            await web.serve(sockets=sockets)
            tasks.cancel_scope.cancel()
    finally:
        for sock in sockets or ():
            sock.close()


def _every_address(host: str) -> bool:
    """`host` is IPv6's unspecified address (`::`), and this system can serve IPv4 on the same socket."""
    try:
        unspecified = ipaddress.ip_address(host.strip("[]")) == ipaddress.IPv6Address("::")
    except ValueError:
        return False
    return unspecified and socket.has_dualstack_ipv6()


__all__ = ["REFUSAL", "TOKEN_ENV", "TOKEN_LEAST", "BearerToken", "SameAnswers", "SameUserOnly", "bearer_auth",
           "is_loopback", "rebinding_guard", "serve_http", "token_problem"]
