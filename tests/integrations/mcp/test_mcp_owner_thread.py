"""`SameUserOnly` asks the kernel who owns a connection off the event loop: where netlink is refused that
question reads every socket of the machine, and the loop's other requests must not wait for it."""

from __future__ import annotations

import threading

import anyio
import pytest

from lamar_mcp import web


async def test_the_owner_check_runs_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[threading.Thread] = []
    served: list[int] = []

    def other_user(client: object, server: object) -> bool:
        asked.append(threading.current_thread())
        return False

    async def app(scope: object, receive: object, send: object) -> None:
        served.append(1)

    async def receive() -> dict[str, object]:
        return {"type": "http.request"}

    async def send(message: object) -> None:
        return None

    monkeypatch.setattr(web, "other_user", other_user)
    scope = {"type": "http", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8765)}
    await web.SameUserOnly(app)(scope, receive, send)
    assert served == [1]
    assert len(asked) == 1 and asked[0] is not threading.current_thread()


def test_a_refused_request_is_still_refused_from_the_worker_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[dict[str, object]] = []

    async def app(scope: object, receive: object, send: object) -> None:
        raise AssertionError("another user's request reached the SDK")

    async def receive() -> dict[str, object]:
        return {"type": "http.request"}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    monkeypatch.setattr(web, "other_user", lambda client, server: True)
    scope = {"type": "http", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8765)}
    anyio.run(web.SameUserOnly(app), scope, receive, send)
    assert sent[0]["status"] == 403
