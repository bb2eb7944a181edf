"""`lamar mcp`: serve the store to MCP clients (Claude Desktop, Claude Code, Cursor, ...)."""

from __future__ import annotations

import argparse
import importlib
import math
import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

from lamar.cli.session import UsageError, is_file_location, open_raw, store_source
from lamar.engine import Lamar
from lamar.extras import needs_extra
from lamar.loopback import is_loopback
from lamar.state.copied import agents_tuning
from lamar.typed import typed_number, typed_whole

TOKEN_ENV = "LAMAR_MCP_TOKEN"  # as lamar_mcp.web has it; a token on the command line would show in `ps`


def cmd_mcp(args: argparse.Namespace) -> int:
    """Run the MCP server until the client disconnects (stdio) or the process is stopped (http)."""
    # The command line is judged before the extra is looked for: installing it would not fix a usage error.
    if args.transport == "stdio" and (args.host != "127.0.0.1" or args.port is not None):
        raise UsageError("--host and --port apply to --transport http; stdio needs neither")
    token = (os.environ.get(TOKEN_ENV) or None) if args.transport == "http" else None
    location, hooks = store_source(args)
    if args.store_timeout is not None and not is_file_location(location):
        raise UsageError("--store-timeout applies to a SQLite or JSON store's writer lock; leave it out for "
                         f"{location if location == ':memory:' else 'a PostgreSQL store'}")
    try:
        # Imported by name: the integration lives outside the core and needs the `mcp` extra.
        lamar_mcp = importlib.import_module("lamar_mcp")
        anyio = importlib.import_module("anyio")
    except ImportError as exc:
        if "the mcp extra" in str(exc):  # lamar_mcp's own message already names the extra
            raise
        raise ImportError(needs_extra("lamar mcp needs the MCP SDK and lamar_mcp", "mcp", exc)) from exc
    problem = lamar_mcp.web.token_problem(token) if token is not None else ""
    if problem:
        raise UsageError(f"{TOKEN_ENV} {problem}")
    if args.transport == "http" and not token and not is_loopback(args.host):
        raise UsageError(f"--host {args.host} can be reached from other machines, and the store would answer anyone: "
                         f"set {TOKEN_ENV} to a long random secret (clients send `Authorization: Bearer <it>`), "
                         "or serve on 127.0.0.1")
    # A read-only server must not create a store by opening it; one that writes may start a new one.
    raw = open_raw(location, create=not args.read_only, hooks=hooks,
                   busy="restart the server once that writer is done (reopen your MCP client, or run `lamar mcp` "
                        "again), or give it a longer --store-timeout", timeout=args.store_timeout)
    if args.read_only:
        from lamar.store.json_file import JsonStore
        from lamar.store.postgres.store import PostgresStore
        from lamar.store.sqlite import SqliteStore

        # Nor does it tidy the file's caches, or save the engine's state beside the log, as other readers may.
        if isinstance(raw, SqliteStore | PostgresStore | JsonStore):
            raw.writes_on_read = False
    lam = Lamar(raw, seed=args.seed, **agents_tuning(raw))  # as the agents folded the store
    try:
        server = lamar_mcp.build_server(lam, read_only=args.read_only, report=not args.no_report, token=token)
        if args.transport == "stdio":
            _serve_stdio(anyio, lamar_mcp, server, lam)
        else:
            port = 8765 if args.port is None else args.port
            _check_free(args.host, port)
            anyio.run(lambda: lamar_mcp.serve_http(server, host=args.host, port=port))
    finally:
        lam.close()
    return 0


def _serve_stdio(anyio: Any, lamar_mcp: Any, server: Any, lam: Lamar) -> None:
    """Serve stdio until the client closes the pipe; on Ctrl-C (SIGINT) close the store and end at once."""
    def interrupted(signum: int, frame: object) -> None:
        # The SDK reads stdin in a worker thread that returns only when the client closes the pipe,
        # and both the event loop and the interpreter's exit wait for it: a client that keeps the
        # pipe open would hold an interrupted server alive for ever. Closing a SQLite store waits for
        # a write in progress; a JSON store recovers one cut short, as after a crash.
        try:
            lam.close()
            print("lamar: error: interrupted", file=sys.stderr, flush=True)
        finally:
            os._exit(130)

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        anyio.run(lamar_mcp.serve_stdio, server)
    finally:
        signal.signal(signal.SIGINT, previous)


def add_mcp_command(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register `lamar mcp` with the parser's `command(name, help, handler)` factory."""
    mcp = command("mcp", "serve the store to MCP clients: tools to recall, report, list, search, propose, edit "
                  "and erase lessons, import rules and ask what if; resources lamar://lessons and lamar://scopes "
                  "(needs lamar[mcp])", cmd_mcp)
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                     help="stdio (the client starts `lamar mcp`, default) or streamable HTTP")
    mcp.add_argument("--host", default="127.0.0.1",
                     help=f"address to listen on with --transport http (127.0.0.1); any other than a loopback "
                          f"address needs ${TOKEN_ENV}, the bearer token every request must carry")
    mcp.add_argument("--port", type=port_number, default=None,
                     help="port with --transport http (default 8765; 0 picks a free one, printed on stderr)")
    mcp.add_argument("--read-only", action="store_true",
                     help="only the tools that read (evidence, lessons, whatif) and the resources; the store is "
                          "neither created nor written (a file of an older Lamar is first brought to this "
                          "version's format)")
    mcp.add_argument("--seed", type=_seed, default=None,
                     help="seed of the engine's coins, for a reproducible run (default: from the OS)")
    mcp.add_argument("--no-report", action="store_true",
                     help="leave out the report tool (the host reports outcomes through its own code)")
    mcp.add_argument("--store-timeout", metavar="SECONDS", type=_seconds, default=None,
                     help="how long opening and each write wait for another writer's lock on a SQLite or JSON "
                          "store before the call fails (default 30)")


def _check_free(host: str, port: int) -> None:
    """Say which port is taken, in one line, instead of the server's traceback from inside its task group."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is no conflict
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror or exc}): pick another --port, "
                             "or --port 0 for a free one") from None


def port_number(text: str) -> int:
    """--port of `lamar mcp` and `lamar ui`: 0-65535 in ASCII digits (int() also reads `8_000`)."""
    value = typed_whole(text)
    if value is None or value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535 in digits (0 or left out: a free one), "
                                         f"got {text!r}")
    return value


def _seconds(text: str) -> float:
    value = typed_number(text)
    if value is None or not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected the seconds to wait, a number >= 0 (such as 5), got {text!r}")
    return value


def _seed(text: str) -> int:
    negative = text.strip().startswith("-")
    value = typed_whole(text.strip().removeprefix("-"))
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a whole number in digits (such as 7), got {text!r}")
    return -value if negative else value


__all__ = ["add_mcp_command", "cmd_mcp", "port_number"]
