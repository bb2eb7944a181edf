"""Promise 1, nothing lost: concurrent writers, SIGKILL at random points, a full disk, a
read-only store, and apply() while reports keep arriving."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lamar import Experience, Lamar, LamarError, Scope, Signal, StoreError
from tests.conftest import IN_CI, as_user
from tests.mounts import tmpfs

BACKENDS = ["json", "db"]
# Long enough for the JSON writers to save the store's index a few times (json_file._INDEX_EVERY)
# while the others append; LAMAR_SOAK_SECONDS=60 or more soaks for longer.
SOAK_SECONDS = float(os.environ.get("LAMAR_SOAK_SECONDS", "20"))


def _seed(path: str) -> None:
    lam = Lamar(path, k=2, seed=0)
    for i in range(6):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}")))
    lam.close()


def _hammer(path: str, log: str, seed: int, seconds: float) -> None:
    """Recall and report until time is up; log each completed episode id (kernel-buffered)."""
    lam = Lamar(path, k=2, seed=seed)
    rng = random.Random(seed)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rec = lam.recall({"task": f"t{rng.randrange(2)}"})
        lam.report(rec.episode_id, rng.choice(list(Signal)))
        os.write(fd, (rec.episode_id + "\n").encode())


def _completed(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def _check_consistent(path: str, completed: list[str]) -> Lamar:
    lam = Lamar(path, k=2, seed=0)
    events = lam.store.read()
    outcomes = [e.data["episode"] for e in events if e.kind == "outcome"]
    assert len(outcomes) == len(set(outcomes)), "an episode was counted twice"
    # Applying a compact proposal checkpoints the store: the snapshot lists the reported
    # episodes it kept (id first, reward eighth), and only counts those compacted away.
    kept = {row[0] for e in events if e.kind == "snapshot" for row in e.data["episodes"] if row[7] is not None}
    compacted = lam.stats()["compacted"]["reports"]
    reported = set(outcomes) | kept
    assert len(set(completed) - reported) <= compacted, "a completed report was lost"
    assert lam.stats()["reports"] == len(reported) + compacted >= len(set(completed))
    live = {e.id: lam.evidence(e.id) for e in lam.experiences()}
    lam.rebuild()
    assert {e.id: lam.evidence(e.id) for e in lam.experiences()} == live
    return lam


def test_four_processes_per_store_recalling_and_reporting_lose_nothing(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    jobs = []
    for suffix in BACKENDS:
        path = str(tmp_path / f"soak.{suffix}")
        _seed(path)
        for w in range(4):
            log = str(tmp_path / f"{suffix}{w}.log")
            proc = ctx.Process(target=_hammer, args=(path, log, w, SOAK_SECONDS))
            proc.start()
            jobs.append((suffix, path, log, proc))
    for _, _, _, proc in jobs:
        proc.join(SOAK_SECONDS + 120)
        assert proc.exitcode == 0
    for suffix in BACKENDS:
        mine = [j for j in jobs if j[0] == suffix]
        completed = [e for _, _, log, _ in mine for e in _completed(Path(log))]
        lam = _check_consistent(mine[0][1], completed)
        assert lam.stats()["reports"] == len(completed) > 0
        print(f"{suffix}: {len(completed)} episodes in {SOAK_SECONDS:.0f} s by 4 processes "
              f"({len(completed) / SOAK_SECONDS:.0f}/s)")


@pytest.mark.parametrize("suffix", BACKENDS)
def test_a_hundred_sigkills_never_break_the_store(tmp_path: Path, suffix: str) -> None:
    path = str(tmp_path / f"killed.{suffix}")
    _seed(path)
    log = tmp_path / "killed.log"
    ctx = multiprocessing.get_context("fork")
    rng = random.Random(11)
    for round_ in range(100):
        before = len(_completed(log))
        proc = ctx.Process(target=_hammer, args=(path, str(log), round_, 30.0))
        proc.start()
        deadline = time.monotonic() + 30
        while len(_completed(log)) <= before and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(rng.random() * 0.05)  # a random point in a stream of writes
        os.kill(proc.pid, signal.SIGKILL)
        proc.join()
    completed = _completed(log)
    assert len(completed) >= 100
    _check_consistent(path, completed)


@pytest.mark.parametrize("suffix", BACKENDS)
def test_a_full_disk_is_a_clear_error_and_keeps_the_previous_state(tmp_path: Path, suffix: str) -> None:
    with tmpfs(tmp_path / "disk", "192k") as disk:
        path = str(disk / f"full.{suffix}")
        _seed(path)
        lam = Lamar(path, k=2, seed=1)
        completed, error = [], None
        for _ in range(20_000):
            try:
                rec = lam.recall({"task": "t0"})
                lam.report(rec.episode_id, Signal.ACCEPTED)
            except StoreError as exc:
                error = exc
                break
            completed.append(rec.episode_id)
        assert error is not None, "the disk never filled"
        assert isinstance(error, OSError) and path in str(error)
        assert "full" in str(error).lower() or "space" in str(error).lower()
        reopened = Lamar(path, k=2, seed=2)
        reported = {e.data["episode"] for e in reopened.store.read() if e.kind == "outcome"}
        assert set(completed) <= reported


def _immutable(paths: list[Path], on: bool) -> bool:
    flag = "+i" if on else "-i"
    return all(subprocess.run(["chattr", flag, str(p)], capture_output=True, check=False).returncode == 0
               for p in paths if p.exists())


@pytest.mark.parametrize("suffix", BACKENDS)
def test_a_read_only_store_is_a_clear_error_and_is_left_intact(tmp_path: Path, suffix: str) -> None:
    folder = tmp_path / "ro"
    path = folder / f"store.{suffix}"
    _seed(str(path))
    lam = Lamar(str(path), k=2, seed=1)
    rec = lam.recall({"task": "t0"})
    lam.report(rec.episode_id, Signal.SHIPPED)
    lam.close()
    files = sorted(folder.iterdir())
    snapshot = {p.name: p.read_bytes() for p in files}
    if not _immutable(files + [folder], True):
        _immutable(files + [folder], False)
        if IN_CI:
            pytest.fail("chattr +i is needed to make a store read-only for root")
        pytest.skip("chattr +i is not available here")
    try:
        with pytest.raises(LamarError) as info:
            ro = Lamar(str(path), k=2, seed=1)
            ro.report(ro.recall({"task": "t0"}).episode_id, Signal.SHIPPED)
        assert isinstance(info.value, StoreError) and str(path) in str(info.value)
        assert "(read-only file, folder or mount); open a writable copy to change it" in str(info.value)
    finally:
        _immutable(files + [folder], False)
    assert {p.name: p.read_bytes() for p in files} == snapshot


@pytest.mark.parametrize("read_only", [("s.json", "s.json.lock"), ("s.json",), (".",)])
def test_a_json_store_a_user_may_not_write_says_what_to_do(tmp_path: Path, read_only: tuple[str, ...]) -> None:
    # The lock refused ("cannot lock"), or the file itself ("could not write"): either way the
    # user is told it is read-only and to open a writable copy, as a SQLite store says.
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "s.json"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    if read_only == (".",):
        (folder / "s.json.lock").unlink()
    snapshot = {p.name: p.read_bytes() for p in folder.iterdir()}
    user = as_user()  # root ignores file modes unless it drops the capability to
    for name in read_only:
        os.chmod(folder / name, 0o555 if name == "." else 0o444)
    try:
        out = subprocess.run([*user, sys.executable, "-m", "lamar.cli", "--store", str(path), "add",
                              "--precondition", "a test flakes", "--action", "rerun it"],
                             capture_output=True, text=True, check=False, timeout=60)
    finally:
        for name in read_only:
            os.chmod(folder / name, 0o755 if name == "." else 0o644)
    assert out.returncode == 2, out.stderr
    assert f"{path} cannot be written (read-only file, folder or mount); open a writable copy" in out.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == snapshot


@pytest.mark.parametrize("command", [("add", "--precondition", "a test flakes", "--action", "rerun it"),
                                     ("retire", "exp_"), ("erase", "exp_"), ("report", "EPISODE", "shipped")])
def test_a_sqlite_file_a_user_may_not_write_in_a_folder_they_may_says_what_to_do(tmp_path: Path,
                                                                                 command: tuple[str, ...]) -> None:
    # SQLite opens such a file read-only without a word, so the open succeeds and only the write
    # fails: it says what to do as a store opened read-only does, erase included.
    path = tmp_path / "s.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
        episode = lam.recall({}).episode_id
    before = path.read_bytes()
    user = as_user()  # root ignores file modes unless it drops the capability to
    os.chmod(path, 0o444)
    args = [episode if word == "EPISODE" else word for word in command]
    try:
        out = subprocess.run([*user, sys.executable, "-m", "lamar.cli", "--store", str(path), *args],
                             capture_output=True, text=True, check=False, timeout=60)
    finally:
        os.chmod(path, 0o644)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert f"{path} cannot be written (read-only file, folder or mount); open a writable copy" in out.stderr
    assert path.read_bytes() == before
    with Lamar(str(path)) as lam:  # nothing of the refused write is there once it can be written
        assert len(lam.experiences()) == 1 and lam.experiences()[0].status.value == "active"
        assert lam.stats()["reports"] == 0


@pytest.mark.parametrize("suffix", BACKENDS)
def test_apply_while_reports_keep_arriving_loses_no_report(tmp_path: Path, suffix: str) -> None:
    path = str(tmp_path / f"busy.{suffix}")
    lam = Lamar(path, k=2, seed=3)
    for i in range(6):  # pairs of near-duplicates (add stores an exact one once): every sleep proposes merges
        lam.add(Experience(f"case {i // 2}", f"do {i // 2}" + "." * (i % 2), scope=Scope(task="t0")))
    log = tmp_path / "busy.log"
    proc = multiprocessing.get_context("fork").Process(target=_hammer, args=(path, str(log), 5, 3.0))
    proc.start()
    applied = rounds = 0
    while proc.is_alive():
        report = lam.sleep()
        applied += len(lam.apply(report).applied)
        rounds += 1
        lam.add(Experience("case 9", "do 9" + "." * rounds, scope=Scope(task="t0")))
        time.sleep(0.05)
    proc.join()
    assert proc.exitcode == 0 and applied > 0
    _check_consistent(path, _completed(log))
