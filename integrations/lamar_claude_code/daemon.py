"""The warm hook process (`python -m lamar_claude_code.daemon --store PATH`): one engine, events over a socket."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import socket
import sys
import time
from typing import Any

from lamar_claude_code.quick import (
    MAX_PAYLOAD,
    VERSION,
    daemon_key,
    identity,
    named_holdout,
    socket_path,
    store_of,
)

IDLE = 600.0  # seconds without an event before the daemon stops (a new version starts with the next one)
STUCK = 120.0  # seconds of events that all overran their budget before the daemon gives up and stops


def serve(store: str, *, idle: float = IDLE, holdout: str | None = None) -> int:
    """Answer events for `store` until idle; returns 0 (also when another daemon already serves it).

    `quick.py` starts the daemon on first use and hands it each event; the daemon answers exactly as
    the hook process would (same code, same state file and lock), one event at a time in its main
    thread, and stops after `idle` seconds without events, after STUCK seconds in which every event overran
    its budget (a worker stuck in the store's C code), or when a module of Lamar it runs changed on
    disk: the next event then starts a fresh daemon.
    """
    from lamar_claude_code.hook import _open, run

    path = socket_path(daemon_key(store, holdout))
    if path is None:
        return 0
    listener = _bind(path)
    if listener is None:
        return 0  # another daemon holds the socket
    engines = {create: functools.cache(functools.partial(_open, store, create, holdout)) for create in (False, True)}
    own = identity()
    overran: list[float] = []  # when each event of the current streak of overruns arrived
    try:
        listener.settimeout(idle)
        while not overran or time.monotonic() - overran[0] < STUCK:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                _close(engines)
                return 0
            with conn:
                _answer(conn, own, lambda raw, start, create: _handle(run, raw, store, engines[create], start, create,
                                                                      overran), store)
        return 0
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == _bound_inode.get(path):
                os.unlink(path)


_bound_inode: dict[str, int] = {}


def _bind(path: str) -> socket.socket | None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(0.5)
        try:
            probe.connect(path)
            return None  # alive: someone else serves this store
        except OSError:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # a dead daemon's socket
        finally:
            probe.close()
        old = os.umask(0o077)
        try:
            listener.bind(path)
        finally:
            os.umask(old)
        listener.listen(16)
        _bound_inode[path] = os.stat(path).st_ino
        return listener
    except OSError:
        listener.close()
        return None


def _answer(conn: socket.socket, own: bytes, handle: Any, store: str = "") -> None:
    conn.settimeout(5.0)
    data = bytearray()
    try:
        while len(data) <= MAX_PAYLOAD + 200:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        header, _, raw = bytes(data).partition(b"\n")
        version, code, arrived, create = header.split(b" ", 3)
        if version != VERSION or code != own or _code_changed() or _store_replaced(store):
            conn.sendall(b"stale\n")  # the client handles it and starts a daemon of its own code
            raise SystemExit(0)
        start = time.monotonic() - max(0.0, time.time() - float(arrived))
        answer = handle(raw, start, create == b"1")
        _served_file[store] = _file_of(store)  # this event's own writes included (a JSON store is rewritten)
        conn.sendall(b"ok\n" + answer)
    except (OSError, ValueError):
        return


_loaded: dict[str, int] = {}


def _code_changed() -> bool:
    """Whether a module of Lamar this daemon runs was changed on disk (an upgrade, an edit)."""
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        # Run with -m, the daemon's own module is __main__: told by its folder, as lamar_claude_code's.
        ours = name.split(".")[0] in ("lamar", "lamar_claude_code") or (
            name == "__main__" and os.path.basename(os.path.dirname(str(path))) == "lamar_claude_code")
        if path and ours and path not in _loaded:
            with contextlib.suppress(OSError):
                _loaded[path] = os.stat(path).st_mtime_ns
    for path, mtime in _loaded.items():
        try:
            if os.stat(path).st_mtime_ns != mtime:
                return True
        except OSError:
            return True
    return False


_served_file: dict[str, tuple[int, int] | None] = {}


def _file_of(store: str) -> tuple[int, int] | None:
    try:
        found = os.stat(store)
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino


def _store_replaced(store: str) -> bool:
    """Whether the store's file was deleted or replaced since this daemon's last event (a user starting over,
    a backup moved into place): the engine it holds has the old file open, and would fail every event."""
    if not store or "://" in store or store == ":memory:" or store not in _served_file:
        return False
    return _file_of(store) != _served_file[store]


def _handle(run: Any, raw: bytes, store: str, engine: Any, start: float, create: bool,
            overran: list[float]) -> bytes:
    out = io.StringIO()
    # An event over its budget leaves its worker running: a cold open (a long fold) then finishes
    # here, in the background, and the daemon is warm for the next events. Only a streak of
    # overruns longer than STUCK (a worker stuck in the store's C code) ends the daemon.
    late: list[bool] = []
    run(io.BytesIO(raw), out, store, engine=engine, start=start, create=create, overran=lambda: late.append(True))
    if late:
        overran.append(start)
    else:
        overran.clear()
    return out.getvalue().encode("utf-8")


def _close(engines: dict[bool, Any]) -> None:
    """Close the engines that were opened, so their folded state is saved for the next process."""
    for opener in engines.values():
        if opener.cache_info().currsize:
            with contextlib.suppress(Exception):
                opener().close()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    idle = float(os.environ.get("LAMAR_HOOK_IDLE") or IDLE)  # tests stop theirs sooner
    status = serve(store_of(args, os.environ), idle=idle, holdout=named_holdout(args))
    os._exit(status)  # a worker still inside the store's C code must not keep the process alive


__all__ = ["IDLE", "STUCK", "main", "serve"]


if __name__ == "__main__":
    raise SystemExit(main())
