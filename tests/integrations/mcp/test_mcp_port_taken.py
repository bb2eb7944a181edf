"""`lamar mcp --transport http` on a port already taken: one line that says what to do, not a traceback."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from lamar_mcp.launch import child_env, lamar_command


def test_a_taken_port_is_one_line_that_says_what_to_do(tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([*lamar_command(), "mcp", "--transport", "http", "--port", str(port),
                               "--store", str(store)], env=child_env(), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr == (f"lamar: error: cannot listen on 127.0.0.1:{port} (Address already in use): "
                           "pick another --port, or --port 0 for a free one\n")
