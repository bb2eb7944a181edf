"""The what-if's three front ends (command line, MCP tool, UI page) take the same policy names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Signal
from lamar.whatif.ask import spelt_out


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    path = tmp_path_factory.mktemp("fronts") / "ids.db"
    with Lamar(str(path), k=2, seed=1, holdout=0.3) as lam:
        ids = [lam.add(Experience("a test is flaky", action)) for action in ("pin the seeds", "mock the clock")]
        for i in range(60):
            lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
    return str(path), ids


def short(ids: list[str]) -> str:
    lesson = ids[0]
    return next(lesson[:n] for n in range(5, len(lesson)) if sum(i.startswith(lesson[:n]) for i in ids) == 1)


def test_a_prefix_is_spelt_out_and_an_ambiguous_one_refused(store: tuple[str, list[str]]) -> None:
    from lamar import InvalidArgument

    with Lamar(store[0]) as lam:
        ids = store[1]
        assert spelt_out(lam, ["none", f" without:{short(ids)}", f"without:{ids[1]}", "without:nobody"]) == [
            "none", f"without:{ids[0]}", f"without:{ids[1]}", "without:nobody"]
        with pytest.raises(InvalidArgument, match="is the start of 2 lesson ids .*give more of the id"):
            spelt_out(lam, ["without:exp_"])


def test_the_mcp_tool_takes_a_shortened_id_as_the_command_line_does(store: tuple[str, list[str]]) -> None:
    pytest.importorskip("mcp")
    from lamar_mcp.tools import LamarTools, ToolError

    path, ids = store
    with Lamar(path) as lam:
        tools = LamarTools(lam)
        data = tools.whatif([f"without:{short(ids)}"])
        assert [row["policy"] for row in data["alternatives"]] == [f"without:{ids[0]}"]
        assert data == json.loads(json.dumps(lam.whatif([f"without:{ids[0]}"]).to_dict()))
        with pytest.raises(ToolError, match="give more of the id"):
            tools.whatif(["without:exp_"])


def test_the_ui_page_takes_a_shortened_id_as_the_command_line_does(store: tuple[str, list[str]],
                                                                   tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from lamar_ui.app import UI, create_app

    path, ids = store
    with Lamar(path) as lam, TestClient(create_app(UI(lam, token="t0k", report_path=tmp_path / "r.json")),
                                        base_url="http://127.0.0.1") as client:
        client.cookies.set("lamar_ui_token_80", "t0k")
        page = client.get("/whatif", params={"policies": f"none without:{short(ids)}"}).text
        assert f'data-policy="without:{ids[0]}"' in page and 'class="error"' not in page
        ambiguous = client.get("/whatif", params={"policies": "without:exp_"}).text
        assert "give more of the id" in ambiguous
