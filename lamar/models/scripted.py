"""`ScriptedModel`: a fake model for tests and examples that answers from a script."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from lamar._errors import ModelError
from lamar.models.protocol import check_max_tokens

Reply = str | BaseException


class ScriptedModel:
    """Answers with scripted replies in order, or with a function of the prompt.

    A scripted exception is raised instead of returned, so tests can play a failing
    model. Every prompt is kept in `prompts`.

    Args:
        replies: the replies in order, or a function from prompt to reply.
        model: the name recorded in the provenance of mined lessons.

    >>> m = ScriptedModel(["[]", "{}"])
    >>> m.complete("first"), m.complete("second"), m.prompts
    ('[]', '{}', ['first', 'second'])
    >>> ScriptedModel(lambda prompt: prompt.upper()).complete("hi")
    'HI'
    """

    def __init__(self, replies: Iterable[Reply] | Callable[[str], Reply] = (), *, model: str = "scripted") -> None:
        self.model = model
        self.prompts: list[str] = []
        self.max_tokens: list[int] = []
        self._function: Callable[[str], Reply] | None = None
        self._replies: Iterator[Reply] = iter(())
        if callable(replies):
            self._function = replies
        elif isinstance(replies, str):
            self._replies = iter([replies])  # one reply, not one reply per character
        else:
            self._replies = iter(list(replies))

    def complete(self, prompt: str, *, max_tokens: int = 2048) -> str:
        """Record the prompt and return the next scripted reply.

        Raises:
            ModelError: the script ran out of replies.
        """
        check_max_tokens(max_tokens)
        self.prompts.append(prompt)
        self.max_tokens.append(max_tokens)
        if self._function is not None:
            reply = self._function(prompt)
        else:
            try:
                reply = next(self._replies)
            except StopIteration:
                raise ModelError(
                    f"ScriptedModel ran out of replies at call {len(self.prompts)}; script one reply per call"
                ) from None
        if isinstance(reply, BaseException):
            raise reply
        if not isinstance(reply, str):
            raise ModelError(f"ScriptedModel replies must be strings; got {type(reply).__name__}")
        return reply

    def __repr__(self) -> str:
        return f"ScriptedModel(model={self.model!r}, calls={len(self.prompts)})"


__all__ = ["ScriptedModel"]
