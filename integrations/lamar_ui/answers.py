"""`lamar ui`'s answers outside its pages: the token's hand-over, refusals, a failed store, an address with no page."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from html import escape
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from lamar import LamarError, UnknownExperience

# The page whose form posts to each address that takes only a form: opened from the address bar (the
# answer's address kept after a review, say), it is a GET there.
_FORM_PAGES = {"/add/many": ("/add", "Add a lesson"), "/sleep/run": ("/sleep", "Sleep"),
               "/sleep/decide": ("/sleep", "Sleep"), "/sleep/apply": ("/sleep", "Sleep")}


Handler = Callable[[Request, Exception], Awaitable[Response]]


def not_here(exc: LamarError) -> str:
    """The engine's refusal of a lesson id in the browser's words: the lessons page, not Python, lists the ids."""
    if isinstance(exc, UnknownExperience) and exc.shown:
        return f"no lesson {exc.shown} in this store{exc.note}: the lessons page lists every lesson"
    return str(exc)


def no_page(frame: Callable[[str, str], HTMLResponse]) -> dict[Any, Handler]:
    """Starlette's handlers for 404 and 405, answering in the app's frame (`frame(title, body)`), with a
    link on, rather than its bare "Not Found", which leaves only the back button."""

    async def answer(request: Request, exc: Exception) -> Response:
        path = request.url.path
        if path.startswith("/static/"):  # served without the token: no frame, which names the store
            return HTMLResponse("<!DOCTYPE html><title>Not found</title><p>no such file</p>", status_code=404)
        shown = escape(path if len(path) <= 200 else path[:200] + "…")
        status = getattr(exc, "status_code", 404)
        if status == 405 and path in _FORM_PAGES:
            target, name = _FORM_PAGES[path]
            body = (f'<p class="error">{shown} takes the form of the {escape(name)} page, not a visit: open that '
                    f'page and use its buttons.</p><p><a href="{target}">{escape(name)}</a></p>')
        elif status == 405:  # a form sent to a page that takes none
            body = (f'<p class="error">{shown} takes no form: open it, or use the links above.</p>'
                    f'<p><a href="{escape(path, quote=True)}">Open it</a></p>')
        else:
            body = (f'<p class="error">no page at {shown}: the links above lead to every page.</p>'
                    '<p><a href="/">All lessons</a></p>')
        page = await run_in_threadpool(frame, "Not found", body)
        page.status_code = status
        return page

    return {404: answer, 405: answer}


def moving_on(path: str) -> str:
    target = escape(path, quote=True)
    # the icon of every page: without it the browser asks for /favicon.ico, and logs the 404 as an error
    return (f'<!DOCTYPE html><title>lamar ui</title><meta http-equiv="refresh" content="0;url={target}">'
            '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
            f'<p><a href="{target}">Open lamar ui</a></p>')


def forbidden(message: str) -> HTMLResponse:
    return HTMLResponse(f"<!DOCTYPE html><title>Forbidden</title><p>{escape(message)}</p>", status_code=403)


def store_failed(message: str) -> HTMLResponse:
    return HTMLResponse(f"<!DOCTYPE html><title>Store failed</title><p>{escape(message)}</p><p>Once that is "
                        "fixed, stop lamar ui (Ctrl-C) and start it again to open the store again.</p>",
                        status_code=503)
