"""Seconds to open a SQLite store this user may not write (read from a private copy) against opening it in place.

    python tools/read_only_copy.py                  # a 100 MB store, 5 rounds
    python tools/read_only_copy.py --mb 10,100 --rounds 3

The store is built once per size (episode events of about 1 KB), closed, then opened in fresh
processes in turns: read-only (mode 0444, a writable folder: the store copies the file first) and
writable (in place). Each open reads the last event, so SQLite has opened the file it reads. As root
the read-only opens run under setpriv without the capabilities that let root write any file. The
page cache is warm (the file was just written): a cold disk adds its read time to the copy. The
copy's folder is the temporary folder named below; on a tmpfs each open holds its size in memory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import sys, time
t0 = time.perf_counter()
from lamar.store.sqlite import SqliteStore
store = SqliteStore(sys.argv[1])
last = store.read_texts(int(sys.argv[2]) - 1)
opened = time.perf_counter() - t0
store.close()
print(opened, len(last), store.read_only)
"""


def build(path: Path, megabytes: int) -> int:
    """A store of episode events of about 1 KB until the file holds `megabytes`; the last seq."""
    from lamar.store.base import Event
    from lamar.store.sqlite import SqliteStore

    store = SqliteStore(path)
    pad = "x" * 1000
    last = 0
    while path.stat().st_size + os.path.getsize(f"{path}-wal") < megabytes * 1_000_000:
        batch = [Event("episode", {"id": f"ep_{last + i}", "context": {"pad": pad}}) for i in range(2000)]
        last = store.append(batch)[-1].seq
    store.close()
    return last


def child(path: Path, last: int, prefix: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([*prefix, sys.executable, "-c", _CHILD, str(path), str(last)], capture_output=True,
                         text=True, check=True, env=env).stdout.split()
    assert out[1] == "1", out
    return float(out[0])


def copy_alone(path: Path) -> float:
    from lamar.store.sqlite_read_only import private_copy

    t0 = time.perf_counter()
    folder, _, checked = private_copy(path)
    assert checked
    took = time.perf_counter() - t0
    shutil.rmtree(folder)
    return took


def filesystem(folder: str) -> str:
    best = ("", "?")
    with open("/proc/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            point, kind = line.split()[1:3]
            if (folder + "/").startswith(point.rstrip("/") + "/") and len(point) >= len(best[0]):
                best = (point, kind)
    return best[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", default="100", help="store sizes in MB, comma separated")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    prefix = [] if os.geteuid() != 0 else ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                                              "--inh-caps=-dac_override,-dac_read_search"]
    temp = tempfile.gettempdir()
    print(f"copies in {temp} ({filesystem(temp)}); median seconds of {args.rounds} rounds (fastest), warm page cache")
    print(f"{'MB':>6} {'copy alone':>11} {'read-only open':>15} {'in-place open':>14} {'ratio':>6}")
    for megabytes in (int(n) for n in args.mb.split(",")):
        with tempfile.TemporaryDirectory(prefix="lamar-ro-bench-") as folder:
            path = Path(folder) / "lessons.db"
            last = build(path, megabytes)
            size = path.stat().st_size / 1e6
            copies, read_only, in_place = [], [], []
            for _ in range(args.rounds):
                os.chmod(path, 0o444)
                try:
                    read_only.append(child(path, last, prefix))
                finally:
                    os.chmod(path, 0o644)
                in_place.append(child(path, last, []))
                copies.append(copy_alone(path))
                assert sorted(os.listdir(folder)) == ["lessons.db"], os.listdir(folder)
            ro, ip = statistics.median(read_only), statistics.median(in_place)
            print(f"{size:6.0f} {statistics.median(copies):11.3f} {ro:15.3f} {ip:14.3f} {ro / ip:6.1f}"
                  f"   (fastest {min(copies):.3f} {min(read_only):.3f} {min(in_place):.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
