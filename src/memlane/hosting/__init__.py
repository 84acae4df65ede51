"""What the server and the MCP server share: tenants and API keys (below both faces)."""
