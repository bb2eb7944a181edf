"""`closed_early`: whether the sync stream whose root run is ending was closed before its generator finished,
which LangChain ends as a run that answered (it swallows the `GeneratorExit` of a lone generator)."""

from __future__ import annotations

import inspect
import sys

from langchain_core.runnables import Runnable

# A private method: a LangChain without it leaves `closed_early` saying nothing, never an import error.
_STREAM = getattr(getattr(Runnable, "_transform_stream_with_config", None), "__code__", None)
# Frames from the handler's `_end` up to the stream that calls `on_chain_end`: the callback manager's
# dispatch sits between; a few more leave room for a LangChain that adds a layer.
_DEPTH = 12


def closed_early() -> bool:
    """True when the nearest stream on the call stack left its generator unfinished: a consumer that reads to
    the end makes the generator return (closed), and one that stops leaves it suspended. A generator still
    running is a stream whose body started another run (a run of its own inside it), not a close. Any other
    iterator, or no stream on the stack, says nothing: False, as before."""
    if _STREAM is None:
        return False
    frame = sys._getframe(1)
    for _ in range(_DEPTH):
        if frame.f_code is _STREAM:
            iterator = frame.f_locals.get("iterator")
            return inspect.isgenerator(iterator) and inspect.getgeneratorstate(iterator) == inspect.GEN_SUSPENDED
        if frame.f_back is None:
            return False
        frame = frame.f_back
    return False


__all__ = ["closed_early"]
