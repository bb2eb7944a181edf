"""What `lamar sleep` and `lamar stats` say of the turns Claude Code's hooks traced for a store and no sleep mined."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


def _home_store(json_store: Path, tmp_path: Path) -> tuple[str, Path]:
    """The store as `~/experience.json` (HOME is tmp_path/home) and the hooks' trace file beside it."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    shutil.copyfile(json_store, home / "experience.json")
    return "~/experience.json", home / "experience.json.claude-code.traces.jsonl"


def _record(trace_id: str) -> str:
    return json.dumps({"id": trace_id, "context": {"project": "trace"}, "input": "bump swift-nio"}) + "\n"


def test_a_store_named_from_home_has_its_traced_turns_named(json_store, tmp_path, monkeypatch):
    # A location given as ~/... had its trace file looked for under a folder literally named ~.
    from lamar.cli.unmined import unmined_traces

    store, traces = _home_store(json_store, tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    traces.write_text(_record("cc-s-1") + _record("cc-s-2"))
    said, command = unmined_traces(store) or ("", "")
    assert said == f"not mined: 2 turns that Claude Code's hooks traced in {traces} (mining takes a model)"
    assert f"--store {tmp_path / 'home' / 'experience.json'} --traces {traces} " in command


def test_only_trace_records_count_as_turns(run_cli, json_store, tmp_path):
    # Every line counted: blank lines, a line a hand edit broke and a repeated id each read as a turn.
    store, traces = _home_store(json_store, tmp_path)
    traces.write_text(_record("cc-s-1") + "\n\nnot json\n" + _record("cc-s-1") + "[1, 2]\n" + _record("cc-s-2"))
    assert "not mined: 2 turns " in run_cli("sleep", "--store", store).stdout


def test_stats_names_the_unmined_turns_in_its_own_columns(run_cli, json_store, tmp_path):
    store, traces = _home_store(json_store, tmp_path)
    traces.write_text(_record("cc-s-1"))
    assert run_cli("sleep", "--store", store).returncode == 0
    stats = run_cli("stats", "--store", store).stdout.splitlines()
    at = next(i for i, line in enumerate(stats) if line.startswith("mining "))
    to = next(i for i, line in enumerate(stats) if line.startswith(" " * 11 + "lamar sleep "))
    said, command = stats[at:to], stats[to]
    # The line sits in the columns of the lines above it, and the command, on a line of its own, copies whole.
    assert all(line.startswith(" " * 11) for line in said[1:]), said
    assert all(len(line) <= 113 or " " not in line.strip() for line in said), said  # only a path runs over
    assert " ".join(line.strip() for line in said) == (f"mining     not mined: 1 turn that Claude Code's hooks "
                                                       f"traced in {traces} (mining takes a model):")
    assert command.startswith(" " * 11 + "lamar sleep --store ") and command.endswith(" --out report.json")
    assert f"--traces {traces} " in command


def test_stats_says_nothing_of_traced_turns_after_a_sleep_that_mined(run_cli, json_store, tmp_path):
    store, traces = _home_store(json_store, tmp_path)
    traces.write_text(_record("cc-s-1"))
    figures = Path(str(traces).replace(".claude-code.traces.jsonl", ".last-sleep.json"))
    figures.write_text(json.dumps({"format": "lamar-last-sleep", "created": 1.7e9, "proposals": 0,
                                   "mining": {"traces": 1, "model_calls": 1, "candidates": 0}}))
    stats = run_cli("stats", "--store", store).stdout
    assert "mined 1 trace in 1 model call" in stats and "not mined" not in stats, stats
