"""POST/redirect/GET for `lamar ui`: a form's answer is kept and fetched by the GET its 303 makes, so the back
button and a reload return to a page, never to a POST the browser would offer to send again."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Awaitable, Callable
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

_KEPT = 200  # answers kept for the back button; the oldest go first
_BYTES = 16 * 1024 * 1024  # and no more than this in all: a review of many pasted lessons is a big page


class Answers:
    """The answers to forms by the one-time key their redirect carries (`?answer=`): the address, not a
    cookie, says which, since every tab shares the token; an answer dropped leaves the page's own GET."""

    def __init__(self, kept: int = _KEPT, size: int = _BYTES) -> None:
        self._kept, self._size = kept, size
        self._answers: dict[str, tuple[int, bytes, str]] = {}
        self._lock = threading.Lock()

    async def around(self, request: Request, call: Callable[[], Awaitable[Response]]) -> Response:
        """A kept answer for its GET; else the app's response, which, answering a POST with a page, is kept
        and replaced by a 303 to it at the same address."""
        if request.method == "GET":
            with self._lock:
                kept = self._answers.get(request.query_params.get("answer", ""))
            if kept is not None:
                status, body, kind = kept
                return Response(body, status_code=status, headers={"content-type": kind})
        response = await call()
        # A refusal (a form without the token, from another site) is answered where it was sent: it did
        # nothing to return to, and nothing of it is kept.
        if request.method != "POST" or 300 <= response.status_code < 400 or response.status_code == 403:
            return response
        body = getattr(response, "body", None)
        if not isinstance(body, bytes):  # streamed through a middleware: read it whole
            body = b"".join([chunk if isinstance(chunk, bytes) else chunk.encode()  # type: ignore[attr-defined]
                             async for chunk in response.body_iterator])  # type: ignore[attr-defined]
        key = secrets.token_urlsafe(12)
        with self._lock:
            self._answers[key] = (response.status_code, body, response.headers.get("content-type", "text/html"))
            while len(self._answers) > self._kept or \
                    (len(self._answers) > 1 and sum(len(b) for _, b, _ in self._answers.values()) > self._size):
                del self._answers[next(iter(self._answers))]  # dicts keep insertion order: the oldest
        return RedirectResponse(f"{_address(request)}?answer={key}", status_code=303)


def _address(request: Request) -> str:
    """The path as sent: an id holding '/' keeps its %2F, which the decoded path would lose. One slash opens
    it: a Location of '//host/...' (or '/\\host', which browsers read alike) is another site's address."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if isinstance(raw, bytes) else quote(request.url.path)
    return "/" + path.split("?", 1)[0].lstrip("/\\")


__all__ = ["Answers"]
