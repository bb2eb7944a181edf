"""What the editors' MCP clients (Cursor, VS Code, Windsurf, Claude Desktop) need of `lamar mcp`: tool names and
input schemas their models' function-calling APIs take, and a server started as they start it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar_mcp.launch import child_env, http_server, lamar_command, stdio_session

# The JSON Schema keywords every function-calling API behind these clients takes: Gemini's (the
# strictest, whose request fails as a whole on one keyword it does not know) lists these, and a
# client adds `additionalProperties`, which pydantic writes for every mapping, to what it forwards.
_TAKEN = {"type", "properties", "required", "additionalProperties", "description", "title", "default", "enum",
          "items", "minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties", "minimum",
          "maximum", "format", "nullable", "anyOf"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")  # OpenAI's and Gemini's function names


def _keywords(schema: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(place, keyword) for every keyword of `schema`, the names under `properties` being names, not keywords."""
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        yield where, key
        if key == "properties":
            for name, sub in value.items():
                yield from _keywords(sub, f"{where}.{name}")
        elif key in ("items", "additionalProperties", "propertyNames"):
            yield from _keywords(value, f"{where}.{key}")
        elif key == "anyOf":
            for i, sub in enumerate(value):
                yield from _keywords(sub, f"{where}.anyOf[{i}]")


async def test_tool_names_and_input_schemas_are_ones_every_clients_model_takes(store: Path) -> None:
    async with stdio_session(store) as session:
        tools = (await session.list_tools()).tools
    for tool in tools:
        assert _NAME.match(tool.name), tool.name
        # Cursor refuses a tool whose server and tool names together pass 60 characters.
        assert len("lamar") + len(tool.name) <= 60, tool.name
        refused = [(f"{tool.name}{where}", key) for where, key in _keywords(tool.input_schema) if key not in _TAKEN]
        assert not refused, refused


async def test_a_label_key_past_64_characters_is_refused_by_the_tool_not_the_schema(store: Path) -> None:
    async with stdio_session(store) as session:
        result = await session.call_tool("recall", {"context": {"k" * 65: "trace"}})
    assert result.is_error and "keys at most 64 characters" in result.content[0].text, result.content


async def test_started_in_the_root_or_the_home_folder_recall_derives_no_project_or_language(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "scripts").mkdir(parents=True)
    (home / "scripts" / "backup.sh").write_text("#!/bin/sh\n")
    monkeypatch.setenv("HOME", str(home))  # the server's environment is this process's
    for folder in ("/", home):
        async with stdio_session(store, "--seed", "3", cwd=folder) as session:
            alone = await session.call_tool("recall", {"text": "the Xcode build fails after a dependency bump",
                                                       "dry_run": True})
            assert alone.structured_content["context"] == {"task": "build_fails"}, (folder, alone.content)
            given = await session.call_tool("recall", {"text": "the Xcode build fails after a dependency bump",
                                                       "context": {"project": "trace"}, "dry_run": True})
            found = given.structured_content
            assert found["context"] == {"project": "trace", "task": "build_fails"}, (folder, found)
            assert found["preview"], found  # the project's lessons scoped by no language are eligible


@pytest.fixture
def no_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The servers this test starts have no HOME and a user the password database lacks (a container's bare
    user, as a client may start `lamar mcp` as)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import pwd\n\n\ndef _none(uid):\n    raise KeyError(uid)\n\n\n"
                                           "pwd.getpwuid = _none\n")
    monkeypatch.delenv("HOME")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))


async def test_a_server_with_no_home_folder_recalls_from_words_and_folds_the_log(store: Path, no_home: None) -> None:
    async with stdio_session(store, cwd="/") as session:
        recalled = await session.call_tool("recall", {"text": "the Xcode build fails", "context": {"project": "trace"}})
        assert not recalled.is_error, recalled.content
        for i in range(30):
            episode = (await session.call_tool("recall", {"context": {"project": "trace"}})).structured_content
            await session.call_tool("report", {"episode_id": episode["episode_id"],
                                               "signal": "shipped" if i % 2 else "reverted"})
        folded = await session.call_tool("whatif", {"policies": ["none"]})
        assert not folded.is_error, folded.content


def test_a_server_with_no_home_folder_names_a_store_under_tilde_as_what_to_change(no_home: None) -> None:
    tilde = subprocess.run([*lamar_command(), "mcp", "--store", "~/.lamar/experience.db"], env=child_env(), cwd="/",
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)
    assert tilde.returncode == 1 and "give full paths (the store's with --store)" in tilde.stderr, tilde.stderr
    assert "bug in Lamar" not in tilde.stderr


def test_with_a_token_a_request_without_it_gets_a_401_and_no_oauth_metadata_is_published(store: Path) -> None:
    # Metadata naming no authorization server would send a client into a sign-in that cannot succeed.
    token = "a-token-for-this-test-only-0123456789"
    with http_server(store, env={"LAMAR_MCP_TOKEN": token}) as url:
        origin = url.removesuffix("/mcp")
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
                     "/.well-known/oauth-authorization-server"):
            with pytest.raises(urllib.error.HTTPError) as missing:
                urllib.request.urlopen(origin + path, timeout=30)
            assert missing.value.code == 404, path
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        bare = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json",
                                                               "Accept": "application/json, text/event-stream"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(bare, timeout=30)
        assert refused.value.code == 401
        assert "resource_metadata" not in refused.value.headers.get("WWW-Authenticate", "")


def test_a_store_path_pasted_with_a_space_after_it_is_refused_naming_the_space(tmp_path: Path) -> None:
    # In a client's JSON config the quotes hide a space after the path; the refusal listed the backends only.
    pasted = f"{tmp_path / 'experience.db'} "
    started = subprocess.run([*lamar_command(), "mcp", "--store", pasted], env=child_env(), cwd="/",
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)
    assert started.returncode == 2, started.stderr
    assert f"{str(tmp_path / 'experience.db')!r} would be one: remove that space" in started.stderr, started.stderr
    assert not (tmp_path / "experience.db").exists()
