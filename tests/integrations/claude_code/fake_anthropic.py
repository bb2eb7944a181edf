"""A local stand-in for the Anthropic Messages API, so the real Claude Code binary runs offline.

The first turn of a prompt that names a file to create answers with a Write tool call, as does a
prompt that says "write X.py again" (Claude Code lets a session write a file it wrote before); one that
says "hang-forever" then gets an answer that starts and never ends (until the server stops); every
other request gets a short text. Enough for Claude Code to fire its real hooks with real payloads.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
from typing import Any


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _message(blocks: list[dict[str, Any]], stop: str) -> bytes:
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "text", "text": ""}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                   "usage": {"output_tokens": 5}})
    events.append({"type": "message_stop"})
    return _sse(events)


def _texts(request: dict[str, Any]) -> tuple[str, bool]:
    """All the conversation's text, and whether a tool result is in it yet."""
    texts, has_result = [], False
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            if isinstance(block, dict):
                has_result |= block.get("type") == "tool_result"
                texts.append(str(block.get("text", "")))
    return " ".join(texts), has_result


def _last_prompt(request: dict[str, Any]) -> str:
    """The text of the messages since the last answer ("" when a tool result is among them)."""
    texts = []
    for message in reversed(request.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break  # a hook's context comes as a message of its own beside the prompt's
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
            return ""
        texts += [str(b.get("text", "")) for b in blocks if isinstance(b, dict)]
    return " ".join(texts)


class _Handler(http.server.BaseHTTPRequestHandler):
    cwd = "."
    hanging: threading.Event  # set once an answer hangs: the turn is under way
    stopped: threading.Event  # set when the server stops: a hanging answer lets go
    bodies: list[bytes]  # every request as sent, to check what reached the model

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        self.bodies.append(body)
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            request = {}
        if "count_tokens" in self.path:
            return self._json({"input_tokens": 10})
        text, has_result = _texts(request)
        wanted = re.search(r"create (\w+\.py)", text)
        again = re.search(r"write (\w+\.py) again", _last_prompt(request))
        if request.get("tools") and (again or (wanted and not has_result)):
            wanted = again or wanted
            path = f"{self.cwd}/{wanted.group(1)}"
            data = _message([{"type": "tool_use", "id": "toolu_fake1", "name": "Write",
                              "input": {"file_path": path, "content": "VALUE = 1\n"}}], "tool_use")
        elif request.get("tools") and "hang-forever" in text:
            return self._hang()
        else:
            data = _message([{"type": "text", "text": "Done."}], "end_turn")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _hang(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        start = _message([], "end_turn").split(b"\n\n")[0] + b"\n\n"  # message_start, then nothing more
        self.wfile.write(start)
        self.wfile.flush()
        self.hanging.set()
        self.stopped.wait(120)

    def _json(self, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class Server(http.server.ThreadingHTTPServer):
    """The stand-in; `hanging` is set once an answer hangs, and `shutdown` lets such an answer go."""

    hanging: threading.Event
    stopped: threading.Event
    bodies: list[bytes]  # every request as sent, to check what reached the model

    def shutdown(self) -> None:
        self.stopped.set()
        super().shutdown()


def serve(cwd: str) -> tuple[Server, str]:
    """Start the server in a thread; returns it and its base URL."""
    hanging, stopped = threading.Event(), threading.Event()
    bodies: list[bytes] = []
    handler = type("Handler", (_Handler,), {"cwd": cwd, "hanging": hanging, "stopped": stopped, "bodies": bodies})
    server = Server(("127.0.0.1", 0), handler)
    server.hanging, server.stopped, server.bodies = hanging, stopped, bodies
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
