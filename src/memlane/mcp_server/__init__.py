"""memlane's MCP server (official ``mcp`` SDK): ``memlane mcp`` over stdio, and ``/mcp``
(streamable HTTP) inside the REST server."""
