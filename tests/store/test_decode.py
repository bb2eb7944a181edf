"""The log decoder: the same data as `json.loads` for every text, shared work for episodes alike."""

from __future__ import annotations

import gc
import json
import random
from pathlib import Path
from typing import Any

import pytest

from lamar.store import decode as decode_module
from lamar.store import json_format, open_store
from lamar.store.base import Event, UnknownKind, stored_problem
from lamar.store.decode import EventDecoder, no_cycle_collection


def _canonical(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def _episode(rng: random.Random, episode_id: str, context: dict[str, str]) -> dict[str, Any]:
    lessons = [f"l{i}" for i in range(rng.randint(0, 5))]
    p = {lesson: rng.choice([0.0, 0.5, 0.96, 1.0]) for lesson in lessons}
    return {"context": context, "eligible": lessons, "held_out": [], "id": episode_id,
            "injected": [lesson for lesson in lessons if p[lesson] > 0.5], "p": p}


# Each text is something a store could hold or a hand could write; the decoder must agree with
# json.loads on all of them, taking its shortcut or not.
_AWKWARD_IDS = ["ep_0", "", "ep with space", 'ep_"quoted"', "ep_\\back", "ep_é", "ep_\u2028", "ep_\x7f", "id"]
_AWKWARD_CONTEXTS = [{}, {"id": "ctx"}, {"episode": "x"}, {"task": '"id":"'}, {"task": "\\"}, {"id": ""}]


def _texts() -> list[tuple[str, str]]:
    rng = random.Random(7)
    texts = []
    for episode_id in _AWKWARD_IDS:
        for context in _AWKWARD_CONTEXTS:
            data = _episode(rng, episode_id, context)
            texts.append(("episode", _canonical(data)))
            texts.append(("episode", json.dumps(data)))  # spaces after the separators
            texts.append(("episode", json.dumps(data, ensure_ascii=False, sort_keys=True)))
            texts.append(("outcome", _canonical({"episode": episode_id, "replace": False, "reward": 0.5,
                                                 "signal": "shipped"})))
    texts += [
        ("episode", '{"context":{},"id":"a","id":"b","p":{}}'),  # a key twice: json.loads keeps the last
        ("episode", '{"context":{"id":"nested"},"p":{}}'),  # no top-level id
        ("episode", '{"context":{"id":"nested"},"id":"","p":{}}'),  # an empty top-level id and a nested one
        ("episode", '{"id" : "spaced","context":{"id":""}}'),  # the top-level key not spelt compactly
        ("episode", '{"id" : "","context":{"id":"nested"}}'),
        ("episode", '{"\\u0069d":"","context":{"id":"nested"}}'),
        ("episode", '{"context":{"deep":{"id":"x"}},"id":"ep_1"}'),  # nested two levels
        ("episode", '{"context":[{"a":1}],"id":"ep_1"}'),
        ("episode", '{"id":"ep_1","p":{"id":0.5}}'),  # a lesson named id
        ("episode", '{"\\u0069d":"escaped","id":"ep_1"}'),  # the key spelt with an escape
        ("episode", '["id","x"]'),
        ("outcome", '{"episode":"ep_1","reward":null}'),
        ("status", '{"id":"ep_1","status":"retired"}'),
    ]
    return texts


def test_every_text_decodes_as_json_loads_does() -> None:
    decoder = EventDecoder()  # one for all: what it keeps from one text must not leak into another
    shortcuts = 0
    for kind, text in _texts() * 2:  # the second time round from what the first one kept
        expected = json.loads(text)
        shortcuts += len(decoder._rests)
        assert decoder(kind, text) == expected, text
    assert shortcuts  # some of them were decoded by their rest


@pytest.mark.parametrize("text", [
    '{"context":{},"id":"ep\x01","p":{}}',  # a control character inside the id
    '{"context":{},"id":"ep_1","p":{}',  # cut short
    '{"context":{},"id":"ep_1","p":{},}',
    '"id":"x"',
])
def test_a_text_that_does_not_parse_raises_as_json_loads_does(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        EventDecoder()("episode", text)


def test_episodes_alike_decode_their_rest_once_and_share_no_container(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = json.loads
    monkeypatch.setattr(decode_module.json, "loads", lambda text: calls.append(text) or real(text))
    rng = random.Random(3)
    slate = _episode(rng, "", {"task": "deploy"})
    decoder = EventDecoder()
    decoded = [decoder("episode", _canonical({**slate, "id": f"ep_{n}"})) for n in range(50)]
    assert [d["id"] for d in decoded] == [f"ep_{n}" for n in range(50)]
    assert len(calls) == 1
    decoded[0]["context"]["task"] = "changed"
    decoded[0]["eligible"].append("l99")
    assert decoded[1]["context"] == {"task": "deploy"} and "l99" not in decoded[1]["eligible"]
    deeper = [decoder("episode", _canonical({"context": {"deep": {"a": "b"}}, "id": f"ep_{n}"})) for n in range(2)]
    deeper[0]["context"]["deep"]["a"] = "changed"
    assert deeper[1]["context"]["deep"] == {"a": "b"}


def _sessions(first: int, count: int) -> list[str]:
    return [_canonical({"context": {"session": str(n)}, "id": f"ep_{n}", "p": {}}) for n in range(first, first + count)]


def test_contexts_that_never_repeat_turn_the_shortcut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decode_module, "MEMO_LIMIT", 3)
    decoder = EventDecoder()
    texts = _sessions(0, 10)
    assert [decoder("episode", t) for t in texts] == [json.loads(t) for t in texts]
    assert len(decoder._rests) == 3 and not decoder._shortcut


def test_a_memory_filled_slowly_keeps_the_shortcut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decode_module, "MEMO_LIMIT", 3)
    decoder = EventDecoder()
    texts = _sessions(0, 1) * 10 + _sessions(1, 1) * 10 + _sessions(2, 5)
    assert [decoder("episode", t) for t in texts] == [json.loads(t) for t in texts]
    assert len(decoder._rests) == 3 and decoder._shortcut


def test_a_sqlite_read_gives_back_what_was_written(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(11)
    written = [Event("episode", _episode(rng, episode_id, context), key=f"k{n}")
               for n, (episode_id, context) in enumerate(
                   (i, c) for i in _AWKWARD_IDS for c in _AWKWARD_CONTEXTS)]
    written += [Event("outcome", {"episode": "ep_0", "replace": False, "reward": -0.3, "signal": "reasked"})]
    store = open_store(str(tmp_path / "log.db"))
    try:
        store.append(written)
        read = store.read(0)
    finally:
        store.close()
    assert [(e.kind, e.key, e.data) for e in read] == [(e.kind, e.key, e.data) for e in written]


def test_the_cycle_collector_is_restored_as_it_was() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), no_cycle_collection():
        assert not gc.isenabled()
        raise RuntimeError("a read that fails")
    assert gc.isenabled()
    gc.disable()
    try:
        with no_cycle_collection():
            pass
        assert not gc.isenabled()  # someone else paused it: still paused
    finally:
        gc.enable()


def test_a_stored_event_equals_one_built_by_its_constructor() -> None:
    built = Event("outcome", {"episode": "ep_1", "reward": 0.5}, key="k", seq=4, time=12.5)
    assert Event.stored(4, "outcome", "k", 12.5, {"episode": "ep_1", "reward": 0.5}) == built


def _event_or_error(decode: Any, line: bytes) -> object:
    try:
        event = decode(line)
    except (KeyError, TypeError, ValueError, UnknownKind):
        return "refused"  # each is a CorruptStore naming the line, whichever it is
    return (event.kind, event.key, event.seq, event.time, event.data)


def _whole(line: bytes) -> Event:
    """A line decoded whole, as the JSON store read every line before it shared work."""
    if json_format.checked(line) is False:
        raise ValueError("fails its checksum")
    event = Event.from_dict(json.loads(line))
    if stored_problem(event) is not None:
        raise ValueError("holds what no write could have stored")
    return event


def _lines() -> list[bytes]:
    lines = []
    for n, (kind, text) in enumerate(_texts()):
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        event = Event(kind, data, key=None if n % 3 == 0 else f"{kind}:{n}", seq=n + 1, time=1796394714.6431396 + n)
        line = json_format.lines_of([event], 0, Path("s.json"))[0]
        lines.append(line.rstrip(b"\n"))
        lines.append(line.rstrip(b"\n")[:-json_format._CRC_TAIL] + b"}")  # its checksum deleted by hand
    good = lines[2]
    head, _, rest = good.partition(b', "data": ')
    lines += [
        good.replace(b'"time": ', b'"time": 1', 1),  # an edit the checksum catches
        head + b', "data": ' + rest[:-json_format._CRC_TAIL] + b', "data": {"id": "x"}}',  # data twice
        head + b', "data": ' + rest[:-json_format._CRC_TAIL] + b', "crc": "zz"}',  # a checksum not in hex
        head + b', "data": []}',
        head + b', "data": {"id": "x", "injected": "a"}}',  # a list of another type
        b'{"seq": 5, "kind": "episode", "time": NaN, "data": {"id": "x", "p": {}}}',
        b'{"seq": 5, "kind": "episode", "time": 01, "data": {"id": "x", "p": {}}}',
        b'{"seq": 5, "kind": "episode", "time": 1e3, "data": {"id": "x", "p": {}}}',
        b'{"seq": 5, "kind": "episode", "time": 1, "key": "a\\"b", "data": {"id": "x", "p": {}}}',
        b'{"seq": 5, "kind": "episode", "time": 1, "data": {"id": "x", "p": {}}]',  # not closed
        b'{"seq": 5, "kind": "episode", "time": 1, "data": {"id": "x", "p": {}} }',
        b'{"seq": 5, "kind": "riddle", "time": 1, "data": {"id": "x", "p": {}}}',
        b'{"seq": 5, "kind": "episode", "time": 1, "data": {"id": "x", "p": {}}, "seq": 6}',
        b'{"seq": 5, "kind": "outcome", "time": 1, "data": {"episode": "x", "reward": 2}}',
        b'{"kind": "episode", "seq": 5, "time": 1, "data": {"id": "x", "p": {}}}',
        b'{"seq": 5, "kind": "episode", "time": 1, "data": {"id": "\xc3\xa9", "p": {}}}',
        b'{"seq": 5, "kind": "episode", "time": 1, "data": {"id": "\xff", "p": {}}}',  # not UTF-8
    ]
    return lines


def test_every_json_store_line_decodes_as_decoding_it_whole_does() -> None:
    decoder = json_format.LineDecoder()  # one for all, as one read uses one
    for line in _lines() * 2:
        assert _event_or_error(decoder, line) == _event_or_error(_whole, line), line
    assert decoder._data._rests  # some of them were decoded by their rest


def test_a_json_store_read_gives_back_what_was_written(tmp_path: Path) -> None:
    rng = random.Random(11)
    written = [Event("episode", _episode(rng, episode_id, context), key=f"k{n}")
               for n, (episode_id, context) in enumerate((i, c) for i in _AWKWARD_IDS for c in _AWKWARD_CONTEXTS)]
    written += [Event("outcome", {"episode": f"ep_{n}", "replace": False, "reward": -0.3, "signal": "reasked"})
                for n in range(20)]
    store = open_store(str(tmp_path / "log.json"))
    try:
        store.append(written)
    finally:
        store.close()
    store = open_store(str(tmp_path / "log.json"))  # a new process reads the file
    try:
        read = store.read(0)
    finally:
        store.close()
    assert [(e.kind, e.key, e.data) for e in read] == [(e.kind, e.key, e.data) for e in written]
