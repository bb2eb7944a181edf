"""`lamar ui`: serve the local web app (the `lamar_ui` package, extra `lamar[ui]`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lamar.cli.review import check_traces
from lamar.cli.session import UsageError, open_engine, store_location
from lamar.extras import needs_extra

if TYPE_CHECKING:
    from lamar import Lamar

_WEB_STACK = {"starlette", "uvicorn", "multipart", "python_multipart", "anyio", "h11"}


def cmd_ui(args: argparse.Namespace) -> int:
    store_location(args)  # an empty --store is a usage error: said before the extra is looked for
    if bool(args.traces) != bool(args.model):
        raise UsageError("mining lessons in the app needs both --traces FILE.jsonl and --model PROVIDER:MODEL")
    if args.max_model_calls is not None and not args.model:
        raise UsageError("--max-model-calls caps the model calls of mining, which needs --traces FILE.jsonl and "
                         "--model PROVIDER:MODEL")
    if args.report == "-":  # `lamar sleep --out -` prints its report; the app's must stay a file
        raise UsageError("--report -: the app reads the sleep report and saves your decisions into it, so it "
                         "needs a file: name one (./- for a file called -), or leave --report out for the one "
                         "beside the store")
    if args.traces:  # said now, as `lamar sleep` does, not at Run sleep
        check_traces(args.traces)
    if args.model:
        from lamar.models import from_spec

        try:
            from_spec(args.model)
        except ValueError as exc:
            raise UsageError(f"--model: {exc}") from None
    try:
        from lamar_ui import serve
    except ImportError as exc:
        if "the ui extra" in str(exc):  # lamar_ui's own message already names the extra
            raise
        if (exc.name or "").partition(".")[0] not in _WEB_STACK:  # a broken install, not a missing extra
            raise
        raise ImportError(needs_extra("lamar ui needs its web stack", "ui", exc)) from None
    lam = open_engine(args)
    opened: list[Lamar] = []

    def writer() -> Lamar:
        # Writes through an engine of their own (`lamar_ui.UI`), opened at the first: one waiting for
        # another process's lock holds only that engine, and the pages go on reading through `lam`.
        opened.append(open_engine(args))
        return opened[-1]

    try:
        serve(lam, port=args.port, open_browser=not args.no_browser, report_path=args.report,
              model=args.model, traces=args.traces, max_model_calls=args.max_model_calls,
              writer=None if lam.store.location == ":memory:" else writer)  # one object: no second
    except KeyboardInterrupt:
        pass
    finally:
        for engine in opened:
            engine.close()
        lam.close()
    return 0
