"""The set-up each new pooled connection runs before its first call, and its failure on the server:
calls then fail at once with what to do, rather than each waiting out the pool's timeout twice."""

from __future__ import annotations

import time
import weakref
from typing import TYPE_CHECKING, Any

from lamar._errors import StoreError, advised
from lamar.store.postgres.server_errors import TOO_SHORT, advice

if TYPE_CHECKING:
    from psycopg import Connection

# Writes and migrations read what committed while they waited for a lock (a version check, a second
# look); a stricter default of the database or role would abort that wait as a serialization failure.
READ_COMMITTED = "SELECT set_config('default_transaction_isolation', 'read committed', false)"
_SETUP = f"{READ_COMMITTED}, (SELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid())"
# How long (seconds) after the server refused a set-up a call takes only a connection ready at once (the
# pool may hold some set up before) and otherwise fails; later ones wait again (a second at most), which
# lets the pool try another set-up.
_FAILS_FOR = 5.0
_READY = 0.05  # seconds: a wait for a ready connection, which psycopg_pool refuses at once at 0
# Seconds the pool goes on trying to replace a lost connection (psycopg_pool's reconnect_timeout): tries 1 s and
# 2 s apart (jittered), then none until a call asks, which tries at once. psycopg_pool's own default doubles the
# wait for 5 minutes, so a call after a long refusal would fail until that late try, though the server is back.
RECONNECTS_FOR = 3.0


class PoolSetup:
    """The pool's `configure`: sets each new connection up and notes when its backend started
    (`started`, by connection). A server error in it (a statement_timeout shorter than the set-up
    query) is kept until a set-up succeeds: the pool only retries it in the background, while every
    call would wait out its whole timeout, and then once more as a lost connection."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.started: weakref.WeakKeyDictionary[Connection[Any], str] = weakref.WeakKeyDictionary()
        self._failed: tuple[float, BaseException] | None = None  # when, and what the server said

    def __call__(self, conn: Connection[Any]) -> None:
        try:
            row = conn.execute(_SETUP).fetchone()
        except Exception as exc:
            if getattr(exc, "sqlstate", None) and not conn.broken:  # raised by a server that is there
                self._failed = (time.monotonic(), exc)
            conn.close()  # the pool drops it unclosed: its backend would stay until it is collected
            raise
        self._failed = None
        if row is not None and row[1] is not None:
            self.started[conn] = str(row[1])

    def wait(self, seconds: float) -> float:
        """How long a call waits for a connection before `check`: `seconds`, unless the server
        refused a set-up in the last few seconds (then only long enough to take one ready)."""
        failed = self._failed
        return _READY if failed is not None and time.monotonic() - failed[0] < _FAILS_FOR else seconds

    def check(self) -> None:
        """Raise, once a call waited for a connection in vain, if the server refused the set-up of
        the pool's last new one.

        Raises:
            StoreError: what the server said and what to do; nothing of the call was sent.
        """
        failed = self._failed
        if failed is None:
            return
        exc = failed[1]
        said = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        fix = f"; {TOO_SHORT}" if getattr(exc, "sqlstate", None) == "57014" else advice(exc)
        raise advised(StoreError, f"no connection to {self.location}: the server refused to set up a new one "
                                  f"({said}); nothing was sent, so nothing of this call was kept", fix)


__all__ = ["READ_COMMITTED", "RECONNECTS_FOR", "PoolSetup"]
