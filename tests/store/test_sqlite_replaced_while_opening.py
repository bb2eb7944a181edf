"""A SQLite store whose file is replaced while its opening waits for another writer's lock (`lamar export --force`
holds it across its rename) opens the file now at the path, and leaves nothing of the replaced one beside it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from lamar import Experience, Lamar
from lamar.store.sqlite import SqliteStore


def test_a_file_replaced_while_the_store_opens_is_the_one_it_opens(tmp_path: Path) -> None:
    copy = tmp_path / "aside.db"
    with Lamar(str(copy)) as lam:
        lam.add(Experience("the build fails", "read the log"))
    out = tmp_path / "notes.db"
    out.write_text("")  # no store yet: a store opening it makes one in place
    export = sqlite3.connect(out, isolation_level=None)
    export.execute("BEGIN EXCLUSIVE")  # as `lamar export --force` holds it from its last look to its rename
    opened: list[SqliteStore] = []
    opening = threading.Thread(target=lambda: opened.append(SqliteStore(str(out))))
    opening.start()
    time.sleep(0.5)  # the store's opening waits for the lock
    os.replace(copy, out)
    export.close()
    opening.join(30)
    try:
        # Another process, while that store is open and idle (a server waiting for its first call), reads and
        # writes the file at the path: it found the replaced file's -wal and -shm there, named by the path.
        code = f"from lamar import Experience, Lamar\nwith Lamar({str(out)!r}) as lam:\n" \
               "    lam.add(Experience('the deploy fails', 'check the env'))\n    print(len(lam.experiences()))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert (done.returncode, done.stdout.strip()) == (0, "2"), done.stderr[-500:]
        assert [e.kind for e in opened[0].read()].count("experience") == 2  # the store opened the copy
    finally:
        opened[0].close()
