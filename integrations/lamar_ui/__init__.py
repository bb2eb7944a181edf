"""`lamar ui`: a local web app over a Lamar store: lessons, episodes, sleep review, levers.
It binds to 127.0.0.1 only and prints an address carrying a per-launch token (docs/ui.md)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import sys
import tempfile
import threading
import webbrowser
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any

try:
    import starlette  # noqa: F401  (fail here, with the extra to install)
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from lamar.extras import needs_extra

    raise ImportError(needs_extra("lamar_ui needs its web stack", "ui", exc)) from exc

from lamar import Lamar
from lamar.atomic import own_folder
from lamar.cli.outputs import report_refusal
from lamar.cli.session import UsageError
from lamar_ui.app import UI, create_app
from lamar_ui.redirect import OPEN_DIR, redirect_file


def default_report_path(location: str) -> Path:
    """Where sleep reports live: beside a file store; in ~/.lamar for a database, named after its
    URL, so one database's report is never offered for another; for the memory store, in a folder
    made for it by this call in the temporary folder, which `serve` removes when it stops (the store
    dies with it)."""
    if location == ":memory:":
        # Not a name in the shared temporary folder that anyone can foresee (a process id): another user could
        # put a sleep report of their own there for this one to review and apply, or read the one written.
        # mkdtemp makes the folder 0700 under a name no one can guess.
        return Path(tempfile.mkdtemp(prefix="lamar-ui-report-")) / "sleep-report.json"
    if location.startswith(("postgresql://", "postgres://")):
        digest = hashlib.sha256(location.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return Path(f"~/.lamar/sleep-report-{digest}.json").expanduser()
    path = Path(location).expanduser()
    return path.with_name(path.name + ".sleep-report.json")


def _remove_report(report: Path) -> None:
    """A memory store's report and the private folder `default_report_path` made for it."""
    with contextlib.suppress(OSError):
        report.unlink(missing_ok=True)
        report.with_name(report.name + ".lock").unlink(missing_ok=True)  # taken by Run sleep and Approve
        report.parent.rmdir()


def serve(lam: Lamar, *, port: int = 0, open_browser: bool = True, report_path: str | Path | None = None,
          model: str | None = None, traces: str | Sequence[str] | None = None,
          max_model_calls: int | None = None, writer: Callable[[], Lamar] | None = None) -> None:
    """Serve the app on 127.0.0.1 until interrupted (port 0: a free port); `writer`: see `UI`."""
    import uvicorn

    throwaway = report_path is None and lam.store.location == ":memory:"  # its report goes with the store
    if report_path is None:
        report_path = default_report_path(lam.store.location)
        # The default's folder (~/.lamar, beside the default store, a temporary one) is Lamar's own: made, not refused.
        try:
            own_folder(report_path.parent)  # 0700: the report quotes lessons
        except OSError as exc:
            raise UsageError(f"cannot make {report_path.parent} for the sleep report ({exc.strerror or exc}): "
                             "pass --report FILE in a folder you can write") from None
    try:
        ui = UI(lam, report_path=report_path, model=model, traces=traces, max_model_calls=max_model_calls,
                writer=writer)
        if refusal := report_refusal(ui.report_path):  # said now, not when Run sleep is pressed
            raise UsageError(f"--report {refusal}")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            sock.close()
            raise UsageError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}): pick another --port, "
                             "or leave it out for a free one") from None
    except BaseException:
        if throwaway:  # the folder made for its report, which no server will remove
            _remove_report(Path(report_path))
        raise
    sock.listen(128)  # before the address is printed or the browser opened: early visitors wait, not fail
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/?token={ui.token}"
    # proxy_headers off: uvicorn would take X-Forwarded-For from any loopback client as its address, and
    # `other_user` would find no socket of that address and let another user in
    server = _server_class()(uvicorn.Config(create_app(ui), log_level="warning", access_log=False,
                                            proxy_headers=False))
    server.stopping = ui.review.running.stop  # a sleep under way would hold the stop up until the model answers
    # uvicorn stops on SIGTERM (and on SIGHUP, see `_server_class`), then raises it again: under the
    # default handler that ends the process before the `finally` below. Raised as SystemExit instead,
    # the cleanup runs first. A signal ignored (`nohup`) or handled by the caller is left as it is.
    ending = [number for number in _ENDING if threading.current_thread() is threading.main_thread()
              and signal.getsignal(number) == signal.SIG_DFL]
    for number in ending:
        signal.signal(number, _exit_on_signal)
    opened = contextlib.ExitStack()
    try:  # from the first line printed: a signal sent as soon as the address shows still cleans up
        print(f"lamar ui: serving {lam.store.location} at {url}", flush=True)
        if lam.store.location == ":memory:":  # said before anything is added to it, not when it is lost
            print("lamar ui: the store is :memory:, a throwaway: nothing added or changed is kept when lamar ui "
                  "stops (use --store FILE to keep it)", flush=True)
        print("(press Ctrl+C to stop)", flush=True)
        if open_browser:
            _open_browser(url, opened)
        server.run(sockets=[sock])
    finally:
        if server.serving is not None:  # a signal before the event loop ran it: closed, not warned about
            server.serving.close()
        for number in ending:
            signal.signal(number, signal.SIG_DFL)
        sock.close()
        opened.close()
        if throwaway:  # the report of a store that is gone
            _remove_report(Path(report_path))
        with contextlib.suppress(OSError):  # stopped by SIGHUP, the terminal may be gone
            print("lamar ui: stopped", file=sys.stderr)


def _open_browser(url: str, opened: contextlib.ExitStack) -> None:
    """Open the browser on a private file that leads to `url`: given `url` itself, the browser would
    show the token on its command line to every local user (`ps`); the file goes when `opened` closes."""
    try:
        page = opened.enter_context(redirect_file(url))
    except OSError as exc:
        raise UsageError(f"cannot write the page that opens your browser in {exc.filename or 'its folder'} "
                         f"({exc.strerror or exc}): set {OPEN_DIR} to a folder you can write, or pass "
                         "--no-browser and open the address above") from None
    hint = "" if os.environ.get(OPEN_DIR) else \
        f" (a browser that cannot read it, as a snap's cannot: open the address above, or set {OPEN_DIR})"
    print(f"lamar ui: opening your browser on {page.as_uri()}{hint}", flush=True)
    webbrowser.open(page.as_uri())


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # the status a shell reports for a process ended by that signal


_HANGUP = getattr(signal, "SIGHUP", None)  # the terminal was closed; Windows has none
_ENDING = (signal.SIGTERM,) if _HANGUP is None else (signal.SIGTERM, _HANGUP)
_HELD = (signal.SIGINT, *_ENDING)


def _hold_signals() -> set[signal.Signals] | None:
    """Hold Ctrl+C, SIGTERM and SIGHUP back until uvicorn's handlers are in place (`_release_signals`): one
    that lands while asyncio builds the event loop leaves a half-built loop whose finalizer fails
    loudly at exit. None where signals cannot be held (off the main thread, or no pthread_sigmask)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)


def _release_signals(held: set[signal.Signals] | None) -> None:
    """Restore the signal mask `_hold_signals` changed: a signal held back is delivered now."""
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


__all__ = ["UI", "create_app", "default_report_path", "serve"]


def _server_class() -> type[Any]:
    """uvicorn's server, holding Ctrl+C, SIGTERM and SIGHUP back while it builds its event loop
    (`_hold_signals`) and keeping the coroutine it serves in: a signal that lands before the event
    loop starts it would otherwise leave it never awaited, which Python warns of at exit."""
    import uvicorn

    class Server(uvicorn.Server):
        serving: Coroutine[Any, Any, None] | None = None
        held: set[signal.Signals] | None = None
        stopping: Callable[[], None] | None = None  # called as the server begins to stop

        def run(self, sockets: list[socket.socket] | None = None) -> None:
            self.held = _hold_signals()  # the browser has started: a child would inherit held signals
            try:
                super().run(sockets=sockets)
            finally:
                _release_signals(self.held)  # never taken by the server: delivered now, and cleaned up after

        def serve(self, sockets: list[socket.socket] | None = None) -> Coroutine[Any, Any, None]:  # type: ignore[override]
            self.serving = super().serve(sockets=sockets)
            return self.serving

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            if self.stopping is not None:  # before uvicorn waits for the requests under way to end
                self.stopping()
            await super().shutdown(sockets=sockets)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                # uvicorn takes Ctrl+C and SIGTERM only: a closed terminal stops the server as gracefully,
                # and is raised again after, as they are, to `serve`'s handler (its cleanup)
                hangup = _HANGUP is not None and signal.getsignal(_HANGUP) is _exit_on_signal
                if hangup:
                    signal.signal(_HANGUP, self.handle_exit)
                _release_signals(self.held)  # inside the running loop: a held signal now stops it gracefully
                self.held = None
                try:
                    yield
                finally:
                    if hangup:
                        signal.signal(_HANGUP, _exit_on_signal)

    return Server
