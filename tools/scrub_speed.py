"""How fast `lamar.safety.scrub` runs on ordinary text and on text crafted to be slow.

    python tools/scrub_speed.py                      # this tree
    python tools/scrub_speed.py --against ../base    # and another checkout, side by side

Each case is about 200 KB, and is timed again at a quarter of that ("x4": how much longer four
times the text takes, 4 when linear). The trees run in turns in fresh processes (three rounds,
best time kept), so a busy machine slows both alike; "ratio" is base time / this tree's time.
Figures go to docs/guarantees.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZE = 200_000


def _repeat(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


def _random(alphabet: str, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(SIZE))


def _words(text: str, length: int) -> str:
    return " ".join(text[i:i + length] for i in range(0, len(text), length + 1))[:SIZE]


def _files(pattern: str) -> str:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(ROOT.glob(pattern)))
    return text[:SIZE]


B64 = string.ascii_letters + string.digits + "+/"
CASES: dict[str, tuple[str, Callable[[], str]]] = {
    "docs (this repo's docs/*.md)": ("ordinary", lambda: _files("docs/*.md")),
    "code (this repo's lamar/**/*.py)": ("ordinary", lambda: _files("lamar/**/*.py")),
    "web server log": ("ordinary", lambda: _repeat(
        "2026-11-30T17:00:01Z INFO GET /api/v1/items?page=2 200 12ms /usr/lib/python3.11/x.py\n")),
    "prose in Russian": ("ordinary", lambda: _repeat("Сборка падает после обновления: очистите кэш. ")),
    "one base64 run": ("crafted", lambda: _random(B64, 1)),
    "base64 words": ("crafted", lambda: _words(_random(B64, 2), 30)),
    "credential words": ("crafted", lambda: _repeat("password token secret api_key credentials login ")),
    "a=a=a=...": ("crafted", lambda: _repeat("a=")),
    "password=x chains": ("crafted", lambda: _repeat("PASSWORD=TOKEN=")),
    "'the password is' prose": ("crafted", lambda: _repeat("the password is wrong, the token is old. ")),
    "URLs with credentials": ("crafted", lambda: _repeat("https://u:p@h.io/?token=x&code=y ")),
    "digits split by lines": ("crafted", lambda: _repeat("a1\n")),
    "key prefixes split": ("crafted", lambda: _repeat("ghp_ 1a ")),
    "escapes": ("crafted", lambda: _repeat("\\x41%42&#67;")),
    "hex": ("crafted", lambda: _random("0123456789abcdef", 3)),
    "zero-width every 3rd": ("crafted", lambda: _repeat("ab\u200b")),
    "webhook paths": ("crafted", lambda: _repeat("https://h.io/hooks/a1b2c3d4/webhook/")),
    "one letter repeated": ("crafted", lambda: _repeat("A")),
}


def child() -> None:
    """One pass over the cases: (bytes, seconds, seconds for a quarter of the text) each."""
    global SIZE
    from lamar.safety import scrub

    out = {}
    full = SIZE
    for name, (_, make) in CASES.items():
        timed = []
        for SIZE in (full, full // 4):
            text = make()
            start = time.perf_counter()
            scrub(text)
            timed.append(time.perf_counter() - start)
        SIZE = full
        out[name] = (len(make().encode("utf-8")), timed[0], timed[1])
    print(json.dumps(out))


def run(tree: Path) -> dict[str, tuple[int, float, float]]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'integrations'}"}
    done = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True,
                          check=True, cwd=tree)
    return {name: (int(size), seconds, quarter) for name, (size, seconds, quarter) in json.loads(done.stdout).items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout (e.g. the base commit) to time side by side")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child()
        return 0
    trees = [ROOT] + ([args.against.resolve()] if args.against else [])
    best: dict[Path, dict[str, tuple[int, float, float]]] = {t: {} for t in trees}
    for _ in range(args.rounds):
        for tree in trees:
            for name, (size, seconds, quarter) in run(tree).items():
                old = best[tree].get(name, (size, float("inf"), float("inf")))
                best[tree][name] = (size, min(seconds, old[1]), min(quarter, old[2]))
    # "x4": how much longer four times the text takes; 4 is linear.
    head = f"{'case':34} {'kind':9} {'KB':>5} {'ms':>8} {'MB/s':>6} {'x4':>5}"
    print(head + (f" {'base ms':>8} {'base MB/s':>9} {'base x4':>7} {'ratio':>6}" if args.against else ""))
    for name, (kind, _) in CASES.items():
        size, seconds, quarter = best[ROOT][name]
        row = (f"{name:34} {kind:9} {size / 1000:5.0f} {seconds * 1000:8.1f} {size / seconds / 1e6:6.2f} "
               f"{seconds / quarter:5.1f}")
        if args.against:
            _, base, base_quarter = best[trees[1]][name]
            row += f" {base * 1000:8.1f} {size / base / 1e6:9.2f} {base / base_quarter:7.1f} {base / seconds:5.1f}x"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
