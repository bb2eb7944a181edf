"""The fold mode's inbox: first reports queued where reports contend for the same lesson rows,
each folded by the reporter whose outcome is oldest among those sharing a lesson."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from lamar._errors import EventConflict, LamarError
from lamar.store.base import Event

if TYPE_CHECKING:
    from psycopg import Connection

    from lamar.store.postgres.connection import Connections

INBOX_CHANNEL = "lamar_inbox"  # as functions.sql notifies it
# A reporter whose outcome waits behind older ones that share a lesson with it waits for the write
# that folds them (it notifies INBOX_CHANNEL), up to _LEASE seconds without one, then folds them
# itself: a stopped folder delays the others by at most that.
_LEASE = 0.2


class Vanished(LamarError):
    """A queued report left the inbox without being folded (a restarted server empties it)."""


class Inbox:
    """The inbox of one store object's namespace, through its connections."""

    def __init__(self, db: Connections) -> None:
        self._db = db
        self.waited = 0  # waits for a turn to fold the inbox that ran out (_LEASE)

    def queue(self, event: Event, ticket: int | None,
               lessons: frozenset[str]) -> tuple[int, frozenset[str], list[Event] | None]:
        """Queue a first report in the inbox (`ticket` None), or after a write of its reporter
        conflicted ask again whose turn it is (`lamar_turn`), and wait while older queued
        outcomes that share a lesson with it wait too: their reporter folds them, and this one
        with them. Returns its ticket, its lessons (`lamar_enqueue` names them; `lessons` is what
        an earlier call returned) and the event as the log holds it once another write folded
        it, or None when this reporter is to fold: its outcome is the oldest of its lessons, a
        write named it first among those left (`_wait`), or _LEASE seconds passed with no fold
        of the outcomes ahead (their folder may be stopped).

        One connection throughout. The call that finds outcomes ahead LISTENs in the transaction
        that read them, but a LISTEN takes effect as that transaction commits, and PostgreSQL
        skips the notices of writes that committed before it: a fold that committed between the
        read and the commit would go unheard, and the reporter would wait out its lease for it.
        So a "wait" from a
        call that began listening is asked again, once the LISTEN has taken effect: from then on
        a fold is either seen by the question or heard. UNLISTEN ends a wait. A reporter that is
        first at once sends one message."""
        mine: list[int] = [] if ticket is None else [ticket]
        known = [lessons]

        def run(conn: Connection[Any]) -> tuple[int, frozenset[str], list[Event] | None]:
            if not mine:  # a lost answer is retried on a new connection: queuing is idempotent
                status, queued, ahead, known[0] = self._enqueue(conn, event)
                if status == "folded":  # this very outcome is in the log already
                    return -1, known[0], self.folded(event)
                mine.append(queued)
                if ahead is None:
                    return queued, known[0], None
            try:
                turn, ahead, at = self._turn(conn, event, mine[0])  # listening already, or from now on
                if turn == "wait" and ticket is not None:  # this call began listening: ask once more
                    turn, ahead, at = self._turn(conn, event, mine[0])
                if turn == "gone":
                    return mine[0], known[0], self._logged(event, None if ahead is None else (ahead, at))
                if turn == "lead" or ahead is None:
                    return mine[0], known[0], None
                return mine[0], known[0], self._wait(conn, event, mine[0], ahead, known[0])
            finally:
                conn.execute(f"UNLISTEN {INBOX_CHANNEL}")

        return self._db.run(run, "write")

    def _enqueue(self, conn: Connection[Any], event: Event) -> tuple[str, int, int | None, frozenset[str]]:
        """Queue a first report in the inbox (`lamar_enqueue`): ("queued", its ticket, the oldest
        outcome ahead of it that shares a lesson, None if none; then the connection LISTENs, and
        its lessons), or ("folded", ...) if the same outcome (key and time) is already in the
        log. Raises EventConflict where another writer reported that episode."""
        row = conn.execute("SELECT status, ticket, ahead, lessons FROM lamar_enqueue(%s, %s, %s, %s::json)",
                           (self._db.namespace, event.key, float(event.time), event.data_json())).fetchone()
        status, ticket, ahead, lessons = row if row is not None else ("taken", None, None, None)
        if status == "taken":
            raise self._taken(event)
        return (str(status), -1 if ticket is None else int(ticket), None if ahead is None else int(ahead),
                frozenset(lessons or ()))

    def _wait(self, conn: Connection[Any], event: Event, ticket: int, ahead: int,
              lessons: frozenset[str]) -> list[Event] | None:
        """Wait on a LISTENing connection while the outcome `ahead` (the oldest ahead of `ticket`
        that shares a lesson with it) waits: the event as the log holds it once a write folded
        it, None when this reporter is to fold.

        Each write that folds queued outcomes notifies what it did (`lamar_write`): a notice that
        names this ticket among those it folded, or first among those left, settles the wait
        with no query; one that names it waiting behind others changes nothing; any other
        notice of this namespace, or the lease running out, is answered by asking `lamar_turn`.
        Only a fold of the outcomes ahead gives a new lease: folds of other lessons do not
        extend a wait behind a stopped folder."""
        deadline = time.monotonic() + _LEASE
        while True:
            ask = time.monotonic() >= deadline
            if not ask:
                for note in conn.notifies(timeout=deadline - time.monotonic(), stop_after=1):
                    heard = self._heard(note.payload, ticket, lessons)
                    if heard == "lead":
                        return None
                    if isinstance(heard, int):  # folded, with this seq
                        return self._logged(event, (heard, event.time))
                    if heard == "dropped":  # its episode was reported another way
                        return self.folded(event)
                    ask = ask or heard == "ask"
                ask = ask or time.monotonic() >= deadline
            if not ask:
                continue
            turn, seq, at = self._turn(conn, event, ticket)
            if turn == "gone":
                return self._logged(event, None if seq is None else (seq, at))
            if turn == "lead" or seq is None:
                return None
            if seq != ahead:  # the outcomes ahead were folded: wait anew
                deadline, ahead = time.monotonic() + _LEASE, seq
            elif time.monotonic() >= deadline:
                self.waited += 1  # the lease ran out
                return None

    def _turn(self, conn: Connection[Any], event: Event, ticket: int) -> tuple[str, int | None, float | None]:
        """Whose turn it is (`lamar_turn`): ("gone", seq, time) once the outcome left the inbox,
        with what the log holds under its key (folded, or another writer's; None, None: nothing,
        it vanished), ("lead", None, None), or ("wait", the oldest outcome ahead, None), the
        connection then LISTENing."""
        row = conn.execute("SELECT turn, seq, at FROM lamar_turn(%s, %s, %s)",
                           (self._db.namespace, ticket, event.key)).fetchone()
        turn, seq, at = row if row is not None else ("gone", None, None)
        return str(turn), None if seq is None else int(seq), None if at is None else float(at)

    def _heard(self, payload: str, ticket: int, lessons: frozenset[str]) -> int | str:
        """What a write's notice says of `ticket`: its seq where the write folded it ("dropped"
        where it dropped it: its key was taken), "lead" where it is first among those left,
        "wait" where it waits behind another, "ask" where the notice does not name it, "other"
        for another namespace's, or one that names its lessons and none of this report's,
        `lessons` (the outcomes ahead of a report share a lesson with it, so their fold names
        one; empty: not known, no notice is skipped for it)."""
        try:
            note = json.loads(payload)
            if note["ns"] != self._db.namespace or (
                    lessons and note.get("lessons") is not None and lessons.isdisjoint(note["lessons"])):
                return "other"  # another namespace's, or a fold of none of this report's lessons
            if ticket in note["done"]:
                seq = note["seqs"][note["done"].index(ticket)]
                return "dropped" if seq is None else int(seq)
            if ticket in note["lead"]:
                return "lead"
            return "wait" if ticket in note["wait"] else "ask"
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            return "ask"

    def folded(self, event: Event) -> list[Event]:
        """A queued report that another write folded (or dropped: its episode was reported first
        another way, EventConflict): the event as the log holds it."""
        return self._logged(event, self._db.run(lambda conn: conn.execute(
            "SELECT seq, time FROM lamar_events WHERE namespace = %s AND key = %s",
            (self._db.namespace, event.key)).fetchone()))

    def _logged(self, event: Event, row: tuple[Any, Any] | None) -> list[Event]:
        """`event` with its seq, where the log holds it under its key at its time (`row`: the seq
        and time found under the key); another writer's under its key: EventConflict; none
        under its key, and gone from the inbox unfolded (a restarted server empties it):
        Vanished."""
        if row is None:
            raise Vanished(f"the queued report {event.key} is neither in the inbox nor in the log")
        if float(row[1]) != float(event.time):
            raise self._taken(event)
        return [event.numbered(int(row[0]))]

    def _taken(self, event: Event) -> EventConflict:
        """Another writer reported this episode first (its key is in the log or the inbox)."""
        return EventConflict(f"an event key is already in {self._db.location} ({event.key}); "
                             "nothing of this write was kept")


__all__ = ["INBOX_CHANNEL", "Inbox", "Vanished"]
