"""A JSON or SQLite store damaged in more ways than a flipped bit (cut short, bytes deleted, inserted,
overwritten or copied over from elsewhere in the file, lines repeated, swapped or dropped, a sidecar
damaged) is read back exactly as written or refused with a CorruptStore naming the file, and the
damaged bytes are left as they were."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from lamar import CorruptStore
from tools.store_bitflips import events_of, make

_BYTES = ("truncate", "delete", "insert", "overwrite", "splice")
_LINES = ("repeat", "swap", "drop")


def _damaged(data: bytes, how: str, rng: random.Random) -> bytes:
    n = len(data)
    at, size = rng.randrange(1, n), rng.randrange(1, 64)
    if how == "truncate":
        return data[:at]
    if how == "delete":
        return data[:at] + data[at + size:]
    if how == "insert":
        return data[:at] + rng.randbytes(size) + data[at:]
    if how == "overwrite":
        return data[:at] + rng.randbytes(size) + data[at + size:]
    if how == "splice":  # a stretch of the same file copied over another: plausible bytes, wrong place
        source = rng.randrange(n)
        chunk = data[source:source + size]
        return (data[:at] + chunk + data[at + len(chunk):])[:n]
    lines = data.splitlines(keepends=True)
    i, j = rng.randrange(1, len(lines)), rng.randrange(1, len(lines))
    if how == "repeat":
        lines.insert(j, lines[i])
    elif how == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    else:
        del lines[i]
    return b"".join(lines)


@pytest.mark.parametrize(("suffix", "target", "kinds", "trials"), [
    (".json", "store.json", _BYTES + _LINES, 5),
    (".json", "store.json.index", _BYTES, 3),
    (".json", "store.json.state", _BYTES, 3),
    (".db", "store.db", _BYTES, 6),
])
def test_a_damaged_store_is_read_whole_or_refused_naming_it_and_left_as_it_was(
        tmp_path: Path, suffix: str, target: str, kinds: tuple[str, ...], trials: int) -> None:
    source, work = tmp_path / "source", tmp_path / "work"
    source.mkdir()
    work.mkdir()
    expected = make(source / f"store{suffix}", episodes=20)
    for extra in source.iterdir():
        if extra.name.endswith(("-wal", "-shm", ".lock")):
            extra.unlink()
    rng, outcomes = random.Random(4), []
    for how in kinds:
        for _ in range(trials):
            shutil.rmtree(work)
            shutil.copytree(source, work)
            damaged = work / target
            data = _damaged(damaged.read_bytes(), how, rng)
            damaged.write_bytes(data)
            try:
                got = events_of(work / f"store{suffix}")
            except CorruptStore as exc:
                assert str(work / f"store{suffix}") in str(exc) or target in str(exc), (how, str(exc))
                assert damaged.read_bytes() == data, (how, "the damaged file was rewritten")
                outcomes.append("refused")
                continue
            assert got == expected, (how, "read back other events")
            if suffix == ".json" and target != "store.json":  # a sidecar is rebuilt, the log never
                assert (work / "store.json").read_bytes() == (source / "store.json").read_bytes()
            outcomes.append("whole")
    print(target, {o: outcomes.count(o) for o in ("refused", "whole")})
    if target == "store.json":
        assert outcomes.count("refused") == len(outcomes)  # every line checked: no damage is harmless
