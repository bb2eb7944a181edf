"""What an error the PostgreSQL server raised means: whether the transaction it aborted can
succeed if run again, whether a refused connection was for want of slots, and what to do."""

from __future__ import annotations

import re
from typing import Any

from lamar._errors import StoreError
from lamar.store.postgres.wire import timeout_param

# SQLSTATEs of a transaction the server rolled back against another one: the same transaction
# run again can commit. Any other error is reported, never run again: a timeout would wait as
# long again, and a refusal would recur.
RUN_AGAIN = ("40001", "40P01")
# The transaction it lost to is woken as it rolls back: run again at once, it could take the lock
# first and meet that one again; after this pause (seconds) the other has it.
RUN_AGAIN_AFTER = 0.05
_ADVICE = {"57014": "the server cancelled the statement (its statement_timeout, or a cancel): raise "
                    "statement_timeout in the URL's options or for the role, or try again when the server is less busy",
           "55P03": "it waited past its lock_timeout for a lock another session holds: raise lock_timeout, "
                    "or try again once that session ends",
           "40001": "the server aborted it twice against concurrent transactions (a serialization failure): try again",
           "40P01": "the server aborted it twice in a deadlock with another session: try again",
           "53": "the server is short of a resource (disk, memory, connections): free it, then try again"}
# A statement_timeout shorter than a query Lamar cannot do without (its migration's, a new connection's set-up).
TOO_SHORT = ("the role's or the URL's statement_timeout is too short for Lamar's queries: raise it for the role "
             "(ALTER ROLE name SET statement_timeout = '30s') or in the URL (options=-c%20statement_timeout%3D30s)")

# A connection the server refuses for want of slots (SQLSTATE 53300), told by its message: libpq
# hands psycopg no SQLSTATE for an error raised while connecting, and the server words it in its
# own lc_messages before a session's settings apply.
_NO_SLOT = re.compile(r"too many (clients|connections)|connection slots are reserved", re.IGNORECASE)
OUT_OF_SLOTS = ("close idle connections of other clients, give the stores that share the server a smaller "
                "pool_size (or put a pooler such as PgBouncer in front of it), or raise the role's CONNECTION "
                "LIMIT or the server's max_connections")
# A refused connect that took longer than this (seconds) waited out a connect timeout: the server
# did not answer, and asking it again would wait as long.
_ANSWER_WITHIN = 1.0
# libpq quotes an error the server sent while connecting as "<severity>:  <message>", two spaces in
# any language; its own failures (refused, hung up) read otherwise, and a ping after one of those
# would wait out a whole connect timeout on a peer that hangs up.
_SERVER_SAID = re.compile(r":  \S")


# What to do about a connection refused while opening the store, told by libpq's message (which
# carries no SQLSTATE); the message's first line is all a StoreError shows, and libpq's own hint
# sits on its second.
_OPENING = ((re.compile(r'database "(.*)" does not exist'),
             "create the database (createdb {0}, or CREATE DATABASE), or correct its name in the URL"),
            (re.compile(r'role "(.*)" does not exist'), "correct the user in the URL, or create the role"),
            (re.compile(r"Connection refused|No such file or directory|could not translate host name"),
             "start the server, or correct the host and port in the URL"))


class NoSlot(StoreError):
    """No connection within `timeout`: the server refused one, for want of slots if its words say so
    in English (`refused`: its words)."""

    def __init__(self, message: str, refused: str) -> None:
        super().__init__(message)
        self.refused = refused

    def unsettled(self, lost: str, what: str) -> StoreError:
        """The error of a write whose COMMIT went unanswered (`lost`), which no connection could ask
        about: the one that lost it may hold the slot until the server finds it gone."""
        why, fix = refusal(self.refused, " to ask on")
        fix = f"to free a slot, {fix}" if _NO_SLOT.search(self.refused) else fix
        return StoreError(f"{lost} and could not learn whether the write was kept ({what}): {why}; read the "
                          f"store before writing it again; {fix}")


class OnlyConnectionLost(StoreError):
    """The connection a block held, its pool's only one (`pool_size=1`), was lost: no other is left to ask on."""

    def unsettled(self, lost: str, what: str) -> StoreError:
        """The error of a write in that block whose COMMIT went unanswered (`lost`): asked again, the pool would
        have the lost connection still, so it is said at once, with what the user can do."""
        return StoreError(f"{lost} and could not learn whether the write was kept ({what}): the lost connection "
                          "was its pool's only one (pool_size=1), held for the namespace's write lock, so none "
                          "was left to ask on. The write is all or nothing: read the store before writing it again, to "
                          "see whether it holds it; with pool_size=2 or more a lost commit is asked about on another "
                          "connection")


def out_of_slots(exc: BaseException) -> bool:
    """Whether a connection was refused because the server, the database or the role has no slot left."""
    return bool(_NO_SLOT.search(str(exc)))


def answered(pg: Any, conninfo: str, exc: BaseException, took: float) -> bool:
    """Whether a connection refused after `took` seconds was refused by a server that answered: out
    of slots by its words, or else, for an error the server sent, by libpq's ping, which tells a
    server's refusal by the SQLSTATE it carries, in any language. A server starting up or shutting
    down (ping's REJECT) is not taken to answer: it is as good as down meanwhile."""
    if out_of_slots(exc):
        return True
    if took >= _ANSWER_WITHIN or not _SERVER_SAID.search(str(exc)):
        return False
    ping = pg.pq.PGconn.ping(pg.conninfo.make_conninfo(conninfo, **timeout_param(pg, conninfo, 2)).encode())
    return bool(ping == pg.pq.Ping.OK)


def refusal(refused: str, purpose: str = "") -> tuple[str, str]:
    """What a refused connection (`refused`: the server's words; `purpose`: " to ask on"...) means,
    and what to do."""
    if _NO_SLOT.search(refused):
        return f"the server has no connection slot left{purpose} ({refused})", OUT_OF_SLOTS
    return (f"the server refused a connection{purpose} ({refused})",
            (f"if its words say it has no connection slot left, {OUT_OF_SLOTS}; otherwise set right what they "
             "name (the role's LOGIN or password, the server's pg_hba.conf)"))


# A role that may not create Lamar's tables, or may not use them, is told what to grant, by SQLSTATE
# (the server's words are in its own language).
_PRIVILEGES = {"42501": "the role lacks a privilege on Lamar's tables: have their owner grant it, as docs/postgres.md "
                        "says under \"A role without CREATE\" (USAGE on the schema; SELECT, INSERT, UPDATE, DELETE on "
                        "its tables; USAGE, SELECT on its sequences), or open the store once as the owner",
               # No schema of the search_path that exists and that the role may use: one not created yet
               # (the usual case: docs/postgres.md says to create it first), or one it lacks USAGE on.
               "3F000": "the URL's search_path names no schema that exists and that this role may use: create "
                        "that schema (CREATE SCHEMA name) or correct the search_path in the URL; for a role that "
                        "may not CREATE there, open the store once as a role that may (its first open creates the "
                        "tables), then grant this role what docs/postgres.md lists under \"A role without CREATE\""}


def opening_advice(exc: BaseException) -> str:
    """What to do about a connection the server or libpq refused while the store was opened ("" if nothing)."""
    text = str(exc)
    if out_of_slots(exc):
        return f"; {OUT_OF_SLOTS}"
    if getattr(exc, "sqlstate", None) == "57014":
        return f"; {TOO_SHORT}"
    granted = _PRIVILEGES.get(getattr(exc, "sqlstate", None) or "")
    if granted:
        return f"; {granted}"
    for pattern, fix in _OPENING:
        found = pattern.search(text)
        if found:
            return "; " + fix.format(*found.groups())
    return ""


def advice(exc: object) -> str:
    """What to do about an error the server raised on a connection still there ("" if nothing)."""
    state = getattr(exc, "sqlstate", None) or ""
    found = _ADVICE.get(state) or _ADVICE.get(state[:2])
    return f"; {found}" if found else ""


__all__ = ["OUT_OF_SLOTS", "RUN_AGAIN", "RUN_AGAIN_AFTER", "TOO_SHORT", "NoSlot", "advice", "answered",
           "opening_advice", "out_of_slots", "refusal"]
