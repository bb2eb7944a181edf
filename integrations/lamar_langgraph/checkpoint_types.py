"""Quiets LangGraph's checkpoint serializer about the classes of Lamar a thread's checkpoint may hold,
which Lamar reads back itself: a Signal written to `lamar_outcome` or resumed with, a `ReviewDecision`."""

from __future__ import annotations

import logging

from lamar_langgraph.review import DECISION_TYPE

SIGNAL_TYPE = ("lamar.signals", "Signal")
# LangGraph keeps a node's writes and a resume value as they were written, where no reducer turns a Signal into its
# name (a judge in the step of a node that interrupts). Read back, the serializer warns of a class missing from its
# safe list, or under LANGGRAPH_STRICT_MSGPACK blocks it to its value: the Signal's name, which Lamar reads the same.
# Neither says anything a user could act on. A decision is allowed by name in the sleep graph's checkpointer, so
# only the default mode's warning about it is hidden.
_QUIET = {"unregistered type": {SIGNAL_TYPE, DECISION_TYPE}, "Blocked deserialization": {SIGNAL_TYPE}}


class _KnownTypes(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not any(words in str(record.msg) and args[:2] in types for words, types in _QUIET.items())


logging.getLogger("langgraph.checkpoint.serde.jsonplus").addFilter(_KnownTypes())

__all__ = ["SIGNAL_TYPE"]
