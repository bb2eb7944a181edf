"""The functions an app hands `LamarMiddleware`, checked when it is made: each is called with (state, runtime),
and one of the state alone (the form `recall_node` takes) would fail the agent's first turn instead."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from lamar import InvalidArgument


def state_and_runtime(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """`function` when it can be called with two positional arguments; else InvalidArgument saying how to write it."""
    try:
        inspect.signature(function).bind(None, None)
    except ValueError:  # no signature to read (a builtin): the call will tell
        return function
    except TypeError:
        raise InvalidArgument(
            f"{name} must be a function of (state, runtime), as the middleware calls it; got {function!r}, which "
            f"does not take those two arguments: write it as lambda state, runtime: ..., and read what you need "
            f"from the state (runtime.context holds the agent's runtime context)") from None
    return function
