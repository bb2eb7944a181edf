"""The conformance suite on the embedded backends."""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest

from lamar.conformance import FileStoreConformance, StoreConformance


class TestMemoryStore(StoreConformance, unittest.TestCase):
    persistent = False
    processes = False

    def location(self, folder: Path) -> str:
        return ":memory:"


class TestJsonStore(FileStoreConformance, unittest.TestCase):
    def location(self, folder: Path) -> str:
        return str(folder / "nested" / "store.json")


class TestSqliteStore(FileStoreConformance, unittest.TestCase):
    def location(self, folder: Path) -> str:
        return str(folder / "nested" / "store.db")


def test_a_file_store_copied_into_itself_by_another_spelling_is_refused_as_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same file named relatively, absolutely or through a link is the same store: the copy is
    refused as a copy into itself, not as an event key repeated by some other store."""
    from lamar import Experience, Lamar, StoreError
    from lamar.store import ExperienceStore
    from lamar.store.transfer import transfer

    monkeypatch.chdir(tmp_path)
    for name in ("lessons.db", "lessons.json"):
        Lamar(name).add(Experience("the build fails", "clear the cache"))
        (tmp_path / f"link-{name}").symlink_to(tmp_path / name)
        for other in (str(tmp_path / name), f"link-{name}"):
            source, target = ExperienceStore(name), ExperienceStore(other)
            with pytest.raises(StoreError, match="into itself"):
                transfer(source, target, append=True)
            source.close()
            target.close()
        assert len(ExperienceStore(name).read()) == 1
