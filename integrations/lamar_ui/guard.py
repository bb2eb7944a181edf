"""`lamar ui`'s guard: every request carries the launch token (`TokenGuard`), every answer the security
headers, and a write from another site or without the form's token is `Forbidden`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from lamar import StoreError
from lamar.loopback import other_user
from lamar_ui.answers import forbidden, moving_on, store_failed
from lamar_ui.forms import REFUSAL, same_token

if TYPE_CHECKING:
    from lamar_ui.app import UI

_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


class Forbidden(Exception):
    """A request without the launch token, or a cross-site write."""


class TokenGuard(BaseHTTPMiddleware):
    """Every request needs the launch token: from `?token=` once (then a cookie), else 403."""

    def __init__(self, app: Any, ui: UI) -> None:
        super().__init__(app)
        self.ui = ui

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        ui = self.ui
        cookie = ui.cookie((request.scope.get("server") or ("", 0))[1])
        given = request.query_params.get("token")
        # Another user is refused even with the token: a browser sends the cookie to their page on any port of 127.0.0.1
        # in a worker thread: where netlink is refused the check reads the machine's whole socket table
        if await run_in_threadpool(other_user, request.scope.get("client"), request.scope.get("server")):
            response: Response = forbidden(REFUSAL)
        elif given is not None and same_token(given, ui.token):
            # Not a redirect: sent on by a page elsewhere (the file that opens the browser), the browser
            # would hold the SameSite=Strict cookie back from a redirect in that same chain, and show 403.
            # A page of this origin that moves on starts a same-site navigation, which carries it. Every
            # visit gets it: a browser that sends no Sec-Fetch-Site cannot say where it came from.
            response = HTMLResponse(moving_on(request.url.path))
            response.set_cookie(cookie, ui.token, httponly=True, samesite="strict", path="/")
        elif request.url.path.startswith("/static/"):  # never a kept answer: those need the token
            response = await _answer(request, call_next)
        elif same_token(request.cookies.get(cookie, ""), ui.token):
            response = await ui.answers.around(request, lambda: _answer(request, call_next))
        else:
            response = forbidden("open the address that `lamar ui` printed: it carries this launch's token")
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"  # no-referrer would make forms post Origin: null
        response.headers["Cache-Control"] = "no-store"
        return response


async def _answer(request: Request, call_next: RequestResponseEndpoint) -> Response:
    """The app's response to a request that carries the token, its failures answered as pages."""
    try:
        return await call_next(request)
    except Forbidden as exc:
        return forbidden(str(exc))
    except StoreError as exc:  # the store itself failed (its file deleted, say), not this request
        return store_failed(str(exc))
    except Exception:  # noqa: BLE001 - a bug still answers with the security headers, not a bare 500
        return HTMLResponse("<!DOCTYPE html><title>Error</title><p>lamar ui failed on this request; "
                            "the store is unchanged</p>", status_code=500)


__all__ = ["Forbidden", "TokenGuard"]
