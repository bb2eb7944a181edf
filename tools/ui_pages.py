"""Each `lamar ui` page's CPU seconds and size on a team's store (built once, kept in the
temporary folder), one request per page on fresh servers, beside another checkout's with --against:
`python tools/ui_pages.py [--against OLD_CHECKOUT]` (docs/speed.md, "`lamar ui` on a team's store")."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from team_store import build

# Run in a fresh process with the code under test first on the path, one request per page, in
# order (a page the UI keeps answers at once the second time); prints {page: [seconds, bytes]}.
CHILD = r"""
import json, sys, tempfile, time
from starlette.testclient import TestClient
from lamar import Lamar
from lamar_ui.app import UI, create_app

path, lesson, pages = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
lam = Lamar(path)
ui = UI(lam, report_path=tempfile.mktemp(suffix=".json"))
client = TestClient(create_app(ui), base_url="http://127.0.0.1")
client.get(f"/?token={ui.token}", follow_redirects=False)  # the cookie
client.get("/api/version")  # the engine's first sync, left out of every page
out = {}
for name, page in pages.items():
    if page.startswith("!"):  # after an episode logged: what a page costs on a store agents write to
        page = page[1:]
        lam.report(lam.recall({"task": "t0"}).episode_id, "shipped")
    started = time.process_time()  # the server's threads are this process's: CPU, which load inflates less
    response = client.get(page.replace("LESSON", lesson))
    out[name] = [time.process_time() - started, len(response.content)]
    assert response.status_code == 200, (page, response.status_code)
lam.close()
print(json.dumps(out))
"""

PAGES = {
    "lessons /": "/",
    "lessons /?q=step": "/?q=step",
    "lessons, last page": "/?page=25",
    "a lesson /lessons/ID": "/lessons/LESSON",
    "episodes /episodes": "/episodes",
    "pending /episodes?pending=1": "/episodes?pending=1",
    "what if /whatif": "/whatif",
    "what if, asked again": "/whatif",
    "lessons /, after a write": "!/",
    "what if, after a write": "!/whatif",
}


def store(lessons: int, episodes: int) -> tuple[str, str]:
    """The cached store of that size (built on first use) and the id of a lesson in its middle."""
    path = os.path.join(tempfile.gettempdir(), f"lamar-ui-pages-{lessons}-{episodes}.db")
    if not os.path.exists(path + ".lesson"):
        started = time.process_time()
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        lesson = build(path, lessons, episodes)
        with open(path + ".lesson", "w", encoding="utf-8") as file:
            file.write(lesson)
        print(f"built {path}: {time.process_time() - started:.0f} s CPU", flush=True)
    with open(path + ".lesson", encoding="utf-8") as file:
        return path, file.read()


def measure(built: str, lesson: str, runs: int, code: str) -> dict[str, list[float]]:
    """Each page's median seconds over `runs` fresh servers and its size in bytes, served by the
    checkout `code`."""
    served = [_serve(built, lesson, code) for _ in range(runs)]
    return {name: [statistics.median(run[name][0] for run in served), served[-1][name][1]] for name in PAGES}


def _serve(built: str, lesson: str, code: str) -> dict[str, list[float]]:
    folder = tempfile.mkdtemp(prefix="lamar-ui-pages-")
    try:
        path = os.path.join(folder, "store.db")
        for suffix in ("", "-wal"):
            if os.path.exists(built + suffix):
                shutil.copyfile(built + suffix, path + suffix)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["XDG_CACHE_HOME"] = folder  # the what-if fold's cache starts empty, and goes with the copy
        env["PYTHONPATH"] = os.pathsep.join((code, os.path.join(code, "integrations")))
        done = subprocess.run([sys.executable, "-c", CHILD, path, lesson, json.dumps(PAGES)],
                              check=False, env=env, cwd=folder, capture_output=True, text=True)
        if done.returncode != 0:  # its last line says why
            said = done.stderr.strip().splitlines()
            raise SystemExit(f"ui_pages.py: a server's process failed: {said[-1] if said else done.returncode}")
        result: dict[str, list[float]] = json.loads(done.stdout.strip().splitlines()[-1])
        return result
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--lessons", type=int, default=5000)
    parser.add_argument("--episodes", type=int, default=50000)
    parser.add_argument("--runs", type=int, default=3, help="servers started, one request per page each; "
                        "the median is shown")
    parser.add_argument("--against", metavar="CHECKOUT", help="also serve the pages with this checkout (before)")
    args = parser.parse_args(argv)
    if args.lessons < 20 or args.episodes < 1 or args.runs < 1:
        parser.error("--lessons is at least 20, --episodes and --runs at least 1")
    try:  # each server is asked through starlette's test client, which needs a package the ui extra lacks
        importlib.import_module("lamar_ui")  # names the ui extra when it is missing
        importlib.import_module("starlette.testclient")
    except (ImportError, RuntimeError) as exc:
        parser.exit(1, f"ui_pages.py: {str(exc).strip()}\n(the test extra brings everything: "
                       "python -m pip install -e \".[test]\")\n")
    path, lesson = store(args.lessons, args.episodes)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    after = measure(path, lesson, args.runs, here)
    before = measure(path, lesson, args.runs, os.path.abspath(args.against)) if args.against else None
    print(f"{args.lessons} lessons, {args.episodes} episodes; CPU seconds, median of {args.runs} servers")
    if before is None:
        print(f"{'page':<30}{'seconds':>10}{'KB':>10}")
        for name, (seconds, size) in after.items():
            print(f"{name:<30}{seconds:>10.3f}{size / 1000:>10.0f}")
        return 0
    print(f"{'page':<30}{'before s':>10}{'after s':>10}{'ratio':>8}{'before KB':>11}{'after KB':>10}")
    for name, (seconds, size) in after.items():
        old, old_size = before[name]
        print(f"{name:<30}{old:>10.3f}{seconds:>10.3f}{old / max(seconds, 1e-4):>8.1f}"
              f"{old_size / 1000:>11.0f}{size / 1000:>10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
