"""The trace format: strict loading that names the bad line, and appends safe across processes."""

from __future__ import annotations

import json
import multiprocessing
import re
from pathlib import Path

import pytest

from lamar import InvalidTrace, LamarError, Signal
from lamar.sleep.traces import Trace, TraceWriter, load_traces
from tests.full_disk import LIMIT, capped


def good(**changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        "id": "t1", "time": 1_700_000_000.0, "context": {"project": "trace", "language": "swift"},
        "input": "the build fails", "attempted": ["swift build", "rm -rf .build"],
        "tool_errors": ["error: stale module map"], "output": "", "outcome": "reverted",
        "episode_id": "ep_1", "metadata": {"agent": "coder"},
    }
    record.update(changes)
    return record


def test_round_trip_keeps_every_field() -> None:
    trace = Trace.from_dict(good())
    assert trace.to_dict() == good()
    assert trace.attempted == ("swift build", "rm -rf .build")
    assert Trace.from_dict(trace.to_dict()) == trace


def test_only_id_and_context_are_required() -> None:
    trace = Trace.from_dict({"id": "t2", "context": {}})
    assert (trace.input, trace.attempted, trace.tool_errors, trace.output) == ("", (), (), "")
    assert trace.outcome is None and trace.episode_id is None and trace.metadata == {}
    assert trace.time > 1_600_000_000  # defaults to now


def test_signal_enum_is_stored_as_its_name() -> None:
    assert Trace("t", {}, outcome=Signal.CORRECTED).to_dict()["outcome"] == "corrected"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"id": ""}, "'id' must be a non-empty string"),
        ({"context": {"project": 3}}, "'context' must map non-empty strings to strings"),
        ({"context": ["project"]}, "'context' must be an object"),
        ({"time": "yesterday"}, "'time' must be unix seconds"),
        ({"attempted": "swift build"}, "'attempted' must be a list of strings"),
        ({"tool_errors": [1]}, "'tool_errors' must be a list of strings"),
        ({"outcome": "great"}, "'outcome' must be one of"),
        ({"episode_id": 7}, "'episode_id' must be a string or null"),
        ({"extra": 1}, "unknown keys ['extra']"),
        ({"output": None}, "'output' must be a string"),
    ],
)
def test_bad_fields_are_refused_with_a_reason(changes: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidTrace, match=message.replace("[", r"\[").replace("]", r"\]")):
        Trace.from_dict(good(**changes))


def test_invalid_trace_is_a_lamar_error_and_a_value_error() -> None:
    with pytest.raises(LamarError):
        Trace.from_dict({"context": {}})
    with pytest.raises(ValueError):
        Trace.from_dict({"context": {}})


def test_load_names_file_and_line_of_the_first_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    lines = [json.dumps(good(id="a")), "", json.dumps(good(id="b")), '{"id": "c", "context": {}',
             json.dumps(good(id="d"))]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidTrace) as caught:
        load_traces(path)
    assert f"{path}, line 4: not valid JSON" in str(caught.value)


def test_load_reads_past_a_byte_order_mark_and_names_a_line_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(good(id="a")) + "\r\n" + json.dumps(good(id="b")) + "\n", encoding="utf-8-sig")
    assert [t.id for t in load_traces(path)] == ["a", "b"]
    path.write_bytes(json.dumps(good(id="a")).encode() + b"\n" + b'{"id": "b", "context": {"project": "\xff"}}\n')
    with pytest.raises(InvalidTrace) as caught:  # a LamarError, never a UnicodeDecodeError
        load_traces(path)
    assert f"{path}, line 2: not UTF-8 text (byte 37 of the line)" in str(caught.value)


def test_load_skips_a_repeated_id_with_a_log_line_naming_both_lines(tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(json.dumps(good(id=i)) for i in ["a", "b", "a"]) + "\n")
    assert [t.id for t in load_traces(str(path))] == ["a", "b"]  # the first copy stands, the file still loads
    assert re.search(r"line 3: trace id 'a' repeats .*line 1; skipped", caplog.text)



def test_a_file_appended_twice_names_a_few_repeats_and_counts_the_rest(tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    # Three agents' traces mined from a file that held a run twice put 1 350 lines on a cron job's stderr,
    # one per repeated id.
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(good(id=f"run-{i % 200}")) + "\n" for i in range(400)))
    assert len(load_traces(str(path))) == 200
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 6, said[:8]
    assert "line 205: trace id 'run-4' repeats" in said[4]
    assert said[5] == f"{path}: 195 more repeated trace ids skipped (200 in all; the first copy of each is read)"

def test_a_repeated_id_is_logged_scrubbed_of_secrets(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # The warning goes to stderr: an id that holds a credential must not carry it there.
    key = "sk-proj-4fQ9x2LmZ7vR1tY8uW3eK6pA0sD5gH"
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(json.dumps(good(id=f"run {key}")) for _ in range(2)) + "\n")
    assert [t.id for t in load_traces(str(path))] == [f"run {key}"]  # the id itself is the caller's
    assert key not in caplog.text and "line 2: trace id 'run [REDACTED:openai-api-key]' repeats" in caplog.text


def test_load_accepts_dicts_traces_and_json_lines() -> None:
    traces = load_traces([good(id="a"), Trace("b", {}), json.dumps(good(id="c"))])
    assert [t.id for t in traces] == ["a", "b", "c"]
    with pytest.raises(InvalidTrace, match="item 2: missing required keys"):
        load_traces([good(id="a"), {"id": "x"}])



def test_load_reads_a_file_opened_in_binary_mode(tmp_path: Path) -> None:
    """Yesterday's traces, compressed: `gzip.open` (like `open(..., "rb")`) yields bytes lines,
    which load as the file would; a line that is not UTF-8 is named, as in a file."""
    import gzip

    path = tmp_path / "traces-2026-12-01.jsonl.gz"
    with gzip.open(path, "wb") as out:
        out.write(b"\xef\xbb\xbf" + b"".join(json.dumps({"id": f"t{n}", "context": {}}).encode() + b"\n"
                                              for n in range(3)))
    with gzip.open(path) as handle:
        assert [t.id for t in load_traces(handle)] == ["t0", "t1", "t2"]
    with pytest.raises(InvalidTrace, match=r"item 2: not UTF-8 text"):
        load_traces([b'{"id": "a", "context": {}}', b'{"id": "\xff", "context": {}}'])

def test_load_of_a_missing_file_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="cannot read traces"):
        load_traces(tmp_path / "absent.jsonl")


def test_writer_appends_lines_that_load_back(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "traces.jsonl"
    writer = TraceWriter(path)
    writer.write(good(id="a"))
    writer.write(Trace("b", {"project": "trace"}, outcome="shipped"))
    assert [t.id for t in load_traces(path)] == ["a", "b"]
    with pytest.raises(InvalidTrace):
        writer.write({"id": "c"})
    assert len(path.read_text().splitlines()) == 2  # the invalid one wrote nothing


def test_a_last_line_cut_off_is_skipped_with_a_warning_and_a_bad_middle_line_refused(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A writer killed mid-line (or a full disk) leaves a record cut off with no newline: the whole
    # file was refused, and a nightly job failed on it every night until someone edited it by hand.
    path = tmp_path / "traces.jsonl"
    whole = json.dumps(good(id="a")) + "\n"
    for torn in ('{"id": "torn", "cont', '{"id": "t\u00e9'.encode()[:-1].decode("latin-1")):
        path.write_bytes(whole.encode() + torn.encode("latin-1"))
        with caplog.at_level("WARNING", logger="lamar.sleep.traces"):
            assert [t.id for t in load_traces(path)] == ["a"]
        assert f"{path}, line 2: the last line is cut off with no newline, as a writer stopped mid-line" in caplog.text
        caplog.clear()
    path.write_text(whole + '{"id": "torn", "cont\n' + json.dumps(good(id="b")) + "\n")
    with pytest.raises(InvalidTrace, match=f"{re.escape(str(path))}, line 2: not valid JSON"):
        load_traces(path)  # a bad line followed by more is not a stopped append
    path.write_text(whole + json.dumps(good(id="b")))  # a whole record that lacks only its newline
    assert [t.id for t in load_traces(path)] == ["a", "b"]
    path.write_text(whole + '{"id": "b", "context": 3}')
    with pytest.raises(InvalidTrace, match="line 2"):
        load_traces(path)  # whole JSON that breaks the format is refused wherever it is


def test_writer_cuts_away_a_record_cut_off_before_it_appends(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A newline after the torn record made it a bad line in the middle, and every read refused the file.
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(good(id="a")) + "\n" + '{"id": "torn", "cont')
    with caplog.at_level("WARNING", logger="lamar.sleep.traces"):
        TraceWriter(path).write(good(id="b"))
    assert f"{path}: cut away a record cut off at the end of the file (20 bytes with no newline)" in caplog.text
    assert [t.id for t in load_traces(path)] == ["a", "b"]  # only the torn record is lost
    path.write_text("x" * 200_000)  # a last line longer than one read back
    TraceWriter(path).write(good(id="c"))
    assert [t.id for t in load_traces(path)] == ["c"]
    path.write_text(json.dumps(good(id="a")))  # a whole record that lacks only its newline is kept
    TraceWriter(path).write(good(id="b"))
    assert [t.id for t in load_traces(path)] == ["a", "b"]


def _write_many(path: str, worker: int, count: int) -> None:
    writer = TraceWriter(path)
    for i in range(count):
        writer.write(Trace(f"w{worker}-{i}", {"worker": str(worker)}, output="x" * 5000))


def test_a_write_the_disk_cannot_take_leaves_the_file_as_it_was(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    # A full disk took part of the line before it failed: the fragment stayed in the file until the
    # next write cut it away, and a nightly job that moved the file meanwhile read it with a warning.
    whole = json.dumps(good(id="a")) + "\n"
    pad = LIMIT - 100 - len(whole)  # room left for 100 bytes of the next line, and no more
    before = (json.dumps(good(id="a", input="x" * pad)) + "\n").encode()
    path = tmp_path / "traces.jsonl"
    path.write_bytes(before)
    done = capped("from lamar import StoreError\nfrom lamar.sleep.traces import TraceWriter\n"
                  "try:\n    TraceWriter('traces.jsonl').write({'id': 'b', 'context': {}, 'input': 'y' * 2000})\n"
                  "except StoreError as exc:\n    print(exc)\n", tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("cannot append a trace to traces.jsonl: "), done
    assert path.read_bytes() == before
    with caplog.at_level("WARNING", logger="lamar.sleep.traces"):
        assert [t.id for t in load_traces(path)] == ["a"]
    assert caplog.records == []


def test_several_processes_append_without_interleaving(tmp_path: Path) -> None:
    path = str(tmp_path / "traces.jsonl")
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_write_many, args=(path, w, 40)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(30)
        assert process.exitcode == 0
    traces = load_traces(path)  # every line parses: no two writes interleaved
    assert len(traces) == 160
    assert {t.id for t in traces} == {f"w{w}-{i}" for w in range(4) for i in range(40)}


def test_a_list_of_file_names_is_told_to_load_each_file(tmp_path: Path) -> None:
    # Two workers write a file each and `lamar sleep --traces` takes both; in Python, a list of the two paths
    # must be refused as file names, not read as two JSON lines that are not valid JSON.
    paths = [tmp_path / "traces-a.jsonl", tmp_path / "traces-b.jsonl"]
    for n, path in enumerate(paths):
        path.write_text(json.dumps(good(id=f"t{n}")) + "\n")
    with pytest.raises(InvalidTrace) as refused:
        load_traces([str(path) for path in paths])
    message = str(refused.value)
    assert message.startswith("item 1: a file name, not a trace:"), message
    assert "[trace for path in paths for trace in load_traces(path)]" in message
    assert load_traces(json.dumps(good(id="x")) for _ in range(1))[0].id == "x"  # JSON lines still read
    with pytest.raises(InvalidTrace, match=r"item 1: not valid JSON"):
        load_traces(["not json at all"])
