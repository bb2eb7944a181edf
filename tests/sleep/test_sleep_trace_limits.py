"""What `TraceWriter` keeps of a trace: each text field and each line capped, secrets scrubbed past a cut."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import lamar.safety.traces as scrubbing
from lamar import InvalidTrace
from lamar.sleep.traces import Trace, TraceWriter, load_traces

KEY = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
MARK = " [...clipped]"


def prose(length: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    words = ["the", "build", "failed", "after", "bumping", "swift", "module", "map", "is", "stale"]
    return " ".join(rng.choice(words) for _ in range(length // 4 + 1))[:length]


def long_trace(size: int) -> Trace:
    return Trace("t1", {"project": "trace", "notes": prose(size, 1)}, input=prose(size, 2),
                 attempted=["swift build", prose(size, 3)], tool_errors=[prose(size, 4)], output=prose(size, 5),
                 metadata={"raw": [prose(size, 6)], "agent": "coder"})


def test_each_text_field_is_cut_to_4000_characters_with_a_marker_and_its_head_kept(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    original = long_trace(100_000)
    written = TraceWriter(path).write(original)
    [loaded] = load_traces(path)
    assert loaded == written
    texts = [loaded.input, loaded.output, loaded.attempted[1], loaded.tool_errors[0], loaded.context["notes"],
             loaded.metadata["raw"][0]]
    heads = [original.input, original.output, original.attempted[1], original.tool_errors[0],
             original.context["notes"], original.metadata["raw"][0]]
    assert [len(t) for t in texts] == [4000] * 6
    assert all(t.endswith(MARK) and t[:-len(MARK)] == h[:4000 - len(MARK)] for t, h in zip(texts, heads))
    assert loaded.attempted[0] == "swift build" and loaded.metadata["agent"] == "coder"  # short ones as they were
    assert loaded.context["project"] == "trace"


def test_a_field_within_the_limit_is_written_whole(tmp_path: Path) -> None:
    trace = Trace("t1", {"project": "trace"}, input=prose(4000), output=prose(3999))
    assert TraceWriter(tmp_path / "t.jsonl").write(trace) == trace


def test_the_writer_scrubs_in_proportion_to_what_it_keeps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5 MB field costs about what a 4 000 character one does: the cut comes before the scrub."""
    read: list[int] = []
    real = scrubbing.scrub

    def counting(text: str) -> tuple[str, list[str]]:
        read.append(len(text))
        return real(text)

    monkeypatch.setattr(scrubbing, "scrub", counting)
    monkeypatch.setattr("lamar.safety.secrets.scrub", counting)
    TraceWriter(tmp_path / "t.jsonl").write(Trace("t1", {"project": "trace"}, input=prose(5_000_000)))
    assert 4000 <= sum(read) <= 20_000


@pytest.mark.parametrize("cut", range(0, 40, 3))
def test_a_credential_cut_by_the_clip_leaves_none_of_it_in_the_file(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "t.jsonl"
    text = "x" * (4000 - len(MARK) - 7 - cut) + " token " + KEY + " " + prose(10_000)
    TraceWriter(path).write(Trace("t1", {"project": "trace"}, input=text, attempted=[text],
                                  metadata={"log": text}))
    assert KEY[:8] not in path.read_text()


def test_a_line_over_the_cap_keeps_the_first_actions_and_errors_and_counts_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    trace = Trace("t1", {"project": "trace"}, attempted=[f"step {n} " + prose(3990, n) for n in range(200)],
                  tool_errors=[f"error {n} " + prose(3990, n) for n in range(100)])
    written = TraceWriter(path).write(trace)
    line = path.read_bytes()
    assert len(line) <= 500_000
    attempted, errors = list(written.attempted), list(written.tool_errors)
    assert attempted[-1].startswith("[...") and errors[-1].startswith("[...")
    kept_attempted, kept_errors = attempted[:-1], errors[:-1]
    assert len(kept_attempted) >= 40 and len(kept_errors) >= 40  # what mining shows (the first 40 of each)
    assert [a.split()[1] for a in kept_attempted] == [str(n) for n in range(len(kept_attempted))]
    assert attempted[-1] == f"[...{200 - len(kept_attempted)} more clipped]"
    assert errors[-1] == f"[...{100 - len(kept_errors)} more clipped]"
    assert json.loads(line)["attempted"] == attempted


def test_a_trace_too_large_without_its_actions_is_refused_before_any_scrub(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str) -> Any:
        raise AssertionError("scrubbed a trace that is refused")

    monkeypatch.setattr(scrubbing, "scrub", refuse)
    monkeypatch.setattr("lamar.safety.secrets.scrub", refuse)
    path = tmp_path / "t.jsonl"
    with pytest.raises(InvalidTrace, match="max_line_bytes"):
        TraceWriter(path).write(Trace("t1", {"project": "trace"}, metadata={"rows": ["r" * 100] * 10_000}))
    with pytest.raises(InvalidTrace, match="max_line_bytes"):
        TraceWriter(path).write(Trace("t" * 600_000, {"project": "trace"}))
    assert not path.exists()


def test_the_limits_are_keyword_arguments(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    writer = TraceWriter(path, max_field_chars=100, max_line_bytes=2_000)
    written = writer.write(Trace("t1", {"project": "trace"}, input=prose(500), attempted=[prose(90)] * 40))
    assert len(written.input) == 100 and written.input.endswith(MARK)
    assert len(path.read_bytes()) <= 2_000 and written.attempted[-1].endswith("more clipped]")
    assert repr(writer) == f"TraceWriter({str(path)!r}, max_field_chars=100, max_line_bytes=2000)"


@pytest.mark.parametrize("options, message", [
    ({"max_field_chars": 10}, "max_field_chars must be a whole number of at least 100"),
    ({"max_field_chars": 100.0}, "max_field_chars must be a whole number"),
    ({"max_line_bytes": 50}, "max_line_bytes must be a whole number of at least"),
    ({"max_line_bytes": True}, "max_line_bytes must be a whole number"),
])
def test_limits_out_of_range_are_refused(tmp_path: Path, options: dict[str, Any], message: str) -> None:
    from lamar import InvalidArgument

    with pytest.raises(InvalidArgument, match=message):
        TraceWriter(tmp_path / "t.jsonl", **options)


def test_clip_text_scrubs_what_a_cut_leaves_of_a_credential() -> None:
    from lamar.sleep.trace_limits import clip_text

    clipped = clip_text("token " + KEY + " " + prose(200), 30)
    assert clipped == "token [REDACTED:g [...clipped]"
    assert clip_text("short", 30) == "short"
