"""A JSON store saved in another encoding than UTF-8 (a hand edit in latin-1) is refused, naming the
file, the byte and what to do, and left as it is; saved again as UTF-8, it opens as it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lamar import CorruptStore, Experience, Lamar, LamarError, StoreError
from lamar.store import JsonStore


def _refused(path: Path, byte: int, line: int) -> None:
    """Opening the store (alone or under an engine) is the error that says what to do; the file is not touched."""
    before = {p.name: p.read_bytes() for p in path.parent.iterdir()}
    expected = (f"{path} is not UTF-8 text: byte {byte} (line {line}) is 0xe9; it was left untouched. A store is "
                "UTF-8: if the file was saved in another encoding (latin-1, cp1252), open it in that encoding and "
                "save it again as UTF-8; else restore it from a backup.")
    for open_it in (lambda: JsonStore(path), lambda: Lamar(str(path), seed=0)):
        with pytest.raises(CorruptStore, match=f"^{re.escape(expected)}$") as info:
            open_it()
        assert isinstance(info.value, StoreError) and isinstance(info.value, LamarError)
    assert {p.name: p.read_bytes() for p in path.parent.iterdir()} == before


@pytest.mark.parametrize("checksum", [True, False], ids=["as-written", "crc-deleted"])
def test_a_store_saved_in_latin_1_is_refused_and_opens_again_saved_as_utf_8(tmp_path: Path, checksum: bool) -> None:
    path = tmp_path / "lessons.json"
    with Lamar(str(path), seed=0) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
        lam.add(Experience("the café tests fail", "restart the café server"))
    text = path.read_text(encoding="utf-8")
    if not checksum:  # a line edited on purpose, its "crc" deleted as the docs say
        text = re.sub(r', "crc": "[0-9a-f]{8}"', "", text)
    path.write_bytes(text.encode("latin-1"))  # an editor's "save as latin-1"
    raw = path.read_bytes()
    _refused(path, raw.index(b"\xe9"), raw[:raw.index(b"\xe9")].count(b"\n") + 1)
    path.write_bytes(raw.decode("latin-1").encode("utf-8"))  # what the message says to do
    with Lamar(str(path), seed=0) as lam:
        assert sorted(e.precondition for e in lam.experiences()) == ["the build fails", "the café tests fail"]


def test_a_version_1_store_written_by_hand_in_latin_1_is_refused(tmp_path: Path) -> None:
    with Lamar(str(tmp_path / "new.json"), seed=0) as lam:
        lam.add(Experience("the café tests fail", "restart the café server"))
        events = [e.to_dict() for e in lam.store.read()]
    text = '{"format": "lamar", "version": 1, "events": [\n' + ",\n".join(
        json.dumps(e, ensure_ascii=False) for e in events) + "\n]}\n"
    path = tmp_path / "old" / "lessons.json"  # the layout Lamar wrote before: one document
    path.parent.mkdir()
    path.write_bytes(text.encode("latin-1"))
    raw = path.read_bytes()
    _refused(path, raw.index(b"\xe9"), 2)
    path.write_bytes(text.encode("utf-8"))
    with Lamar(str(path), seed=0) as lam:
        assert [e.action for e in lam.experiences()] == ["restart the café server"]
