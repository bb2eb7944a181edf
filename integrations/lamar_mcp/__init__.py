"""Lamar as an MCP server: recall, report, evidence, lessons and propose_lesson for any MCP client.
`build_server(Lamar(...)).run()` serves stdio (or `lamar mcp --transport http`); built on the
official `mcp` SDK (the `mcp` extra)."""

from __future__ import annotations

try:
    import mcp.server.mcpserver  # noqa: F401  (fail here, with the extra to install)
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from lamar.extras import needs_extra

    raise ImportError(needs_extra("lamar_mcp needs the MCP SDK", "mcp", exc)) from exc

from lamar_mcp.server import INSTRUCTIONS, build_server, serve_stdio
from lamar_mcp.tools import AGENT_PROVENANCE, LamarTools
from lamar_mcp.web import serve_http

__all__ = ["AGENT_PROVENANCE", "INSTRUCTIONS", "LamarTools", "build_server", "serve_http", "serve_stdio"]
