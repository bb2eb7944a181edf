"""`lamar ui`: serve the local web app (the `lamar_ui` package, extra `lamar[ui]`)."""

from __future__ import annotations

import argparse

from lamar.cli.session import UsageError, open_engine


def cmd_ui(args: argparse.Namespace) -> int:
    if bool(args.traces) != bool(args.model):
        raise UsageError("mining lessons in the app needs both --traces FILE.jsonl and --model PROVIDER:MODEL")
    try:
        from lamar_ui import serve
    except ImportError as exc:
        raise ImportError(f"lamar ui needs its web stack: pip install 'lamar[ui]' ({exc})") from None
    lam = open_engine(args)
    try:
        serve(lam, port=args.port, open_browser=not args.no_browser, report_path=args.report,
              model=args.model, traces=args.traces)
    except KeyboardInterrupt:
        pass
    finally:
        lam.close()
    return 0
