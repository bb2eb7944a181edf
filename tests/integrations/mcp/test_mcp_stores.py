"""`lamar mcp` started over stdio on stores a user may have: damaged, held by another writer."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from lamar_mcp.launch import child_env, lamar_command


async def test_a_store_whose_schema_names_are_damaged_is_refused_as_corrupt(store: Path, tmp_path: Path) -> None:
    raw = bytearray(store.read_bytes())
    name = raw.find(b"events", 100, 4096)  # the events table's name in the schema, on the first page
    raw[name:name + 6] = b"\xaa" * 6  # not UTF-8: SQLite hands Python bytes it cannot decode
    store.write_bytes(bytes(raw))
    command = lamar_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp", "--store", str(store)],
                                   env=child_env())
    log = tmp_path / "stderr.txt"
    with log.open("w") as errlog, pytest.raises((MCPError, OSError, ExceptionGroup)):
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
    said = log.read_text()
    assert f"{store} is not a readable Lamar SQLite store" in said and "restore it from a backup" in said, said
    assert "a bug in Lamar" not in said
    assert store.read_bytes() == bytes(raw)  # left untouched
