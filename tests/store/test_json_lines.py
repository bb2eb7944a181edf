"""The JSON store as lines: writes append, version-1 files migrate without loss, a killed
writer's half line and temp files are cleaned up, a torn file is an error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lamar import CorruptStore, Experience, Lamar, Scope, Signal
from lamar.store import Event, JsonStore


def _history(path: Path, episodes: int = 30) -> Lamar:
    lam = Lamar(str(path), k=2, seed=1)
    for i in range(3):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="t")))
    for n in range(episodes):
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED if n % 3 else Signal.REVERTED)
    return lam


def test_a_write_appends_lines_and_leaves_what_was_there(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    lam = _history(path)
    before, inode = path.read_bytes(), path.stat().st_ino
    rec = lam.recall({"task": "t"})
    lam.report(rec.episode_id, Signal.ACCEPTED)
    after = path.read_bytes()
    assert after.startswith(before) and path.stat().st_ino == inode  # appended, not rewritten
    lines = after.decode().splitlines()
    assert json.loads(lines[0])["version"] == 2 and len(lines) == 1 + 3 + 2 * 31
    assert [json.loads(line)["kind"] for line in lines[-2:]] == ["episode", "outcome"]
    experience = json.loads(lines[1])  # a lesson is one readable line
    assert experience["kind"] == "experience" and experience["data"]["action"] == "do 0"


def test_a_version_1_file_is_read_and_migrated_without_loss(tmp_path: Path) -> None:
    source = _history(tmp_path / "new.json")
    events = source.store.read()
    expected = ({e.id: source.evidence(e.id) for e in source.experiences()}, source.stats()["reports"])
    old = tmp_path / "old.json"  # the layout Lamar wrote before: one document, rewritten per write
    old.write_text('{"format": "lamar", "version": 1, "events": [\n'
                   + ",\n".join(json.dumps(e.to_dict(), ensure_ascii=False) for e in events) + "\n]}\n")
    lam = Lamar(str(old), k=2, seed=1)
    assert ({e.id: lam.evidence(e.id) for e in lam.experiences()}, lam.stats()["reports"]) == expected
    assert old.read_text().startswith('{"format": "lamar", "version": 1')  # reading changes nothing
    rec = lam.recall({"task": "t"})
    lam.report(rec.episode_id, Signal.SHIPPED)
    assert json.loads(old.read_text().splitlines()[0])["version"] == 2
    migrated = JsonStore(old).read()
    assert [(e.seq, e.kind, e.key, e.time, e.data) for e in migrated[:len(events)]] == \
        [(e.seq, e.kind, e.key, e.time, e.data) for e in events]
    assert [e.kind for e in migrated[len(events):]] == ["episode", "outcome"]


def test_a_killed_writers_half_line_is_ignored_then_cut(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    lam = _history(path)
    reports = lam.stats()["reports"]
    size = path.stat().st_size
    # What a writer killed inside its write leaves: its note in the lock file, half a line.
    with open(path.with_name("s.json.lock"), "r+b") as fh:
        fh.write(f"{size:>20}".encode())
    with open(path, "ab") as fh:
        fh.write(b'{"seq": 999, "kind": "outcome", "time": 1.0, "key": "outc')
    assert len(JsonStore(path).read()) == 3 + 60  # a reader ignores it
    other = Lamar(str(path), k=2, seed=2)
    rec = other.recall({"task": "t"})
    other.report(rec.episode_id, Signal.SHIPPED)  # a writer cuts it off and appends
    assert b'"seq": 999,' not in path.read_bytes()
    assert Lamar(str(path)).stats()["reports"] == reports + 1


def test_a_torn_file_is_a_clear_error_and_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _history(path).close()
    data = path.read_bytes()
    path.write_bytes(data[:-40])  # cut inside the last line, with no write in progress
    with pytest.raises(CorruptStore) as info:
        Lamar(str(path))
    assert str(path) in str(info.value) and "incomplete" in str(info.value)
    assert path.read_bytes() == data[:-40]


def test_temp_files_of_killed_writers_are_removed_by_the_next_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, sys, time
        sys.path[:0] = {sys.path!r}
        from lamar.store import Event, JsonStore
        os.replace = lambda *a: time.sleep(60)  # killed before the temp file is swapped in
        JsonStore({str(path)!r}).append([Event("status", {{"id": "x", "status": "active"}})])
        """)])
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".s.json.*.tmp")) and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
    assert list(tmp_path.glob(".s.json.*.tmp")), "the writer never wrote its temp file"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    store = JsonStore(path)
    store.append([Event("status", {"id": "y", "status": "active"})])
    assert not list(tmp_path.glob(".s.json.*.tmp"))
    assert [e.data["id"] for e in store.read()] == ["y"]


_OVER_THE_LIMIT = """
import resource, sys
sys.dont_write_bytecode = True  # a capped write would leave a cut .pyc in the shared cache
from lamar import Lamar, StoreError
lam = Lamar(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
try:
    lam.recall({"task": "t"})
except StoreError as exc:
    print(exc)
"""


def test_a_write_past_the_file_size_limit_says_so_not_that_the_disk_is_full(tmp_path: Path) -> None:
    path = tmp_path / "lessons.json"
    _history(path, episodes=3).close()
    size = path.stat().st_size
    # One byte of the episode's line fits under the limit: the write is cut short there.
    run = subprocess.run([sys.executable, "-c", _OVER_THE_LIMIT, str(path), str(size + 1)],
                         capture_output=True, text=True, check=True)
    assert "File too large" in run.stdout and "No space" not in run.stdout
    assert path.stat().st_size == size  # the partial line was taken back
    assert Lamar(str(path)).stats()["episodes"] == 3
