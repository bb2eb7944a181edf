"""`scrub_trace`: every string of a sleep trace is scrubbed, and the trace comes back as the same kind."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from lamar.safety import scrub_trace
from lamar.sleep.traces import Trace, load_traces

GH = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
AWS = "AKIA" + "QX7ZT2LMN4RB6KD3"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4f7\n-----END RSA PRIVATE KEY-----"


def _dirty() -> dict[str, Any]:
    return {
        "id": "t1",
        "time": 1_700_000_000.0,
        "context": {"project": "trace", "remote": f"https://{GH}@github.com/acme/app.git"},
        "input": f"why does `git push` fail with token {GH}?",
        "attempted": ["git push", f"export AWS_ACCESS_KEY_ID={AWS}"],
        "tool_errors": [f"could not load key:\n{PEM}"],
        "output": "use a deploy key; DB_PASSWORD=hunter2 was also wrong",
        "outcome": "reverted",
        "episode_id": "ep_1",
        "metadata": {
            "run": {"headers": {"Authorization": "Bearer abcdef0123456789abcdef"}},
            "password": "hunter2",
            "tokens": 1200,
            "notes": ["fine", f"{AWS}"],
        },
    }


def _leaks(data: Any) -> list[str]:
    text = repr(data)
    return [s for s in (GH, AWS, "MIIEowIBAAKCAQEAx4f7", "hunter2", "abcdef0123456789abcdef") if s in text]


def test_dict_in_dict_out_every_field_scrubbed() -> None:
    raw = _dirty()
    cleaned, kinds = scrub_trace(raw)
    assert isinstance(cleaned, dict)
    assert _leaks(cleaned) == []
    assert _leaks(raw) != []  # the input is not modified
    assert set(kinds) == {"github-token", "aws-access-key", "private-key", "password", "bearer-token"}
    assert cleaned["context"]["project"] == "trace"
    assert cleaned["attempted"][0] == "git push"
    assert cleaned["metadata"]["tokens"] == 1200
    assert cleaned["metadata"]["password"] == "[REDACTED:password]"
    assert cleaned["outcome"] == "reverted" and cleaned["episode_id"] == "ep_1"


def test_trace_in_trace_out_still_valid() -> None:
    trace = Trace.from_dict(_dirty())
    cleaned, kinds = scrub_trace(trace)
    assert type(cleaned) is Trace
    assert _leaks(cleaned.to_dict()) == []
    assert "github-token" in kinds
    assert load_traces([cleaned]) == [cleaned]  # still passes the strict trace validation
    assert cleaned.tool_errors == ("could not load key:\n[REDACTED:private-key]",)


def test_clean_trace_comes_back_equal() -> None:
    trace = Trace("t2", {"project": "trace"}, input="build fails after bump", attempted=["swift build"])
    cleaned, kinds = scrub_trace(trace)
    assert cleaned == trace and kinds == []


@dataclasses.dataclass(frozen=True)
class _Session:
    id: str
    text: str
    steps: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def test_dataclass_without_from_dict_uses_replace() -> None:
    session = _Session("s1", f"key {AWS}", ("ok", f"token={GH}"))
    cleaned, kinds = scrub_trace(session)
    assert isinstance(cleaned, _Session)
    assert cleaned.text == "key [REDACTED:aws-access-key]"
    assert cleaned.steps == ("ok", "token=[REDACTED:github-token]")
    assert kinds == ["aws-access-key", "github-token"]


def test_other_types_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="dict or an object with to_dict"):
        scrub_trace(["not", "a", "trace"])  # type: ignore[type-var]


def test_the_trace_writer_never_puts_a_credential_on_disk(tmp_path) -> None:
    from lamar.sleep.traces import TraceWriter, load_traces

    key = "sk-ant-api03-" + "Q" * 90
    path = tmp_path / "traces.jsonl"
    TraceWriter(path).write({"id": "t1", "context": {"project": "x"}, "input": f"deploy with {key}",
                             "tool_errors": [f"Authorization: Bearer {key}"]})
    assert key not in path.read_text()
    (trace,) = load_traces(path)
    assert "[REDACTED:" in trace.input and trace.input.startswith("deploy with ")
