"""`slow_failure`: what a request the server took, then did not answer within the client's timeout,
says as a ModelError (every adapter): the model is slow, not out of reach."""

from __future__ import annotations

from lamar._errors import ModelError
from lamar.models.protocol import DEFAULT_TIMEOUT, address, clipped

# httpx's and httpx2's names: a request sent, or being sent, whose answer did not come in time.
# A ConnectTimeout is not among them: that server was not reached.
_ANSWER_LATE = frozenset({"ReadTimeout", "WriteTimeout"})
_DEEPEST = 8  # exceptions behind an error looked at: a chain is a few links, or a cycle


def slow_failure(provider: str, model: str, where: str, exc: BaseException) -> ModelError | None:
    """The ModelError for `exc` when it, or an exception behind it, is a read or write timeout; else None."""
    said, behind = f"{type(exc).__name__}: {exc}", exc
    for _ in range(_DEEPEST):
        if type(behind).__name__ in _ANSWER_LATE:
            break
        nearer = behind.__cause__ or (None if behind.__suppress_context__ else behind.__context__)
        if nearer is None:
            return None
        behind = nearer
    else:
        return None
    return ModelError(
        f"{provider} model {model!r} at {address(where)} took the request but did not answer in time "
        f"({clipped(said, 300)}); if the model is slow but working, raise the adapter's timeout= (each "
        f"request's, {DEFAULT_TIMEOUT:g} s unless set) and model_timeout (the whole call's), or send less per "
        "call with a smaller max_prompt_tokens or max_tokens, then run sleep again"
    )


__all__ = ["slow_failure"]
